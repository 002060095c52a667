"""An issue's repro kept as a case (issue/keep.py): only the approved repro, checked
against its digest at parse and again when the files are written; the case file holds
the repro byte for byte as literals (never run to write it), refuses a tampered REPRO,
and runs it as the watch does; the registry entry is known-broken with the issue's link;
one pull request through ``gh api``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.gh_double import GhDouble

from repromatrix import cli
from repromatrix.errors import UserError
from repromatrix.github.client import PullRequests
from repromatrix.github.inert import problems
from repromatrix.issue.bot import memory
from repromatrix.issue.command import Command, Refusal, parse_line
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.event import comment_plan, issues_plan
from repromatrix.issue.keep import (
    Change,
    acknowledge_keeps,
    case_id,
    changes,
    checked_keeps,
    open_pulls,
    render_case,
)
from repromatrix.issue.plan import write_plan
from repromatrix.issue.repro import code_digest
from repromatrix.issue.state import Approval, Observed, State, is_bot_comment, render
from repromatrix.verdicts.knownissues import parse_registry

SERVER = "https://github.com"
# Hostile to a template: quotes of every kind, braces, a backslash.
CODE = '# repromatrix: packaging\nimport sys\ns = """x""" + \'\'\'{y}\'\'\' + "\\\\"\nsys.exit(0)\n'
ISSUE_BODY = f"It breaks.\n\n```python\n{CODE}```\n"


def _comment(body: str = "/repromatrix keep") -> dict:
    return {
        "action": "created",
        "issue": {"number": 7, "body": ISSUE_BODY, "title": "t"},
        "comment": {"id": 1001, "body": body, "author_association": "OWNER",
                    "user": {"login": "alice", "type": "User"}},
        "repository": {"full_name": "octo/lib"},
    }  # fmt: skip


class Tracker:
    """IssueComments over dicts, with the bot comment of an issue whose watch saw it fail."""

    def __init__(self, approved: str | None) -> None:
        seen = Observed(outcome="bad", versions={"packaging": "24.0"}, at="2026-11-20")
        state = State(decisive=seen, watch=seen)
        if approved is not None:
            state.approved = Approval(sha256=approved, by="alice", how="label")
        self.by_issue: dict[int, list[dict]] = {7: []}
        self.create(7, render(state))
        self.reactions: list[tuple[int, str]] = []

    def comments(self, issue: int) -> list[dict]:
        return self.by_issue.get(issue, [])

    def create(self, issue: int, body: str) -> int:
        made = 50 + sum(len(c) for c in self.by_issue.values())
        bot = {"login": "github-actions[bot]", "type": "Bot"}
        self.by_issue[issue].append({"id": made, "body": body, "user": bot})
        return made

    def edit(self, comment: int, body: str) -> None:
        raise AssertionError("a keep is written the safe way: a new bot comment")

    def delete(self, comment: int) -> None:
        self.by_issue[7] = [c for c in self.by_issue[7] if c["id"] != comment]

    @property
    def replies(self) -> list[str]:
        return [c["body"] for c in self.by_issue[7] if not is_bot_comment(c["body"])]

    def react(self, comment: int, content: str) -> None:
        self.reactions.append((comment, content))


def _planned(approved: str | None, folder: Path):
    plan, repros = comment_plan(_comment(), IssueSettings(), lambda job, repro: None, "octo/lib")
    client = Tracker(approved)
    checked_keeps(plan, client, IssueSettings(), SERVER, repros)
    write_plan(plan, folder, repros)
    return plan, client


def test_keep_is_a_command_that_takes_nothing_after_it() -> None:
    assert isinstance(parse_line("/repromatrix keep"), Command)
    refused = parse_line("/repromatrix keep now")
    assert isinstance(refused, Refusal) and "keep takes nothing after it" in refused.reason
    unknown = parse_line("/repromatrix frob")
    assert isinstance(unknown, Refusal) and "approve or keep" in unknown.reason


@pytest.mark.parametrize("approved", [None, "0" * 64])
def test_only_the_approved_repro_is_kept(tmp_path: Path, approved: str | None) -> None:
    plan, _client = _planned(approved, tmp_path)
    assert plan.keeps == []
    assert not (tmp_path / "repro-7.py").exists()  # the plan holds no repro it will not keep
    (reply,) = plan.replies
    assert reply.comment == 1001 and "approve" in reply.body


def test_an_approved_keep_is_filled_recorded_and_acknowledged(tmp_path: Path) -> None:
    plan, client = _planned(code_digest(CODE), tmp_path)
    (keep,) = plan.keeps
    assert (keep.url, keep.expected) == (f"{SERVER}/octo/lib/issues/7", "fails")
    assert keep.failing == {"packaging": "24.0"} and keep.pins == ["packaging=latest"]
    acknowledge_keeps(plan, client, say=lambda line: None)
    state, _ids = memory(client.by_issue[7], plan.bots)
    assert state.kept is not None and state.kept.sha256 == code_digest(CODE)
    assert state.kept.case == case_id(7) == "issues/test_issue_7.py::test_issue_7"
    assert client.reactions == [(1001, "+1")]
    (reply,) = client.replies
    assert "keep job opens the pull request adding it (written from the approved" in reply
    assert [kind for kind in problems(reply) if kind != "link"] == []


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_case_file_holds_the_repro_exactly_and_runs_it(tmp_path: Path) -> None:
    plan, _client = _planned(code_digest(CODE), tmp_path / "plan")
    cases = tmp_path / "cases"
    (found,) = changes(plan, tmp_path / "plan", cases, "https://run", "cases")
    assert set(found.files) == {"cases/issues/test_issue_7.py", "cases/known_issues.yaml"}
    assert not list(tmp_path.glob("**/*.pyc"))  # written, never imported or run
    case = tmp_path / "test_issue_7.py"
    case.write_text(found.files["cases/issues/test_issue_7.py"], encoding="utf-8")
    module = _load(case)
    assert module.REPRO == CODE and code_digest(CODE) == module.SHA256
    assert module.ISSUE == "https://github.com/octo/lib/issues/7"
    assert module.PINS == ("packaging=latest",) and module.EXPECTED == "fails"
    module.test_issue_7(tmp_path)  # CODE exits 0: the test passes
    module.REPRO = CODE.replace("exit(0)", "exit(3)")
    with pytest.raises(AssertionError, match="not the repro kept"):
        module.test_issue_7(tmp_path)
    registry = yaml.safe_load(found.files["cases/known_issues.yaml"])
    (entry,) = parse_registry(registry, "known_issues.yaml").issues
    assert entry.case == case_id(7) and entry.link == "https://github.com/octo/lib/issues/7"
    assert [(name, str(spec)) for name, spec in entry.when] == [("packaging", ">=24.0")]


def test_the_case_runs_the_repro_as_the_watch_does(tmp_path: Path) -> None:
    """Exit 1 fails the test, 125 skips it (through pytest, as the nightly collects it)."""
    runs = (("import sys\nsys.exit(1)\n", "1 failed"), ("raise SystemExit(125)\n", "1 skipped"))
    for code, expected in runs:
        text = render_case(
            issue=8, url="https://github.com/octo/lib/issues/8", code=code,
            sha256=code_digest(code), pins=[], packages=[], expected="fails", by="alice",
            day="2026-11-27", timeout=60,
        )  # fmt: skip
        folder = tmp_path / expected.split()[1]
        folder.mkdir()
        (folder / "test_issue_8.py").write_text(text, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN", str(folder)],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert expected in done.stdout, done.stdout


def test_a_plan_whose_repro_was_swapped_keeps_nothing(tmp_path: Path) -> None:
    plan, _client = _planned(code_digest(CODE), tmp_path)
    (tmp_path / "repro-7.py").write_text("import os\nos.system('curl evil')\n")
    with pytest.raises(UserError, match="not the approved one; nothing kept"):
        changes(plan, tmp_path, tmp_path / "cases", "", "cases")


def test_a_header_value_that_could_break_the_file_is_refused() -> None:
    with pytest.raises(UserError, match="cannot go into a case's header"):
        render_case(
            issue=8, url="https://github.com/o/r/issues/8", code="x", sha256=code_digest("x"),
            pins=['torch==2.13.0"""; import os'], packages=[], expected="fails", by="alice",
            day="2026-11-27", timeout=60,
        )  # fmt: skip


