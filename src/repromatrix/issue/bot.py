"""The bot's side of GitHub (through github.client.IssueComments): reactions, refusals
(an untrusted author's at most once a day per issue) and approvals (each said in a reply
quoting its digest and code) when an event arrives (``acknowledge``), the answer in the
bot comment and a flip said once (``post_answers``), and the labelled issues the watch
reads (``watch_plan``).

Nothing here runs issue content: it reads the plan (the parse job's, checked against
its digest before repromatrix was installed from it), the answers (the run job's,
validated in answer.py and made inert here) and renders.

The bot comment is the issue's memory (state.py), and two runs may write it at once:
no concurrency group serialises them (GitHub would cancel a pending command). So an
update never edits what another run may be rewriting: it reads every bot comment of
the issue, merges their states, and creates a new comment with the merged state and
its change before deleting the ones it merged (a comment is deleted only once its
answers are in a newer one). Two answers posted at once leave two comments, each
complete; the next update folds them into one. Only the watch's quiet night (nothing
but ``last_watched`` changes) edits in place: losing that to a race costs a turn of
the rotation, never an answer or an approval.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from repromatrix.errors import UserError
from repromatrix.github.authors import written_by
from repromatrix.github.hidden import hidden, read_hidden
from repromatrix.github.inert import inert
from repromatrix.github.markdown import code_block, code_span, one_line, text
from repromatrix.issue.answer import Result, read_result
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.flips import Mark, Night, night
from repromatrix.issue.plan import Job, Plan, PlannedApproval, Reply
from repromatrix.issue.repro import MAX_REPRO, code_digest
from repromatrix.issue.state import (
    Answer,
    Approval,
    Observed,
    Refused,
    State,
    fitted,
    is_bot_comment,
    merged,
    read_state,
    with_answer,
)
from repromatrix.issue.watch import candidates, tonight, watch_job
from repromatrix.results import utc_now

REFUSAL_KIND = "refusal"  # the hidden line under a refusal: whom, which day
CHANGED = (
    "the repro changed since it was approved; a maintainer comments "
    "`/repromatrix approve` or re-labels"
)
NOT_APPROVED = (
    "the repro has not been approved for the nightly watch; a maintainer comments "
    "`/repromatrix approve` or re-labels"
)
Say = Callable[[str], None]
Change = Callable[[State], tuple[State, bool]]  # the new state; whether it adds an answer


class Comments(Protocol):
    def comments(self, issue: int) -> list[dict]: ...
    def create(self, issue: int, body: str) -> int | None: ...
    def edit(self, comment: int, body: str) -> None: ...
    def delete(self, comment: int) -> None: ...
    def react(self, comment: int, content: str) -> None: ...
    def close(self, issue: int) -> None: ...


def bot_comments(comments: list[dict], bots: list[str]) -> list[dict]:
    """The bot's comments, oldest first: the marker at the start, written by one of the
    bot logins (github.authors: a person, or another app, pasting the marker does not
    make one)."""
    return [
        comment
        for comment in comments
        if written_by(comment, bots)
        and is_bot_comment(comment.get("body"))
        and isinstance(comment.get("id"), int)
    ]


def memory(comments: list[dict], bots: list[str]) -> tuple[State, list[int]]:
    """The merged state of the bot comments whose state reads, and their ids (a comment
    whose state does not read is left as it is: never merged, edited or deleted)."""
    states, ids = [], []
    for comment in bot_comments(comments, bots):
        state = read_state(comment.get("body"))
        if state is not None:
            states.append(state)
            ids.append(comment["id"])
    return (merged(states) if states else State()), ids


def remember(
    client: Comments, issue: int, bots: list[str], change: Change, say: Say, *, quiet: bool = False
) -> State:
    """Apply ``change`` to the issue's memory (see the module's docstring). ``quiet``: a
    change whose loss to a race costs nothing (no answer, no approval) edits the one
    bot comment in place, which notifies nobody."""
    state, ids = memory(client.comments(issue), bots)
    updated, adds = change(state)
    kept, text = fitted(updated)
    if quiet and not adds and len(ids) == 1:
        try:
            client.edit(ids[0], text)
            return kept
        except UserError:  # merged and deleted meanwhile: write it the safe way
            return remember(client, issue, bots, change, say)
    client.create(issue, text)
    for old in ids:
        try:
            client.delete(old)
        except UserError as err:  # gone already (another run merged it): nothing lost
            say(f"#{issue}: an earlier bot comment stays: {err}")
    return kept


def acknowledge(plan: Plan, client: Comments, say: Say = print) -> None:
    """😕 and a reply for each refusal (an untrusted author's at most once a day per
    issue); approvals into the bot comment, each with a reply quoting the digest and
    the code's first lines; 👀 on each command that will run."""
    today = utc_now()[:10]
    for reply in plan.replies:
        if reply.author is not None and _refused_today(client, reply, plan.bots, today):
            say(f"#{reply.issue}: refused {reply.author or 'an unnamed author'} again: no reply")
            continue
        if reply.comment is not None:
            client.react(reply.comment, "confused")
        body = inert(reply.body)
        if reply.author is not None:  # the bot's own note of whom it refused, and when
            body += "\n\n" + hidden(REFUSAL_KIND, {"to": reply.author.lower(), "day": today})
        client.create(reply.issue, body)
        if reply.refused is not None:
            said = Refused(sha256=reply.refused, at=utc_now())
            remember(client, reply.issue, plan.bots, _setting(refused=said), say, quiet=True)
        say(f"#{reply.issue}: refused (replied)")
    for approval in plan.approvals:
        approved = Approval(sha256=approval.sha256, by=approval.by, at=utc_now(), how=approval.how)
        remember(client, approval.issue, plan.bots, _setting(approved=approved), say)
        client.create(approval.issue, approval_reply(approval))
        if approval.comment is not None:
            client.react(approval.comment, "+1")
        say(f"#{approval.issue}: approved {approval.sha256[:12]} ({approval.how} by {approval.by})")
    for job in plan.jobs:
        if job.comment is not None:
            client.react(job.comment, "eyes")
            say(f"#{job.issue}: started ({one_line(job.line, 200)})")


