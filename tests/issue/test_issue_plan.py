"""The parse job's checks against a package index (a file:// PEP 503 index built here),
the plan read back validated, and the run job's environment without tokens."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.issue.command import Command, parse_comment
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.event import comment_plan, preflight_in
from repromatrix.issue.offered import Place, preflight
from repromatrix.issue.plan import Plan, make_job, read_plan, write_plan
from repromatrix.issue.repro import find_repro
from repromatrix.issue.run import OutOfTime, deadline, keep_only_allowed

REPRO = "```python\n# repromatrix: packaging\nimport packaging\n```\n"
RELEASES = ["20.9", "21.0", "21.3", "22.0", "23.0", "23.1", "23.2", "24.0"]


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    page = tmp_path / "simple" / "packaging"
    page.mkdir(parents=True)
    anchors = [
        f'<a href="../../files/packaging-{v}-py3-none-any.whl#sha256=00">'
        f"packaging-{v}-py3-none-any.whl</a>"
        for v in RELEASES
    ]
    (page / "index.html").write_text("<html><body>" + "<br/>".join(anchors) + "</body></html>")
    for name in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("UV_FIND_LINKS", raising=False)
    monkeypatch.setenv("PIP_INDEX_URL", (tmp_path / "simple").as_uri() + "/")
    return tmp_path


def _job(line: str, folder: Path, settings: IssueSettings):
    command = parse_comment(line)
    assert isinstance(command, Command), command
    repro = find_repro(REPRO, "issue")
    job = make_job(command, issue=5, comment=9, author="alice", repro=repro, settings=settings)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / job.repro_name()).write_text(repro.code if repro else "")
    return job


def test_a_sweep_within_the_limit_passes_preflight(index: Path) -> None:
    settings = IssueSettings(max_releases=3)
    job = _job("/repromatrix sweep packaging 21.0..22.0", index / "plan", settings)
    preflight(job, Place(index / "plan", index / "cases", index / "out"), settings)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "/repromatrix sweep packaging 20.0..24.0",
            "packaging has 8 releases from 20.0 to 24.0 (all); a sweep here tests at most 3: "
            "narrow the range or add --releases latest-patch",
        ),
        ("/repromatrix sweep packaging 30.0..31.0", "packaging: no release from 30.0 to 31.0"),
        ("/repromatrix bisect packaging 21.3 22.5", "packaging 22.5: not a release"),
        ("/repromatrix sweep nosuchpkg 1.0..2.0", "nosuchpkg"),
        ("/repromatrix check --case test_nothing.py::test_x", "--cases"),
    ],
)
def test_what_the_index_refuses_is_one_line(index: Path, line: str, said: str) -> None:
    settings = IssueSettings(max_releases=3)
    job = _job(line, index / "plan", settings)
    with pytest.raises(UserError) as raised:
        preflight(job, Place(index / "plan", index / "cases", index / "out"), settings)
    assert said in str(raised.value)


def test_check_without_any_package_is_refused(index: Path) -> None:
    settings = IssueSettings()
    command = parse_comment("/repromatrix check")
    assert isinstance(command, Command)
    job = make_job(command, issue=5, comment=9, author="a", repro=None, settings=settings)
    with pytest.raises(UserError, match="check needs the packages to install"):
        preflight(job, Place(index, index, index / "out"), settings)


def test_a_refused_sweep_becomes_a_reply_and_the_plan_reads_back(index: Path) -> None:
    settings = IssueSettings(max_releases=3)
    payload = {
        "action": "created",
        "issue": {"number": 5, "body": REPRO},
        "comment": {
            "id": 9,
            "body": "/repromatrix sweep packaging 20.0..24.0",
            "author_association": "MEMBER",
            "user": {"login": "alice", "type": "User"},
        },
    }
    folder = index / "plan"
    check = preflight_in(folder, index / "cases", settings)
    plan, repros = comment_plan(payload, settings, check, "octo/lib")
    write_plan(plan, folder, repros)
    again = read_plan(folder)
    assert again == plan and not again.jobs
    (reply,) = again.replies
    assert "a sweep here tests at most 3" in reply.body and "Accepted syntax:" in reply.body
    payload["comment"]["body"] = "/repromatrix sweep packaging 21.0..22.0"  # type: ignore[index]
    plan, repros = comment_plan(payload, settings, check, "octo/lib")
    write_plan(plan, folder, repros)
    (job,) = read_plan(folder).jobs
    assert (folder / job.repro_name()).read_text().startswith("# repromatrix: packaging")


@pytest.mark.parametrize(
    "change",
    [
        {"jobs": [{"issue": 0, "kind": "check", "line": "x", "timeout": 1}]},
        {"jobs": [{"issue": 1, "kind": "rm -rf", "line": "x", "timeout": 1}]},
        {"repository": "octo/lib; curl evil"},
        {"extra": 1},
    ],
)
def test_a_plan_that_is_not_what_parse_writes_is_refused(tmp_path: Path, change: dict) -> None:
    data = Plan(event="issue_comment", repository="octo/lib").model_dump(by_alias=True)
    data.update(change)
    (tmp_path / "plan.json").write_text(json.dumps(data))
    with pytest.raises(UserError) as raised:
        read_plan(tmp_path)
    assert str(tmp_path / "plan.json") in str(raised.value)


def test_the_run_job_keeps_only_its_allowlist_before_any_repro_runs() -> None:
    environ = {
        "GH_TOKEN": "t",
        "GITHUB_TOKEN": "t",
        "ACTIONS_RUNTIME_TOKEN": "t",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "u",
        "ACTIONS_RESULTS_URL": "u",
        "MY_SECRET": "s",
        "PIP_INDEX_URL": "https://pypi.org/simple",
        "PATH": "/usr/bin",
        "GITHUB_REPOSITORY": "octo/lib",
    }
    removed = keep_only_allowed(environ)
    assert set(environ) == {"PIP_INDEX_URL", "PATH"}
    assert "GH_TOKEN" in removed and "ACTIONS_RUNTIME_TOKEN" in removed


def test_a_run_past_its_minutes_is_stopped_with_its_children() -> None:
    started = time.monotonic()
    with pytest.raises(OutOfTime), deadline(0.5):
        procs.run(["sleep", "30"], timeout=60)
    assert time.monotonic() - started < 10
    assert not procs.cancelled()  # the next run starts clean
    assert subprocess.run(["true"]).returncode == 0
