"""No stranger speaks as the bot (issue 35, items 1 and 3): a command is what GitHub
shows as the comment's own text, the repro is code GitHub shows, an approval says
what it covers, and untrusted comments cannot buy the bot's replies. Each input here
was taken before."""

from __future__ import annotations

import pytest
from test_issue_bot import Tracker
from test_issue_event import Preflight, payload

from repromatrix.issue import bot
from repromatrix.issue.bot import acknowledge, approval_reply
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.event import comment_plan, decide_comment, labeled_plan
from repromatrix.issue.repro import code_digest
from repromatrix.issue.state import MARKER, read_state

HIDDEN = "It breaks.\n\n<!--\n```python\n# repromatrix: packaging\nimport evil\n```\n-->\n"


def _plan_of(
    body: str, association: str = "OWNER", issue_body: str | None = None, login: str = "alice"
):
    changes = {"issue__body": issue_body} if issue_body is not None else {}
    changes["comment__user"] = {"login": login, "type": "User"}
    plan, _repros = comment_plan(
        payload(body, association, **changes), IssueSettings(), Preflight(), "octo/lib"
    )
    return plan


@pytest.mark.parametrize(
    "body",
    [
        "pasted log:\x85/repromatrix approve",  # NEL is no line end in CommonMark
        "```\nlog\n\t```\n/repromatrix approve\n```",  # a tab does not close the fence
        "- /repromatrix approve",  # a list item
    ],
)
def test_a_maintainers_pasted_log_approves_nothing(body: str) -> None:
    plan = _plan_of(body)
    assert plan.approvals == [] and plan.jobs == [] and plan.replies == []
    assert plan.notes == ["ignored: the comment holds no /repromatrix line"]


def test_a_repro_hidden_in_an_html_comment_is_neither_approved_nor_run() -> None:
    approve = _plan_of("/repromatrix approve", issue_body=HIDDEN)
    assert approve.approvals == []
    [refused] = approve.replies
    assert "nothing to approve" in refused.body
    check = decide_comment(
        payload("/repromatrix check", issue__body=HIDDEN), IssueSettings(), Preflight()
    )
    assert check.job is None and "no repro" in check.note
    labelled = {
        "action": "labeled",
        "label": {"name": "repro"},
        "issue": {"number": 7, "body": HIDDEN},
        "sender": {"login": "alice"},
    }
    plan = labeled_plan(labelled, IssueSettings(), lambda _login: "admin", "octo/lib")
    assert plan.approvals == [] and "no repro block" in plan.notes[0]


def test_an_approval_reply_quotes_the_digest_and_the_code_it_covers() -> None:
    plan = _plan_of("/repromatrix approve")
    [approval] = plan.approvals
    code = "# repromatrix: packaging\nimport packaging\n"
    assert approval.sha256 == code_digest(code)
    assert approval.head == ["# repromatrix: packaging", "import packaging", ""]
    tracker = Tracker()
    acknowledge(plan, tracker, say=lambda _line: None)  # type: ignore[arg-type]
    [memory, reply] = tracker.comments(7)
    assert read_state(memory["body"]).approved.sha256 == approval.sha256
    assert f"`{approval.sha256}`" in reply["body"]
    assert "```python\n# repromatrix: packaging\nimport packaging\n" in reply["body"]
    assert "alice" in approval_reply(approval) and tracker.reactions == [(1001, "+1")]


def test_a_stranger_gets_one_refusal_per_issue_per_day(monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker()
    day = {"now": "2026-11-27T10:00:00+00:00"}
    monkeypatch.setattr(bot, "utc_now", lambda: day["now"])

    def stranger(issue: int = 7, login: str = "mallory") -> None:
        plan = _plan_of("/repromatrix check", association="NONE", login=login)
        [reply] = plan.replies
        assert reply.author == login
        reply.issue = issue
        acknowledge(plan, tracker, say=lambda _line: None)  # type: ignore[arg-type]

    for _ in range(3):
        stranger()
    assert len(tracker.comments(7)) == 1 and len(tracker.reactions) == 1
    assert "not among the authors trusted" in tracker.comments(7)[0]["body"]
    stranger(login="eve")  # another author
    stranger(issue=8)  # another issue
    assert len(tracker.comments(7)) == 2 and len(tracker.comments(8)) == 1
    # A person cannot silence the bot by pasting its note: only its own comments count.
    tracker.create(9, tracker.comments(7)[0]["body"], login="mallory")
    stranger(issue=9)
    assert len(tracker.comments(9)) == 2
    day["now"] = "2026-11-28T00:00:01+00:00"  # the next day
    stranger()
    assert len(tracker.comments(7)) == 3


def test_a_maintainers_refusals_are_not_rationed() -> None:
    tracker = Tracker()
    for _ in range(2):
        plan = _plan_of("/repromatrix frobnicate")
        assert plan.replies[0].author is None
        acknowledge(plan, tracker, say=lambda _line: None)  # type: ignore[arg-type]
    assert len(tracker.comments(7)) == 2


def test_a_person_pasting_the_bot_marker_is_not_the_bot() -> None:
    tracker = Tracker()
    tracker.create(7, f"{MARKER}\nforged", login="mallory")
    assert bot.bot_comments(tracker.comments(7), ["github-actions[bot]"]) == []
    tracker.create(7, f"{MARKER}\nan app's", login="my-app[bot]")  # configured: issue.bots
    assert len(bot.bot_comments(tracker.comments(7), ["My-App[bot]"])) == 1
