"""The bot's side of GitHub (through gh.IssueComments): reactions and refusals when a
command arrives (``acknowledge``), the answer in the one bot comment and a flip said
once (``post_answers``), and the labelled issues the watch reads (``watch_plan``).

Nothing here runs issue content: it reads the plan (the parse job's), the answers (the
run job's, validated in answer.py) and renders.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repromatrix.gh import IssueComments
from repromatrix.issue.answer import Result, read_result
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.plan import Job, Plan
from repromatrix.issue.state import Answer, Observed, State, fitted, is_bot_comment, read_state
from repromatrix.issue.watch import candidates, flip, tonight, watch_job
from repromatrix.results import utc_now

FLIP_MARKER = "<!-- repromatrix:flip -->"
Say = Callable[[str], None]


def acknowledge(plan: Plan, client: IssueComments, say: Say = print) -> None:
    """😕 and a reply for each refusal; 👀 on each command that will run."""
    for reply in plan.replies:
        if reply.comment is not None:
            client.react(reply.comment, "confused")
        client.create(reply.issue, reply.body)
        say(f"#{reply.issue}: refused (replied)")
    for job in plan.jobs:
        if job.comment is not None:
            client.react(job.comment, "eyes")
            say(f"#{job.issue}: started ({job.line})")


def bot_comment(comments: list[dict]) -> dict | None:
    """The bot's comment: the marker at its start, written by a bot account (a person
    pasting the marker does not make a comment the bot's)."""
    for comment in comments:
        user = comment.get("user") if isinstance(comment.get("user"), dict) else {}
        by_bot = user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")
        if by_bot and is_bot_comment(comment.get("body")) and isinstance(comment.get("id"), int):
            return comment
    return None


def post_answers(
    plan: Plan, answers: Path, client: IssueComments, run_url: str, say: Say = print
) -> None:
    for job in plan.jobs:
        result = read_result(answers, job.issue)
        comments = client.comments(job.issue)
        found = bot_comment(comments)
        state = read_state(found.get("body")) if found else State()
        state, flipped = _updated(state, job, result, run_url)
        _, text = fitted(state)
        if found is not None:
            client.edit(found["id"], text)
        else:
            client.create(job.issue, text)
        if flipped:
            client.create(
                job.issue, f"{FLIP_MARKER}\nrepromatrix watch: {flipped} ([run]({run_url}))"
            )
            say(f"#{job.issue}: {flipped}")
        if job.comment is not None:
            done = isinstance(result, Result) and result.status == "done"
            client.react(job.comment, "rocket" if done else "confused")
        say(f"#{job.issue}: answered ({'edited' if found else 'new'} bot comment)")


def _updated(
    state: State, job: Job, result: Result | str, run_url: str
) -> tuple[State, str | None]:
    """The state with this run's answer; and the flip sentence of a watch, if any."""
    now = utc_now()
    if isinstance(result, str):
        body = f"No answer: {result}. The run's log: {run_url}"
        return _with(state, Answer(at=now, title=job.line, body=body, url=run_url)), None
    answer = Answer(at=now, title=job.line, body=_body(result), url=run_url)
    if job.kind != "watch":
        return _with(state, answer), None
    observed = Observed(outcome=result.outcome or "skip", versions=result.versions, at=now)
    flipped = flip(state.decisive, observed) if result.status == "done" else None
    changed = state.watch is None or (state.watch.outcome, state.watch.versions) != (
        observed.outcome,
        observed.versions,
    )
    updated = _with(state, answer) if changed else state.model_copy(deep=True)
    updated.last_watched = now
    updated.watch = observed
    if observed.outcome in ("good", "bad") and result.status == "done":
        updated.decisive = observed
    return updated, flipped


def _with(state: State, answer: Answer) -> State:
    updated = state.model_copy(deep=True)
    updated.answers.insert(0, answer)
    return updated


def _body(result: Result) -> str:
    if result.status == "done":
        return result.markdown or result.headline
    said = {"refused": "could not run", "timed-out": "ran out of time", "failed": "failed"}
    body = f"The run {said[result.status]}: {result.headline}"
    return body + (f"\n\n{result.markdown}" if result.markdown else "")


def watch_plan(
    client: IssueComments, settings: IssueSettings, repository: str
) -> tuple[Plan, dict[int, str]]:
    """Tonight's watch: the least recently watched labelled issues, at most the limit."""
    issues = client.labelled(settings.label)
    states: dict[int, State] = {}
    for item in issues:
        number = item.get("number")
        if isinstance(number, int) and not isinstance(number, bool):
            found = bot_comment(client.comments(number))
            states[number] = read_state(found.get("body")) if found else State()
    found_candidates, notes = candidates(issues, states)
    chosen = tonight(found_candidates, settings.watch_limit)
    waiting = len(found_candidates) - len(chosen)
    if waiting:
        notes.append(
            f"{waiting} watched issue(s) wait for a later night (limit {settings.watch_limit})"
        )
    plan = Plan(event="schedule", repository=repository, notes=notes)
    plan.jobs = [watch_job(c, settings) for c in chosen]
    return plan, {c.issue: c.repro.code for c in chosen}
