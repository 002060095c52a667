"""An issue_comment payload to a plan: trusted authors only, no pull requests, a clear
refusal for what cannot run, and nothing but a note for payloads of unknown shape."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.errors import UserError
from repromatrix.issue.config import IssueSettings, is_trusted, load_settings
from repromatrix.issue.event import comment_plan, decide_comment
from repromatrix.issue.plan import Job
from repromatrix.issue.repro import Repro

REPRO = "```python\n# repromatrix: packaging\nimport packaging\n```\n"


def payload(body: str = "/repromatrix check", association: str = "OWNER", **changes: Any) -> dict:
    data = {
        "action": "created",
        "issue": {"number": 7, "body": "It breaks.\n\n" + REPRO, "title": "t"},
        "comment": {
            "id": 1001,
            "body": body,
            "author_association": association,
            "user": {"login": "alice", "type": "User"},
        },
        "repository": {"full_name": "octo/lib"},
    }
    for path, value in changes.items():
        node = data
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    return data


class Preflight:
    def __init__(self, error: str | None = None) -> None:
        self.error = error
        self.seen: list[tuple[Job, Repro | None]] = []

    def __call__(self, job: Job, repro: Repro | None) -> None:
        self.seen.append((job, repro))
        if self.error:
            raise UserError(self.error)


def test_a_trusted_command_becomes_a_job_with_the_issue_repro() -> None:
    check = Preflight()
    decided = decide_comment(payload(), IssueSettings(), check)
    assert decided.reply is None and decided.job is not None
    job = decided.job
    assert (job.issue, job.comment, job.kind, job.author, job.source) == (
        7,
        1001,
        "check",
        "alice",
        "issue",
    )
    assert job.pins == ["packaging=latest"] and job.watched == ["packaging"]
    assert check.seen and check.seen[0][1].code.startswith("# repromatrix: packaging")


def test_the_comment_repro_wins_over_the_issue_and_the_command_pins_win() -> None:
    body = (
        "/repromatrix check --pin packaging==21.3\n\n"
        "```python\n# repromatrix: packaging==22.0 rich\nimport rich\n```\n"
    )
    decided = decide_comment(payload(body), IssueSettings(pins=["torch==2.13.0"]), Preflight())
    assert decided.job is not None and decided.job.source == "comment"
    assert decided.job.pins == ["torch==2.13.0", "packaging==21.3", "rich=latest"]


def test_an_untrusted_author_is_told_a_maintainer_can_start_it() -> None:
    check = Preflight()
    decided = decide_comment(payload(association="NONE"), IssueSettings(), check)
    assert decided.job is None and not check.seen  # nothing checked, nothing planned
    assert decided.reply is not None and decided.reply.comment == 1001
    assert "@alice is not among the authors trusted" in decided.reply.body
    assert "A maintainer can start it by commenting the same command" in decided.reply.body


def test_trust_by_association_by_configured_login_and_by_variable(tmp_path: Path) -> None:
    default = IssueSettings()
    assert is_trusted("x", "MEMBER", default) and is_trusted("x", "COLLABORATOR", default)
    assert not is_trusted("x", "CONTRIBUTOR", default)
    config = tmp_path / "repromatrix.yml"
    config.write_text("issue:\n  trusted: [Alice]\n  associations: [OWNER]\n")
    loaded = load_settings(config, environ={"REPROMATRIX_TRUSTED": "bob, carol"})
    assert is_trusted("alice", "NONE", loaded) and is_trusted("carol", "NONE", loaded)
    assert not is_trusted("mallory", "MEMBER", loaded)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("issue:\n  associations: [ADMIN]\n", "issue.associations: 'ADMIN' is not"),
        ("issue:\n  watch_limit: -1\n", "issue.watch_limit"),
        ("issue:\n  pins: [torch]\n", "issue.pins"),
        (
            "issue:\n  confinement: sometimes\n",
            "issue.confinement: Input should be 'required' or 'optional' (got 'sometimes')",
        ),
        ("issue: [\n", "not YAML"),
        ("- 1\n", "expected a mapping"),
    ],
)
def test_a_bad_configuration_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    config = tmp_path / "repromatrix.yml"
    config.write_text(text)
    with pytest.raises(UserError) as raised:
        load_settings(config, environ={})
    assert said in str(raised.value) and str(config) in str(raised.value)


def test_pull_request_comments_are_refused() -> None:
    pr = payload(issue__pull_request={"url": "https://api.github.com/repos/octo/lib/pulls/7"})
    check = Preflight()
    decided = decide_comment(pr, IssueSettings(), check)
    assert decided.job is None and not check.seen
    assert decided.reply is not None
    assert "commands run on issues only, not on pull requests" in decided.reply.body


@pytest.mark.parametrize(
    ("changes", "note"),
    [
        ({"action": "edited"}, "ignored: a comment 'edited'"),
        ({"comment__user": {"login": "github-actions[bot]", "type": "Bot"}}, "a bot's"),
        ({"comment__body": "just chatting"}, "no /repromatrix line"),
        ({"issue__number": "7"}, "no issue.number or comment.id"),
        ({"comment__id": True}, "no issue.number or comment.id"),
    ],
)
def test_what_is_not_for_us_gets_a_note_and_no_reply(changes: dict, note: str) -> None:
    decided = decide_comment(payload(**changes), IssueSettings(), Preflight())
    assert decided.job is None and decided.reply is None and note in decided.note


def test_no_repro_and_a_preflight_refusal_reply_with_the_syntax() -> None:
    no_repro = payload(issue__body="nothing here")
    decided = decide_comment(no_repro, IssueSettings(), Preflight())
    assert decided.reply is not None and "no repro: neither the comment nor the issue" in (
        decided.reply.body
    )
    assert "Accepted syntax:" in decided.reply.body
    refused = decide_comment(payload(), IssueSettings(), Preflight("nosuchpkg: not on the index"))
    assert refused.reply is not None and "nosuchpkg: not on the index" in refused.reply.body
    missing_author = payload(comment__author_association=None)
    said = decide_comment(missing_author, IssueSettings(), Preflight())
    assert said.reply is not None and "names no comment author" in said.reply.body


def _mangled(data: dict, draw_value: Any, path: list[str]) -> dict:
    data = copy.deepcopy(data)
    node: Any = data
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node[path[-1]] = draw_value
    return data


PATHS = [
    ["action"],
    ["issue"],
    ["issue", "number"],
    ["issue", "body"],
    ["issue", "pull_request"],
    ["comment"],
    ["comment", "id"],
    ["comment", "body"],
    ["comment", "user"],
    ["comment", "user", "login"],
    ["comment", "author_association"],
    ["repository"],
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(st.just("fields"), st.lists(st.tuples(st.sampled_from(PATHS), JSON), max_size=4))
    | st.tuples(st.just("whole"), JSON)
)
def test_payloads_of_any_shape_give_a_plan_never_a_traceback(drawn: tuple[str, Any]) -> None:
    how, changes = drawn
    data: Any = payload() if how == "fields" else changes
    if how == "fields":
        for path, value in changes:
            data = _mangled(data, value, path)
    plan, _repros = comment_plan(data, IssueSettings(), Preflight(), "octo/lib")
    assert len(plan.jobs) + len(plan.replies) <= 1 and plan.notes
