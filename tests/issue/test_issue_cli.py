"""``repromatrix issue parse`` as the workflow calls it: the payload from
$GITHUB_EVENT_PATH, the plan written, job outputs for the next jobs; payloads it has not
seen are a note (exit 0), an unreadable one is one line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repromatrix import cli
from repromatrix.issue.plan import read_plan


def _parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, payload: object | str) -> int:
    event = tmp_path / "event.json"
    event.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/lib")
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    return cli.main(["issue", "parse", "--out", "plan"])


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"comment": None},
        {"comment": {"body": "/repromatrix check"}},  # no issue, no id: nothing to answer
        {"comment": {"body": ["/repromatrix"]}, "issue": {"number": 1}},
        [],
        "null",
    ],
)
def test_a_payload_of_another_shape_is_a_note_and_no_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], payload
) -> None:
    assert _parse(tmp_path, monkeypatch, payload) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("ignored: ") and "Traceback" not in out
    plan = read_plan(tmp_path / "plan")
    assert not plan.jobs and not plan.replies
    assert (tmp_path / "outputs").read_text() == "jobs=0\nissues=[]\nack=0\nkeeps=0\n"


def test_an_untrusted_command_writes_one_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = {
        "action": "created",
        "issue": {"number": 3, "body": ""},
        "comment": {
            "id": 12,
            "body": "/repromatrix check --pin packaging==22.0",
            "author_association": "CONTRIBUTOR",
            "user": {"login": "mallory", "type": "User"},
        },
        "repository": {"full_name": "octo/lib"},
    }
    assert _parse(tmp_path, monkeypatch, payload) == 0
    (reply,) = read_plan(tmp_path / "plan").replies
    assert (reply.issue, reply.comment) == (3, 12) and "@mallory is not among" in reply.body
    assert (tmp_path / "outputs").read_text() == "jobs=0\nissues=[]\nack=1\nkeeps=0\n"


@pytest.mark.parametrize("text", ["{not json", "\udcff"])
def test_an_unreadable_payload_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    event = tmp_path / "event.json"
    event.write_bytes(text.encode("utf-8", "surrogateescape"))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["issue", "parse"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"repromatrix: error: event payload {event}: not JSON")
    assert "\n" not in err
