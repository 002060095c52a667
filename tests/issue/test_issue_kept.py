"""A kept case later on (issue/kept.py): a confirmed flip to passing on released
versions marks its registry entry possibly-fixed (from the post job's output, checked),
and its issue closed as fixed by a trusted person makes it a plain regression case;
each a pull request through ``gh api``, from the checkout's files, nothing run."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from support.gh_double import GhDouble

from repromatrix import cli
from repromatrix.errors import UserError
from repromatrix.github.inert import problems
from repromatrix.issue.answer import Commit, Named, Result
from repromatrix.issue.command import Command, parse_line
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.flips import Mark, night
from repromatrix.issue.keep import KEPT_MARK, case_id, registered, render_case
from repromatrix.issue.kept import (
    closed,
    mark_changes,
    marked,
    marks_output,
    read_marks,
    settle_changes,
    settled_case,
    unregistered,
)
from repromatrix.issue.plan import Job, Plan, write_plan
from repromatrix.issue.repro import code_digest
from repromatrix.issue.state import Kept, Observed, State, render
from repromatrix.verdicts.knownissues import parse_registry

URL = "https://github.com/owner/repo/issues/7"
CODE = "# repromatrix: packaging\nimport sys\nsys.exit(1)\n"
HAND_WRITTEN = "# Known upstream bugs.\n- case: test_a.py::test_x\n  when: {torch: '<3'}\n  link: https://x/1\n"
FIXED_IN = "packaging 24.2, commit abc1234def01 (#812)"


def _registry() -> str:
    return registered(HAND_WRITTEN, issue=7, url=URL, failing={"packaging": "24.1"},
                      source="cases/known_issues.yaml")  # fmt: skip


def _entries(text: str) -> dict:
    import yaml

    return {i.case: i for i in parse_registry(yaml.safe_load(text), "k").issues}


def test_a_mark_sets_possibly_fixed_and_a_settle_removes_only_the_kept_entry() -> None:
    text = _registry()
    once = marked(text, case_id(7), FIXED_IN, "k")
    twice = marked(once, case_id(7), "packaging 24.3", "k")  # a later fix replaces it
    assert _entries(once)[case_id(7)].possibly_fixed == FIXED_IN
    assert _entries(twice)[case_id(7)].possibly_fixed == "packaging 24.3"
    assert twice.count("possibly_fixed") == 1 and twice.startswith("# Known upstream bugs.")
    gone = unregistered(twice, case_id(7), "k")
    assert set(_entries(gone)) == {"test_a.py::test_x"}
    assert gone == HAND_WRITTEN  # the line keep wrote above it goes too; nothing else moves
    with pytest.raises(UserError, match=r"no entry of issues/test_issue_8\.py"):
        marked(text, case_id(8), FIXED_IN, "k")


def test_marks_from_the_post_job_are_checked() -> None:
    mark = Mark(7, case_id(7), FIXED_IN)
    assert read_marks(marks_output([mark])) == [mark] and marks_output([]) == ""
    assert read_marks("") == []
    bad = [
        ('[{"issue": 7, "case": "test_a.py::test_x", "fixed_in": "x"}]', "not a kept case"),
        (
            '[{"issue": 7, "case": "issues/test_issue_7.py::test_issue_7", '
            '"fixed_in": "x\\n- case: evil"}]',
            "is not a release",
        ),
        ("{nope", "not JSON"),
    ]
    for given, said in bad:
        with pytest.raises(UserError, match=said):
            read_marks(given)


def _flip(kept: bool, version: str) -> Mark | None:
    failing = Observed(outcome="bad", versions={"packaging": "24.1"}, at="2026-11-20")
    state = State(decisive=failing, watch=failing,
                  kept=Kept(case=case_id(7), sha256="a" * 64) if kept else None)  # fmt: skip
    job = Job(kind="watch", issue=7, line="watch", pins=["packaging=latest"], timeout=60)
    named = Named(how="bisect", package="packaging", release=version, releases=3, cells=4,
                  commit=Commit(sha="abc1234def0123", pr=812, subject="fix"))  # fmt: skip
    result = Result(issue=7, kind="watch", status="done", outcome="good", named=named,
                    versions={"packaging": version}, runs=["good", "good"])  # fmt: skip
    return night(state, job, result, "2026-11-27", "https://run").mark


def test_a_confirmed_flip_on_a_release_marks_a_kept_case_and_a_pre_release_does_not() -> None:
    assert _flip(True, "24.2") == Mark(7, case_id(7), FIXED_IN)
    assert _flip(True, "25.0rc1") is None and _flip(False, "24.2") is None


def _closing(login: str, reason: str = "completed") -> dict:
    return {"action": "closed", "sender": {"login": login},
            "issue": {"number": 7, "state_reason": reason}}  # fmt: skip


class Bot:
    """The issue's bot comment, with a kept case."""

    def comments(self, issue: int) -> list[dict]:
        state = State(kept=Kept(case=case_id(7), sha256=code_digest(CODE), by="alice"))
        return [{"id": 1, "body": render(state), "user": {"login": "github-actions[bot]"}}]