class Pulls:
    def __init__(self, exists: bool = False) -> None:
        self.exists = exists
        self.done: list[tuple] = []

    def head(self, branch: str) -> str:
        return "abc123"

    def branch(self, name: str, sha: str) -> None:
        if self.exists:
            raise UserError("gh api git/refs failed: Reference already exists")
        self.done.append(("branch", name, sha))

    def put(self, branch: str, path: str, text: str, message: str) -> None:
        self.done.append(("put", branch, path))

    def open(self, *, base: str, branch: str, title: str, body: str) -> str:
        self.done.append(("open", base, branch))
        return "https://github.com/octo/lib/pull/9"


def test_one_pull_request_per_keep_and_an_open_one_is_not_a_failure() -> None:
    change = Change("repromatrix/keep-7-abc", "Keep", "body", {"cases/a.py": "x", "cases/b": "y"})
    pulls, said = Pulls(), []
    assert open_pulls([change], pulls, "main", said.append) == 0
    assert pulls.done == [
        ("branch", "repromatrix/keep-7-abc", "abc123"),
        ("put", "repromatrix/keep-7-abc", "cases/a.py"),
        ("put", "repromatrix/keep-7-abc", "cases/b"),
        ("open", "main", "repromatrix/keep-7-abc"),
    ]
    assert said == ["opened https://github.com/octo/lib/pull/9: Keep"]
    again = Pulls(exists=True)
    assert open_pulls([change], again, "main", said.append) == 0 and again.done == []


