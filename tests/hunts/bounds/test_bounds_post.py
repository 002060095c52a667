"""``repromatrix bounds-post``: a bounds record on GitHub through the gh double: the
tracking issue opened, updated and closed; the pull-request comment edited in place,
never someone else's look-alike; quoted text inert; a forged record one line;
reports/bounds-cpu exactly what the code renders from its records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.gh_double import GhDouble

from repromatrix.cli import app
from repromatrix.github.hidden import hidden
from repromatrix.hunts.bounds.record import BoundsRecord, DependencyRecord, EndRecord, read_record
from repromatrix.hunts.bounds.report import write
from repromatrix.hunts.bounds.tracking import tracking_action
from repromatrix.outcomes import BoundVerdict


def record(wrong: bool, name: str = "mylib") -> BoundsRecord:
    floor = EndRecord(
        verdict=BoundVerdict.FLOOR_TOO_LOW if wrong else BoundVerdict.OK,
        tested="1.0", works="1.2" if wrong else "1.0", outcome="bad" if wrong else "good",
        reason="1.0 fails (exit 1: @octocat see #12 <img src=x>)",
    )  # fmt: skip
    dependency = DependencyRecord(
        name="bf-a", declared=">=1.0", verdict=floor.verdict,
        suggested=">=1.2" if wrong else ">=1.0", floor=floor,
    )  # fmt: skip
    return BoundsRecord(
        target=f"{name}==1.0", name=name, version="1.0", python="3.11", cells=4,
        status="done", dependencies=[dependency], command="repromatrix bounds mylib==1.0",
    )  # fmt: skip


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GhDouble:
    double = GhDouble(tmp_path / "github")
    bin_dir = double.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    for key, value in double.env().items():
        monkeypatch.setenv(key, value)
    return double


def post(tmp_path: Path, one: BoundsRecord, *args: str) -> int:
    """One run's artifact (a folder holding the hunt's folder), posted."""
    artifact = tmp_path / f"artifact-{len(list(tmp_path.glob('artifact-*')))}"
    write(artifact / f"{one.name}-1.0", one)
    return app.main(["bounds-post", str(artifact), *args])


def test_the_tracking_issue_opens_updates_and_closes(tmp_path: Path, gh: GhDouble) -> None:
    assert post(tmp_path, record(wrong=True), "--tracking", "--run-url", "https://x/run/1") == 0
    [issue] = gh.issues()
    assert issue["state"] == "open" and issue["labels"] == ["bounds"]
    assert issue["title"] == "Declared bounds of mylib are wrong"
    assert issue["body"].startswith("<!-- repromatrix:bounds ")
    assert "floor-too-low" in issue["body"] and "`>=1.2`" in issue["body"]
    # The quoted error shows as code; outside code nothing mentions, links or renders.
    assert "`1.0 fails (exit 1: @octocat see #12 <img src=x>)`" in issue["body"]
    outside = re.sub(r"`[^`\n]*`", "", issue["body"])
    assert "@octocat" not in outside and "<img" not in outside and "#12" not in outside

    # Still wrong a week later: the same issue, its body updated.
    assert post(tmp_path, record(wrong=True), "--tracking") == 0
    assert len(gh.issues()) == 1 and len(gh.calls_to("issue", "edit")) == 1
    # Another target's record opens its own issue.
    assert post(tmp_path, record(wrong=True, name="other"), "--tracking") == 0
    assert len(gh.issues()) == 2

    # The bounds hold again: commented and closed; nothing left open for mylib.
    assert post(tmp_path, record(wrong=False), "--tracking") == 0
    mine = next(i for i in gh.issues() if "mylib" in i["title"])
    assert mine["state"] == "closed"
    assert "Every declared bound of mylib holds again" in mine["comments"][-1]
    # Holding with nothing open: nothing to do.
    assert post(tmp_path, record(wrong=False), "--tracking") == 0
    assert len(gh.calls_to("issue", "create")) == 2


def test_the_pull_request_comment_is_edited_in_place(tmp_path: Path, gh: GhDouble) -> None:
    gh.add_issue(7, title="a pull request")
    # Someone's look-alike: never edited (the token edits only its own comments).
    forged = hidden("bounds", {"target": "mylib"})
    gh.add_comment(7, f"{forged}\nfake", login="mallory")
    assert post(tmp_path, record(wrong=True), "--comment", "7", "--repo", "owner/repo") == 0
    assert post(tmp_path, record(wrong=False), "--comment", "7", "--repo", "owner/repo") == 0
    bodies = gh.comments(7)
    mine = [c for c in bodies if c["user"]["login"] == "github-actions[bot]"]
    assert len(mine) == 1, "one comment, edited in place"
    assert "every declared bound holds" in mine[0]["body"]
    assert any(c["body"].endswith("fake") for c in bodies)


def test_the_comment_edited_is_only_the_named_bots(tmp_path: Path, gh: GhDouble, capsys) -> None:
    """--bot names the workflows' identity (a GitHub App's, say): a comment by any other
    login, github-actions[bot] included, is then a look-alike, never edited."""
    gh.add_issue(7, title="a pull request")
    marker = hidden("bounds", {"target": "mylib"})
    other = gh.add_comment(7, f"{marker}\nold", login="github-actions[bot]")
    args = ("--comment", "7", "--repo", "owner/repo", "--bot", "repro-app[bot]")
    assert post(tmp_path, record(wrong=True), *args) == 0
    by_id = {c["id"]: c["body"] for c in gh.comments(7)}
    assert len(by_id) == 2 and by_id[other].endswith("old")
    assert "commented the bounds table on #7" in capsys.readouterr().out
    # A login that is no bot's is one line, exit 2, nothing posted.
    calls = len(gh.calls())
    bad = ("--comment", "7", "--repo", "o/r", "--bot", "eve")
    assert post(tmp_path, record(wrong=True), *bad) == 2
    err = capsys.readouterr().err
    assert "--bot 'eve': not a bot login (NAME[bot])" in err and len(err.strip().splitlines()) == 1
    assert len(gh.calls()) == calls


def test_tracking_decisions() -> None:
    issue = {"number": 3, "state": "OPEN", "body": "<!-- not ours -->"}
    assert tracking_action(record(True), [issue]).verb == "open"
    running = record(True).model_copy(update={"status": "interrupted"})
    assert tracking_action(running, []).verb == "none", "a partial record changes nothing"


FORGED = {"target": "x", "name": "x", "python": "3.11"}


@pytest.mark.parametrize(
    ("forged", "said"),
    [
        ({**FORGED, "python": 3}, "bounds.json: python: Input should be a valid string"),
        (
            {**FORGED, "runs": [{"cell": 1, "outcome": "bad", "signature": {"frames": 3}}]},
            "bounds.json: runs.0.signature: Value error, not a signature",
        ),
        ({**FORGED, "dependencies": [{"name": "a", "declared": "", "verdict": "great",
          "suggested": ""}]}, "bounds.json: dependencies.0.verdict: Input should be"),
    ],
)  # fmt: skip
def test_a_forged_record_is_one_line(
    tmp_path: Path, gh: GhDouble, capsys, forged: dict, said: str
) -> None:
    folder = tmp_path / "artifact" / "x"
    folder.mkdir(parents=True)
    (folder / "bounds.json").write_text(json.dumps(forged))
    assert app.main(["bounds-post", str(tmp_path / "artifact"), "--tracking"]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert gh.calls() == []


COMMITTED = sorted((Path(__file__).parents[3] / "reports").glob("bounds-*/*/bounds.json"))


@pytest.mark.parametrize("committed", COMMITTED, ids=lambda path: path.parent.name)
def test_the_committed_reports_are_what_the_code_writes_from_their_record(
    tmp_path: Path, committed: Path
) -> None:
    """reports/bounds-cpu is a real run's output: its summary.md and pyproject.diff are
    what report.write renders from its bounds.json today, byte for byte."""
    write(tmp_path, read_record(committed))
    kept = sorted(p.name for p in committed.parent.iterdir() if p.is_file())
    assert kept == sorted(p.name for p in tmp_path.iterdir())
    for name in kept:
        assert (tmp_path / name).read_text() == (committed.parent / name).read_text(), name


def test_there_are_committed_reports() -> None:
    assert len(COMMITTED) >= 3