def test_only_a_trusted_close_as_fixed_settles_a_kept_case() -> None:
    roles = {"maint": "maintain", "author": "read"}
    cases = [("maint", "completed", 1), ("author", "completed", 0), ("maint", "not_planned", 0)]
    for login, reason, settles in cases:
        plan = Plan(event="issues", repository="owner/repo")
        closed(plan, _closing(login, reason), Bot(), IssueSettings(), roles.get)
        assert len(plan.settled) == settles, plan.notes


def _checkout(root: Path) -> Path:
    cases = root / "cases"
    (cases / "issues").mkdir(parents=True)
    (cases / "known_issues.yaml").write_text(_registry())
    (cases / "issues" / "test_issue_7.py").write_text(render_case(
        issue=7, url=URL, code=CODE, sha256=code_digest(CODE), pins=["packaging=latest"],
        packages=["packaging"], expected="fails", by="alice", day="2026-11-27", timeout=60,
    ))  # fmt: skip
    return cases


def test_a_settled_case_expects_a_pass_and_leaves_the_registry(tmp_path: Path) -> None:
    cases = _checkout(tmp_path)
    plan = Plan(event="issues", repository="owner/repo")
    closed(plan, _closing("maint"), Bot(), IssueSettings(), lambda login: "admin")
    (change,) = settle_changes(plan, cases, "cases", "https://run")
    case = change.files["cases/issues/test_issue_7.py"]
    assert case.startswith(KEPT_MARK) and 'EXPECTED = "passes"' in case
    assert "expected  passes: a plain regression case (its issue was closed as fixed)" in case
    assert settled_case(case, 7) == case
    assert change.files["cases/known_issues.yaml"] == HAND_WRITTEN
    # Inert but for the run's link and the reference to its issue (ours, on purpose).
    shown = change.body.replace("#7", "issue 7")
    assert [kind for kind in problems(shown) if kind != "link"] == []
    (cases / "issues" / "test_issue_7.py").write_text(case)
    (cases / "known_issues.yaml").write_text(HAND_WRITTEN)
    assert settle_changes(plan, cases, "cases", "", lambda line: None) == []  # done already


def test_issue_keep_opens_a_mark_pull_request_from_the_marks(tmp_path: Path, monkeypatch) -> None:
    cases = _checkout(tmp_path)
    write_plan(Plan(event="schedule", repository="owner/repo"), tmp_path / "plan", {})
    double = GhDouble(tmp_path / "state")
    bin_dir = double.install(tmp_path / "bin")
    for key, value in double.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    marks = marks_output([Mark(7, case_id(7), FIXED_IN)])
    argv = ["issue", "keep", "--plan", "plan", "--base", "main", "--marks", marks]
    assert cli.main(argv) == 0
    (pull,) = double.pulls()
    assert pull["title"] == f"Issue #7: possibly fixed in {FIXED_IN}" and pull["base"] == "main"
    registry = double.files(pull["head"])["cases/known_issues.yaml"]
    assert _entries(registry)[case_id(7)].possibly_fixed == FIXED_IN
    assert mark_changes([Mark(8, case_id(8), "x 1")], cases, "cases", "", lambda line: None) == []
    assert cli.main([*argv[:-1], '[{"issue": 7}]']) == 2  # one line, not a traceback


def test_the_docs_life_of_an_issue_shows_commands_that_parse() -> None:
    """docs/issue-repro.md's "From an issue to a standing case": each comment command
    it shows parses (its `repromatrix ...` lines: tests/test_documented_commands.py)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "issue-repro.md").read_text()
    section = doc[doc.index("## From an issue to a standing case") :].split("\n## ", 1)[0]
    shown = {line.strip().strip("`") for line in section.splitlines()}
    shown |= set(re.findall(r"`(/repromatrix [^`]+)`", section))
    commands = sorted(line for line in shown if line.startswith("/repromatrix "))
    assert len(commands) >= 3, commands
    for line in commands:
        assert isinstance(parse_line(line), Command), line
