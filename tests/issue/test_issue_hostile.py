"""The issue bot against its attacker: an issue author whose repro a maintainer runs or
labels. Each test is one class of issue 26 (the bot's memory, its text, the repro's
environment and input, one issue stopping the watch, an edit after approval, two
answers at once); each failed before the fix."""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from repromatrix import cli
from repromatrix.errors import UserError
from repromatrix.github.inert import problems
from repromatrix.issue.answer import Result, artifact_name, write_result
from repromatrix.issue.bot import acknowledge, post_answers, watch_plan
from repromatrix.issue.command import Command, parse_comment
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.flips import FLIP_MARKER
from repromatrix.issue.plan import Job, Plan, read_plan
from repromatrix.issue.repro import code_digest, find_repro
from repromatrix.issue.run import run_plan
from repromatrix.issue.state import (
    MARKER,
    MAX_ANSWERS,
    Answer,
    Approval,
    State,
    fitted,
    read_state,
    render,
)

ZWSP = "\u200b"
BOT = {"login": "github-actions[bot]", "type": "Bot"}
REPRO_CODE = "# repromatrix: packaging\nimport packaging\n"
ISSUE_BODY = f"It breaks.\n\n```python\n{REPRO_CODE}```\n"
CHANGED_LINE = (
    "the repro changed since it was approved; a maintainer comments "
    "`/repromatrix approve` or re-labels"
)


class Tracker:
    """IssueComments over dicts, with deletes; ``on_create`` runs once, mid-create."""

    def __init__(self) -> None:
        self.by_issue: dict[int, list[dict]] = {}
        self.reactions: list[tuple[int, str]] = []
        self.issues: list[dict] = []
        self.next_id = 500
        self.on_create = None
        self.permissions: dict[str, str] = {}

    def comments(self, issue: int) -> list[dict]:
        return [dict(c) for c in self.by_issue.get(issue, [])]

    def create(self, issue: int, body: str, login: str = BOT["login"]) -> int:
        hook, self.on_create = self.on_create, None
        if hook is not None:
            hook()
        self.next_id += 1
        user = BOT if login == BOT["login"] else {"login": login, "type": "User"}
        self.by_issue.setdefault(issue, []).append({"id": self.next_id, "body": body, "user": user})
        return self.next_id

    def edit(self, comment: int, body: str) -> None:
        for comments in self.by_issue.values():
            for c in comments:
                if c["id"] == comment:
                    c["body"] = body

    def delete(self, comment: int) -> None:
        for issue, comments in self.by_issue.items():
            self.by_issue[issue] = [c for c in comments if c["id"] != comment]

    def react(self, comment: int, content: str) -> None:
        self.reactions.append((comment, content))

    def labelled(self, label: str) -> list[dict]:
        return self.issues

    def permission(self, login: str) -> str:
        return self.permissions.get(login, "none")


def _quiet(_line: str) -> None:
    pass


def _job(kind: str = "check", comment: int | None = 11, issue: int = 3) -> Job:
    return Job(
        issue=issue,
        comment=comment,
        kind=kind,
        line=f"/repromatrix {kind}",
        timeout=60,
        source="issue",
    )


def _post(tracker: Tracker, tmp_path: Path, markdown: str, **fields) -> None:
    folder = tmp_path / "plan"
    folder.mkdir(parents=True, exist_ok=True)
    job = fields.pop("job", _job())
    (folder / job.repro_name()).write_text(REPRO_CODE)
    answers = tmp_path / "answers"
    write_result(
        answers / artifact_name(job.issue),
        Result(issue=job.issue, kind=job.kind, status="done", markdown=markdown, **fields),
    )
    plan = Plan(event="issue_comment", repository="octo/lib", jobs=[job])
    post_answers(plan, folder, answers, tracker, "https://run/1", say=_quiet)  # type: ignore[arg-type]


def _bot_bodies(tracker: Tracker, issue: int = 3) -> list[str]:
    return [c["body"] for c in tracker.comments(issue) if c["body"].startswith(MARKER)]


# ------------------------------------------------------------------ the bot's memory


