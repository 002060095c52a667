"""The bot's GitHub side against an in-memory issue tracker: reactions, refusal
replies, one bot comment (each answer a new one that folds the last in), a flip said
once, answers trusted for their shape only."""

from __future__ import annotations

import json
from pathlib import Path

from repromatrix.issue.answer import Result, artifact_name, write_result
from repromatrix.issue.bot import acknowledge, post_answers
from repromatrix.issue.flips import FLIP_MARKER
from repromatrix.issue.plan import Job, Plan, Reply
from repromatrix.issue.state import MARKER, read_state


class Tracker:
    """IssueComments' interface over dicts: what a test can assert on."""

    def __init__(self) -> None:
        self.comments_by_issue: dict[int, list[dict]] = {}
        self.reactions: list[tuple[int, str]] = []
        self.closed: list[int] = []
        self.next_id = 500

    def comments(self, issue: int) -> list[dict]:
        return self.comments_by_issue.get(issue, [])

    def create(self, issue: int, body: str, login: str = "github-actions[bot]") -> int:
        self.next_id += 1
        kind = "Bot" if login.endswith("[bot]") else "User"
        comment = {"id": self.next_id, "body": body, "user": {"login": login, "type": kind}}
        self.comments_by_issue.setdefault(issue, []).append(comment)
        return self.next_id

    def edit(self, comment: int, body: str) -> None:
        for comments in self.comments_by_issue.values():
            for c in comments:
                if c["id"] == comment:
                    c["body"] = body
                    return
        raise AssertionError(f"no comment {comment}")

    def delete(self, comment: int) -> None:
        for issue, comments in self.comments_by_issue.items():
            self.comments_by_issue[issue] = [c for c in comments if c["id"] != comment]

    def react(self, comment: int, content: str) -> None:
        self.reactions.append((comment, content))

    def close(self, issue: int) -> None:
        self.closed.append(issue)


def _job(kind: str = "check", comment: int | None = 11) -> Job:
    return Job(issue=3, comment=comment, kind=kind, line=f"/repromatrix {kind}", timeout=60)


def _plan(*jobs: Job, replies: tuple[Reply, ...] = ()) -> Plan:
    return Plan(
        event="issue_comment", repository="octo/lib", jobs=list(jobs), replies=list(replies)
    )


def test_ack_reacts_eyes_to_a_run_and_confused_with_a_reply_to_a_refusal() -> None:
    tracker = Tracker()
    plan = _plan(_job(), replies=(Reply(issue=4, comment=12, body="cannot run: why"),))
    acknowledge(plan, tracker, say=lambda _l: None)  # type: ignore[arg-type]
    assert tracker.reactions == [(12, "confused"), (11, "eyes")]
    assert tracker.comments(4)[0]["body"] == "cannot run: why"


def _post(plan: Plan, answers: Path, tracker: Tracker, run_url: str) -> None:
    post_answers(plan, answers / "plan", answers, tracker, run_url, say=lambda _l: None)  # type: ignore[arg-type]


def _write(folder: Path, result: Result) -> None:
    write_result(folder / artifact_name(result.issue), result)


def test_answers_go_into_one_bot_comment(tmp_path: Path) -> None:
    tracker = Tracker()
    tracker.create(3, f"{MARKER}\nfake: a person's comment is not the bot's", login="mallory")
    for n in (1, 2):
        _write(tmp_path, Result(issue=3, kind="check", status="done", markdown=f"answer {n}"))
        _post(_plan(_job()), tmp_path, tracker, "https://run/1")
    bots = [c for c in tracker.comments(3) if c["user"]["type"] == "Bot"]
    assert len(bots) == 1
    body = bots[0]["body"]
    assert body.index("answer 2") < body.index("<summary>Earlier answers (1)</summary>")
    assert body.index("answer 1") > body.index("<details>")
    assert tracker.comments(3)[0]["body"].endswith("not the bot's")  # untouched
    assert tracker.reactions == [(11, "rocket"), (11, "rocket")]


def test_a_missing_or_forged_answer_is_said_not_trusted(tmp_path: Path) -> None:
    tracker = Tracker()
    _post(_plan(_job()), tmp_path, tracker, "https://run/1")
    folder = tmp_path / artifact_name(3) / "3"
    folder.mkdir(parents=True)
    forged = {"issue": 4, "kind": "check", "status": "done", "markdown": "hi"}
    (folder / "answer.json").write_text(json.dumps(forged))
    _post(_plan(_job()), tmp_path, tracker, "https://run/2")
    (bot,) = tracker.comments(3)
    assert "No answer: the run's answer is for another issue." in bot["body"]
    assert "No answer: the run left no answer." in bot["body"]
    assert tracker.reactions == [(11, "confused"), (11, "confused")]


def _night(tracker: Tracker, folder: Path, outcome: str, version: str) -> None:
    result = Result(
        issue=3,
        kind="watch",
        status="done",
        outcome=outcome,  # type: ignore[arg-type]
        versions={"transformers": version},
        markdown=f"{outcome} with transformers {version}",
    )
    _write(folder, result)
    _post(_plan(_job("watch", None)), folder, tracker, "https://run/n")


def test_a_watch_flip_is_commented_once_and_the_state_remembers(tmp_path: Path) -> None:
    tracker = Tracker()
    _night(tracker, tmp_path, "bad", "5.2.0")
    _night(tracker, tmp_path, "bad", "5.2.0")
    _night(tracker, tmp_path, "good", "5.3.0")
    _night(tracker, tmp_path, "good", "5.3.0")
    flips = [c["body"] for c in tracker.comments(3) if c["body"].startswith(FLIP_MARKER)]
    assert len(flips) == 1
    assert "repromatrix watch: now passes with transformers 5.3.0 (fails with 5.2.0)" in flips[0]
    (bot,) = [c for c in tracker.comments(3) if c["body"].startswith(MARKER)]
    state = read_state(bot["body"])
    assert [a.body for a in state.answers] == [
        "good with transformers 5.3.0",
        "bad with transformers 5.2.0",
    ]  # an unchanged night adds no answer
    assert state.decisive is not None and state.decisive.outcome == "good"
    assert state.last_watched
    _night(tracker, tmp_path, "bad", "5.4.0")
    flips = [c["body"] for c in tracker.comments(3) if c["body"].startswith(FLIP_MARKER)]
    assert "fails again with transformers 5.4.0 (passes with 5.3.0)" in flips[-1]
    assert tracker.reactions == []  # the watch has no comment to react to