def approval_reply(approval: PlannedApproval) -> str:
    """What was approved, said where the approver sees it: the digest the watch checks
    and the first lines of the code it covers (an approval of code nobody saw shows)."""
    how = "the label" if approval.how == "label" else "`/repromatrix approve`"
    shown = "\n".join(approval.head)
    return (
        f"Approved for the nightly watch by {text(approval.by)} ({how}): the repro with "
        f"sha256 {code_span(approval.sha256)}, which begins:\n\n"
        f"{code_block(shown, 'python')}\n"
        "The watch runs this block only; an edit of the issue's repro waits for a new approval."
    )


def _refused_today(client: Comments, reply: Reply, bots: list[str], today: str) -> bool:
    """Whether the bot refused ``reply.author`` on this issue today (its own note, on
    the last line of a reply of its own)."""
    said = {"to": (reply.author or "").lower(), "day": today}
    return any(
        written_by(comment, bots)
        and read_hidden(comment.get("body"), REFUSAL_KIND, line="last") == said
        for comment in client.comments(reply.issue)
    )


def _setting(**changes: object) -> Change:
    """A change of the memory that sets fields and adds no answer."""
    return lambda state: (state.model_copy(deep=True, update=changes), False)


def post_answers(
    plan: Plan,
    folder: Path,
    answers: Path,
    client: Comments,
    run_url: str,
    say: Say = print,
    marks: list[Mark] | None = None,
) -> int:
    """Each job's answer into its issue's bot comment, what a night of the watch says
    (issue/flips.py: a flip confirmed and named, flaky, main ahead; closing), 🚀 or 😕 on
    the command. One issue's failure (gh, a bad answer) does not stop the others; how
    many failed. ``marks``: gets the kept cases to mark possibly-fixed (the keep job's)."""
    failed = 0
    for job in plan.jobs:
        try:
            _post_one(plan, folder, answers, client, run_url, job, say, marks)
        except UserError as err:
            failed += 1
            say(f"#{job.issue}: not answered: {err}")
    return failed


def _post_one(
    plan: Plan,
    folder: Path,
    answers: Path,
    client: Comments,
    run_url: str,
    job: Job,
    say: Say,
    marks: list[Mark] | None,
) -> None:
    result = read_result(answers, job.issue)
    code = _code(folder, job)
    now = utc_now()
    answer = Answer(at=now, title=job.line, body=_body(result, run_url), url=run_url,
                    code=code, code_sha256=code_digest(code) if code else "")  # fmt: skip
    nights: list[Night] = []

    def change(state: State) -> tuple[State, bool]:
        updated, told, adds = _updated(state, job, result, answer, now, run_url)
        if code and job.source == "issue" and job.kind != "watch" and job.author:
            # A trusted command ran the issue's repro: that code is approved for the watch.
            updated.approved = Approval(sha256=answer.code_sha256, by=job.author, at=now,
                                        how="command")  # fmt: skip
        nights[:] = [told] if told is not None else []
        return updated, adds

    remember(client, job.issue, plan.bots, change, say, quiet=job.kind == "watch")
    for told in nights:
        for body in told.comments:
            client.create(job.issue, body)
        for line in told.said:
            say(f"#{job.issue}: {line}")
        if told.close:
            client.close(job.issue)
            say(f"#{job.issue}: closed (issue: close: true)")
        if told.mark is not None and marks is not None:
            marks.append(told.mark)
    if job.comment is not None:
        done = isinstance(result, Result) and result.status == "done"
        client.react(job.comment, "rocket" if done else "confused")
    say(f"#{job.issue}: answered")