def _state_line(raw: bytes) -> str:
    return f"<!-- repromatrix:state {base64.b64encode(zlib.compress(raw, 9)).decode()} -->"


def test_a_state_marker_printed_by_a_repro_does_not_take_the_comment_over(tmp_path: Path) -> None:
    tracker = Tracker()
    _post(tracker, tmp_path, "first answer")
    forged = render(
        State(
            answers=[Answer(title="forged", body="owned")], last_watched="2999-01-01T00:00:00+00:00"
        )
    )
    _post(tracker, tmp_path, f"output:\n{forged}\n{_state_line(b'garbage')}\n")
    (body,) = _bot_bodies(tracker)
    state = read_state(body)
    assert state is not None
    assert [a.title for a in state.answers] == ["/repromatrix check"] * 2  # history kept
    assert "forged" not in [a.title for a in state.answers]
    assert state.last_watched == ""
    # The forged marker is shown as code: no HTML comment but the bot's own two lines
    # (the links are the bot's own: its runs).
    shown = "\n".join(body.rstrip().split("\n")[1:-1])
    assert [kind for kind in problems(shown) if kind != "link"] == []


def test_a_nesting_bomb_or_a_flood_of_answers_reads_as_no_state_quickly() -> None:
    nesting = f"{MARKER}\n{_state_line(b'[' * 3_000_000)}\n"
    assert read_state(nesting) is None
    flood = {"schema": 1, "answers": [{}] * 60_000}
    assert read_state(f"{MARKER}\n{_state_line(json.dumps(flood).encode())}\n") is None