def test_pull_requests_go_through_gh_api(tmp_path: Path, monkeypatch) -> None:
    double = GhDouble(tmp_path / "state")
    bin_dir = double.install(tmp_path / "bin")
    for key, value in double.env().items():
        monkeypatch.setenv(key, value)
    double.set_api_response("repos/owner/repo/git/ref/heads/main", {"object": {"sha": "f00d"}})
    double.set_api_response("repos/owner/repo/pulls", {"html_url": "https://x/pull/3"})
    pulls = PullRequests("owner/repo", gh=str(bin_dir / "gh"))
    change = Change("repromatrix/keep-7-abc", "Keep #7", "the body", {"cases/issues/t.py": "x"})
    assert open_pulls([change], pulls, "main", lambda line: None) == 0
    endpoints = [call["argv"][1] for call in double.calls_to("api")]
    assert endpoints == [
        "repos/owner/repo/git/ref/heads/main",
        "repos/owner/repo/git/refs",
        "repos/owner/repo/contents/cases/issues/t.py?ref=repromatrix%2Fkeep-7-abc",
        "repos/owner/repo/contents/cases/issues/t.py",
        "repos/owner/repo/pulls",
    ]
    methods = [
        call["argv"][3] if len(call["argv"]) > 3 else "GET" for call in double.calls_to("api")
    ]
    assert methods == ["GET", "POST", "GET", "PUT", "POST"]


def test_the_keep_label_put_by_a_trusted_person_plans_a_keep() -> None:
    event = {
        "action": "labeled", "label": {"name": "repromatrix:keep"},
        "issue": {"number": 7, "body": ISSUE_BODY}, "sender": {"login": "bob"},
    }  # fmt: skip
    plan, repros = issues_plan(event, IssueSettings(), lambda login: "write", "octo/lib")
    (keep,) = plan.keeps
    assert (keep.comment, keep.sha256, repros) == (None, code_digest(CODE), {7: CODE})
    stranger, repros = issues_plan(event, IssueSettings(), lambda login: "read", "octo/lib")
    assert stranger.keeps == [] and repros == {}


def test_issue_keep_opens_the_pull_request_from_the_plan(tmp_path: Path, monkeypatch) -> None:
    _plan, _client = _planned(code_digest(CODE), tmp_path / "plan")
    double = GhDouble(tmp_path / "state")
    bin_dir = double.install(tmp_path / "bin")
    for key, value in double.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    double.set_api_response("repos/octo/lib/git/ref/heads/main", {"object": {"sha": "f00d"}})
    double.set_api_response("repos/octo/lib/pulls", {"html_url": "https://x/pull/3"})
    (tmp_path / "cases").mkdir()
    monkeypatch.chdir(tmp_path)
    assert cli.main(["issue", "keep", "--plan", "plan", "--base", "main"]) == 0
    puts = [c["argv"][1] for c in double.calls_to("api") if "PUT" in c["argv"]]
    assert puts == [
        "repos/octo/lib/contents/cases/issues/test_issue_7.py",
        "repos/octo/lib/contents/cases/known_issues.yaml",
    ]
    assert cli.main(["issue", "keep", "--plan", "plan", "--base", "main", "--cases", ".."]) == 2