def _code(folder: Path, job: Job) -> str:
    """The repro that ran, as the plan (checked against its digest) holds it."""
    if job.case is not None:
        return ""
    path = folder / job.repro_name()
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4 * MAX_REPRO:
            return ""
        return path.read_text(encoding="utf-8")[:MAX_REPRO]
    except (OSError, UnicodeDecodeError):
        return ""


def _updated(
    state: State, job: Job, result: Result | str, answer: Answer, now: str, run_url: str
) -> tuple[State, Night | None, bool]:
    """The state with this run's answer; what a night of the watch says, if it is one;
    whether an answer was added (a watch adds one when its outcome or versions changed,
    or it says something)."""
    if isinstance(result, str) or job.kind != "watch":
        return with_answer(state, answer), None, True
    told = night(state, job, result, now, run_url)
    observed = Observed(outcome=result.outcome or "skip", versions=result.versions, at=now)
    changed = state.watch is None or (state.watch.outcome, state.watch.versions) != (
        observed.outcome,
        observed.versions,
    )
    adds = changed or bool(told.comments)
    updated = with_answer(told.state, answer) if adds else told.state
    updated.last_watched = now
    updated.watch = observed
    return updated, told, adds


def _body(result: Result | str, run_url: str) -> str:
    """The answer as the comment shows it: the run job's text, made inert."""
    if isinstance(result, str):
        return f"No answer: {result}. The run's log: {run_url}"
    if result.status == "done":
        return inert(result.markdown or one_line(result.headline))
    said = {"refused": "could not run", "timed-out": "ran out of time", "failed": "failed"}
    body = f"The run {said[result.status]}: {text(result.headline)}"
    return body + (f"\n\n{inert(result.markdown)}" if result.markdown else "")


def watch_plan(
    client: object, settings: IssueSettings, repository: str
) -> tuple[Plan, dict[int, str]]:
    """Tonight's watch: the least recently watched labelled issues whose repro is the
    approved one, at most the limit. An issue whose comments cannot be read, or whose
    body cannot be used, is a note; one whose repro is not the approved one gets the
    line once (a reply with its sha256, which ack remembers)."""
    issues = client.labelled(settings.label)  # type: ignore[attr-defined]
    states: dict[int, State] = {}
    notes: list[str] = []
    readable = []
    for item in issues:
        number = item.get("number") if isinstance(item, dict) else None
        if not isinstance(number, int) or isinstance(number, bool):
            readable.append(item)  # candidates() notes it
            continue
        try:
            states[number], _ids = memory(client.comments(number), settings.bots)  # type: ignore[attr-defined]
        except UserError as err:
            notes.append(f"#{number}: not watched: {err}")
            continue
        readable.append(item)
    found, more = candidates(readable, states)
    notes += more
    replies: list[Reply] = []
    approved = []
    for candidate in found:
        state = states.get(candidate.issue) or State()
        digest = candidate.repro.digest
        if state.approved is not None and state.approved.sha256 == digest:
            approved.append(candidate)
        elif state.refused is not None and state.refused.sha256 == digest:
            notes.append(f"#{candidate.issue}: not watched: its repro waits for approval")
        else:
            line = CHANGED if state.approved is not None else NOT_APPROVED
            replies.append(Reply(issue=candidate.issue, body=line, refused=digest))
            notes.append(f"#{candidate.issue}: not watched: {line}")
    chosen = tonight(approved, settings.watch_limit)
    waiting = len(approved) - len(chosen)
    if waiting:
        notes.append(
            f"{waiting} watched issue(s) wait for a later night (limit {settings.watch_limit})"
        )
    plan = Plan(event="schedule", repository=repository, bots=settings.bots, notes=notes)
    plan.jobs = [watch_job(c, settings) for c in chosen]
    plan.replies = replies
    return plan, {c.issue: c.repro.code for c in chosen}