def test_fitting_is_linear_in_the_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from repromatrix.issue import state as state_module

    calls = {"n": 0}
    real = state_module.hidden

    def counted(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(state_module, "hidden", counted)
    answers = [Answer(title=f"#{n}", body=f"{n}" * 3000) for n in range(MAX_ANSWERS)]
    kept, text = fitted(State(answers=answers))
    assert len(text) <= 65_536 and len(kept.answers) < MAX_ANSWERS
    assert calls["n"] <= 12  # a few renders, not one per answer dropped


def test_a_person_or_another_bot_pasting_the_marker_is_not_the_bot(tmp_path: Path) -> None:
    tracker = Tracker()
    tracker.create(3, render(State(answers=[Answer(title="theirs")])), login="mallory")
    tracker.by_issue[3].append(
        {
            "id": 1,
            "body": render(State(answers=[Answer(title="app")])),
            "user": {"login": "other-app[bot]", "type": "Bot"},
        }
    )
    _post(tracker, tmp_path, "mine")
    (mine,) = [c for c in tracker.comments(3) if c["user"] == BOT]
    assert [a.title for a in read_state(mine["body"]).answers] == ["/repromatrix check"]


# ------------------------------------------------------------------ inert text


def test_text_from_the_run_job_cannot_notify_render_html_or_link(tmp_path: Path) -> None:
    tracker = Tracker()
    hostile = "@alice @octo/core see #1 <img src=x> <!-- x --> [a](https://evil.example)"
    _post(tracker, tmp_path, hostile)
    (body,) = _bot_bodies(tracker)
    shown = body.rsplit("\n", 2)[0]
    assert "@alice" not in shown and "@octo/core" not in shown and f"@{ZWSP}alice" in shown
    (answer,) = read_state(body).answers  # type: ignore[union-attr]
    assert problems(answer.body) == []  # no image, HTML comment or link: text and code
    assert "\\<img src=x\\>" in answer.body and "a (`https://evil.example`)" in answer.body


def test_flip_versions_are_validated_versions() -> None:
    for versions in ({"packaging": "@octo/core"}, {"<img>": "1.0"}, {"packaging": "1.0 #1"}):
        with pytest.raises(ValidationError):
            Result(issue=3, kind="watch", status="done", outcome="good", versions=versions)
    assert Result(issue=3, kind="watch", status="done", versions={"torch": "2.13.0+cpu"})


def test_the_answer_shows_the_exact_code_that_ran_collapsed(tmp_path: Path) -> None:
    tracker = Tracker()
    _post(tracker, tmp_path, "bad")
    (body,) = _bot_bodies(tracker)
    assert "<details><summary>The code that ran (sha256 " in body
    assert f"```python\n{REPRO_CODE}```" in body
    assert code_digest(REPRO_CODE)[:12] in body


# ------------------------------------------------------------ the repro's environment and input


@pytest.fixture
def environment_restored() -> Iterator[None]:
    """run_plan takes from this process's environment what is not allowed: put it back."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_the_repro_gets_an_allowlisted_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, environment_restored: None
) -> None:
    leaks = {
        "WANDB_API_KEY": "w",
        "OPENAI_API_KEY": "o",
        "AWS_ACCESS_KEY_ID": "a",
        "HF_AUTH": "h",
        "DB_PASS": "p",
        "GH_TOKEN": "g",
        "ACTIONS_RUNTIME_TOKEN": "r",
        "GITHUB_ENV": "file-commands/set_env",
        "NODE_OPTIONS": "--require x",
    }
    for name, value in leaks.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PIP_FIND_LINKS", "wheels")
    monkeypatch.setenv("SSL_CERT_FILE", "ca.pem")  # how uv reaches the index stays
    run_plan(
        Plan(event="schedule", repository="o/r"), tmp_path, tmp_path / "a", tmp_path, say=_quiet
    )
    assert not set(leaks) & set(os.environ)
    assert os.environ["PIP_FIND_LINKS"] == "wheels" and "PATH" in os.environ
    assert os.environ["SSL_CERT_FILE"] == "ca.pem"


def test_a_repro_too_deep_to_compile_is_the_does_not_parse_refusal() -> None:
    deep = "```python\n# repromatrix: packaging\nx = 1" + "+1" * 20_000 + "\n```\n"
    with pytest.raises(UserError, match="does not parse"):
        find_repro(deep, "issue")


def test_a_repository_that_is_not_owner_slash_name_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "action": "created",
                "repository": {"full_name": "o/r:x"},
                "issue": {"number": 1},
                "comment": {"id": 2, "body": "hi"},
            }
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert cli.main(["issue", "parse", "--out", "plan"]) == 2
    err = capsys.readouterr().err
    assert "repository.full_name" in err and "Traceback" not in err and len(err.splitlines()) == 1


# ------------------------------------------------------------------ the watch


def test_one_issues_bad_state_or_body_never_stops_the_watch_of_the_others() -> None:
    tracker = Tracker()
    deep = "```python\n# repromatrix: packaging\nx = 1" + "+1" * 20_000 + "\n```\n"
    tracker.issues = [{"number": n, "body": ISSUE_BODY} for n in (1, 2, 4)]
    tracker.issues.insert(1, {"number": 3, "body": deep})
    approved = render(State(approved=Approval(sha256=code_digest(REPRO_CODE), by="o", at="t")))
    for n in (1, 2, 4):
        tracker.create(n, approved)
    tracker.by_issue[2][0]["body"] = approved.replace("state ", "state eJ")  # unreadable
    failing = tracker.comments

    def comments(issue: int) -> list[dict]:
        if issue == 4:
            raise UserError("gh api issues/4/comments failed: HTTP 502")
        return failing(issue)

    tracker.comments = comments  # type: ignore[method-assign]
    plan, _ = watch_plan(tracker, IssueSettings(watch_limit=10), "octo/lib")  # type: ignore[arg-type]
    assert [job.issue for job in plan.jobs] == [1]
    said = "\n".join(plan.notes)
    assert "#3: not watched: the repro block of the issue does not parse" in said
    assert "#4: not watched: gh api issues/4/comments failed" in said
    assert [r.issue for r in plan.replies] == [2]  # its approval cannot be read: asked again


def test_an_edit_after_approval_is_refused_with_one_line_once(tmp_path: Path) -> None:
    tracker = Tracker()
    tracker.issues = [{"number": 3, "body": ISSUE_BODY.replace("import packaging", "import os")}]
    tracker.create(
        3, render(State(approved=Approval(sha256=code_digest(REPRO_CODE), by="o", at="t")))
    )
    plan, repros = watch_plan(tracker, IssueSettings(), "octo/lib")  # type: ignore[arg-type]
    assert not plan.jobs and not repros
    (reply,) = plan.replies
    assert reply.issue == 3 and reply.body == CHANGED_LINE
    acknowledge(plan, tracker, say=_quiet)  # type: ignore[arg-type]
    assert [c["body"] for c in tracker.comments(3)].count(CHANGED_LINE) == 1
    again, _ = watch_plan(tracker, IssueSettings(), "octo/lib")  # type: ignore[arg-type]
    assert not again.jobs and not again.replies  # said once for this body


def test_the_approved_body_runs_and_an_approve_command_records_a_new_one() -> None:
    tracker = Tracker()
    tracker.issues = [{"number": 3, "body": ISSUE_BODY}]
    tracker.create(
        3, render(State(approved=Approval(sha256=code_digest(REPRO_CODE), by="o", at="t")))
    )
    plan, repros = watch_plan(tracker, IssueSettings(), "octo/lib")  # type: ignore[arg-type]
    assert [job.issue for job in plan.jobs] == [3] and repros == {3: REPRO_CODE}
    command = parse_comment("/repromatrix approve")
    assert isinstance(command, Command) and command.kind == "approve"


def test_a_label_by_a_trusted_person_approves_and_by_the_author_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repromatrix.issue.event import labeled_plan

    def labeled(sender: str) -> dict:
        return {
            "action": "labeled",
            "label": {"name": "repro"},
            "sender": {"login": sender},
            "issue": {"number": 3, "body": ISSUE_BODY, "user": {"login": "mallory"}},
            "repository": {"full_name": "octo/lib"},
        }

    tracker = Tracker()
    tracker.permissions = {"maint": "write"}
    plan = labeled_plan(labeled("maint"), IssueSettings(), tracker.permission, "octo/lib")
    (approval,) = plan.approvals
    assert (approval.issue, approval.sha256, approval.by) == (3, code_digest(REPRO_CODE), "maint")
    assert not labeled_plan(
        labeled("mallory"), IssueSettings(), tracker.permission, "octo/lib"
    ).approvals
    other = {**labeled("maint"), "label": {"name": "bug"}}
    assert not labeled_plan(other, IssueSettings(), tracker.permission, "octo/lib").approvals
    acknowledge(plan, tracker, say=_quiet)  # type: ignore[arg-type]
    (body,) = _bot_bodies(tracker)
    state = read_state(body)
    assert state is not None and state.approved is not None
    assert state.approved.sha256 == code_digest(REPRO_CODE)


# ------------------------------------------------------------------ two answers at once


def test_two_answers_posted_at_once_both_survive(tmp_path: Path) -> None:
    tracker = Tracker()
    _post(tracker, tmp_path / "0", "before")
    # The second post reads, then the first runs whole while it writes.
    tracker.on_create = lambda: _post(tracker, tmp_path / "1", "answer one")
    _post(tracker, tmp_path / "2", "answer two")
    merged: set[str] = set()
    for body in _bot_bodies(tracker):
        state = read_state(body)
        assert state is not None
        merged |= {a.body for a in state.answers}
    assert {"before", "answer one", "answer two"} <= merged
    _post(tracker, tmp_path / "3", "later")  # the next answer folds them into one comment
    (body,) = _bot_bodies(tracker)
    assert {"before", "answer one", "answer two", "later"} <= {
        a.body for a in read_state(body).answers
    }


def test_a_flip_comment_is_inert_too(tmp_path: Path) -> None:
    tracker = Tracker()
    watch = _job("watch", None)
    for outcome in ("bad", "good"):
        _post(
            tracker,
            tmp_path / outcome,
            f"{outcome} @team",
            job=watch,
            outcome=outcome,
            versions={"packaging": "22.0" if outcome == "good" else "21.3"},
        )
    flips = [c["body"] for c in tracker.comments(3) if c["body"].startswith(FLIP_MARKER)]
    assert flips and "now passes with packaging 22.0 (fails with 21.3)" in flips[0]


def test_an_approval_plan_survives_its_own_read(tmp_path: Path) -> None:
    from repromatrix.issue.plan import write_plan

    plan = Plan(event="issues", repository="octo/lib")
    write_plan(plan, tmp_path, {})
    assert read_plan(tmp_path).event == "issues"
