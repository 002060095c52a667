"""An event (the JSON GitHub writes to $GITHUB_EVENT_PATH) to a plan. An issue_comment:
a job to run, an approval, a reply that refuses, or nothing (the comment is not for
us). An issues ``labeled`` event with the watch's label, by a trusted person: the
issue's repro as it is now is approved for the watch (its sha256, recorded by ack).

The payload is read field by field with its type checked: an event of a shape never
seen (fields missing, of another type, not an object at all) gives a note in the
log and, where the comment can be answered, a refusal; never a traceback.

Who may run what: only a trusted author (config.is_trusted) starts a run or approves;
others get a reply saying a maintainer can start it with the same command (marked as
an untrusted author's: the ack job says it at most once a day per author and issue). A label is
trusted when its sender is named in the settings or may write to the repository (the
labeled event has no author association; an issue template's label is the author's).
Comments on pull requests are all refused: the workflow runs on the default branch, and a PR's code
(possibly a fork's) is never what a command should run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError
from repromatrix.issue.command import Command, Refusal, parse_comment
from repromatrix.issue.config import TRUSTED_PERMISSIONS, IssueSettings, is_trusted
from repromatrix.issue.plan import (
    LOGIN,
    Job,
    Plan,
    PlannedApproval,
    PlannedKeep,
    Reply,
    make_job,
)
from repromatrix.issue.repro import Repro, find_repro


def field(data: Any, *path: str, kind: type | tuple[type, ...] = str) -> Any:
    """``data[path[0]][path[1]]...`` when every step is a JSON object and the value
    has the type asked for; None otherwise (bool is not an int here)."""
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    if isinstance(data, bool) and kind is not bool:
        return None
    return data if isinstance(data, kind) else None


@dataclass(frozen=True)
class Decided:
    """One comment's outcome: a job (with its repro), a reply, or a note only."""

    note: str
    job: Job | None = None
    repro: Repro | None = None
    reply: Reply | None = None
    approval: PlannedApproval | None = None
    keep: PlannedKeep | None = None


Preflight = Callable[[Job, Repro | None], None]  # raises UserError for what cannot run


def decide_comment(payload: Any, settings: IssueSettings, preflight: Preflight) -> Decided:
    action = field(payload, "action")
    if not isinstance(payload, dict):
        return Decided("ignored: the event payload is not a JSON object")
    if action is not None and action != "created":
        return Decided(f"ignored: a comment {action[:30]!r}, not created (edits are not commands)")
    body = field(payload, "comment", "body")
    parsed = parse_comment(body)
    if parsed is None:
        return Decided("ignored: the comment holds no /repromatrix line")
    issue = field(payload, "issue", "number", kind=int)
    comment = field(payload, "comment", "id", kind=int)
    if issue is None or issue < 1 or comment is None or comment < 1:
        return Decided("ignored: the payload has no issue.number or comment.id to answer")
    if field(payload, "comment", "user", "type") == "Bot":
        return Decided("ignored: the comment is a bot's")
    line = parsed.line

    def refuse(reason: str, usage: bool = True, author: str | None = None) -> Decided:
        """A reply; ``author``: an untrusted one's, said at most once a day (ack)."""
        refusal = Refusal(reason, line, usage=usage)
        return Decided(
            f"refused: {refusal.reason}",
            reply=Reply(issue=issue, comment=comment, body=refusal.reply(), author=author),
        )

    login = field(payload, "comment", "user", "login") or ""
    association = field(payload, "comment", "author_association") or ""
    trusted = bool(login and association) and is_trusted(login, association, settings)
    stranger = None if trusted else login[:60]
    if field(payload, "issue", "pull_request", kind=dict) is not None:
        return refuse(
            "commands run on issues only, not on pull requests (a pull request's code, "
            "perhaps a fork's, is never what a command runs); put the repro in an issue",
            usage=False,
            author=stranger,
        )
    if not login or not association:
        return refuse(
            "the event names no comment author or author association", usage=False, author=""
        )
    if not trusted:
        return refuse(
            f"@{login[:40]} is not among the authors trusted to run code here "
            f"(author association {association[:30]}). A maintainer can start it by "
            "commenting the same command.",
            usage=False,
            author=stranger,
        )
    if isinstance(parsed, Refusal):
        return refuse(parsed.reason)
    if parsed.kind == "approve":
        return _approved(payload, issue, comment, login, refuse)
    if parsed.kind == "keep":
        return _keep(payload, issue, comment, login, refuse)
    return _planned(parsed, payload, issue, comment, login, settings, preflight, refuse)


def _approved(
    payload: dict, issue: int, comment: int, login: str, refuse: Callable[[str], Decided]
) -> Decided:
    """/repromatrix approve: the issue's repro as the event has it is the watch's."""
    repro = _issue_repro(payload, login, "approve")
    if isinstance(repro, str):
        return refuse(repro)
    approval = PlannedApproval(
        issue=issue, comment=comment, sha256=repro.digest, by=login, how="approve",
        head=repro.head(),
    )  # fmt: skip
    return Decided(f"approve: #{issue} {repro.digest[:12]} by {login}", approval=approval)


def _issue_repro(payload: dict, login: str, step: str) -> Repro | str:
    """The issue's repro as the event has it (approve, keep), or why ``step`` has none."""
    try:
        repro = find_repro(field(payload, "issue", "body"), "issue")
    except UserError as err:
        return str(err)
    if repro is None or not LOGIN.match(login):
        return (f"nothing to {step}: the issue has no ```` ```python ```` block whose first "
                "line is `# repromatrix`")  # fmt: skip
    return repro


def _keep(
    payload: dict, issue: int, comment: int | None, login: str, refuse: Callable[[str], Decided]
) -> Decided:
    """/repromatrix keep (or the keep label): the issue's repro as the event has it, to
    be kept as a case once it is found to be the approved one (issue/keep.py)."""
    repro = _issue_repro(payload, login, "keep")
    if isinstance(repro, str):
        return refuse(repro)
    keep = PlannedKeep(
        issue=issue, comment=comment, sha256=repro.digest, by=login,
        packages=repro.packages(), pins=list(repro.needs),
    )  # fmt: skip
    return Decided(f"keep: #{issue} {repro.digest[:12]} by {login}", repro=repro, keep=keep)


def _planned(
    command: Command,
    payload: dict,
    issue: int,
    comment: int,
    login: str,
    settings: IssueSettings,
    preflight: Preflight,
    refuse: Callable[[str], Decided],
) -> Decided:
    try:
        repro = None
        if command.case is None:
            repro = find_repro(field(payload, "comment", "body"), "comment") or find_repro(
                field(payload, "issue", "body"), "issue"
            )
            if repro is None:
                return refuse(
                    "no repro: neither the comment nor the issue has a ```` ```python ```` block "
                    "whose first line is `# repromatrix`, and no --case was given"
                )
        job = make_job(
            command, issue=issue, comment=comment, author=login, repro=repro, settings=settings
        )
        preflight(job, repro)
    except UserError as err:
        return refuse(str(err))
    return Decided(f"run: #{issue} {command.line}", job=job, repro=repro)


def comment_plan(
    payload: Any, settings: IssueSettings, preflight: Preflight, repository: str
) -> tuple[Plan, dict[int, str]]:
    """The plan of one issue_comment event, and the repro texts to write beside it."""
    decided = decide_comment(payload, settings, preflight)
    plan = Plan(
        event="issue_comment", repository=repository, bots=settings.bots, notes=[decided.note]
    )
    repros: dict[int, str] = {}
    if decided.job is not None:
        plan.jobs.append(decided.job)
        if decided.repro is not None:
            repros[decided.job.issue] = decided.repro.code
    if decided.reply is not None:
        plan.replies.append(decided.reply)
    if decided.approval is not None:
        plan.approvals.append(decided.approval)
    if decided.keep is not None and decided.repro is not None:
        plan.keeps.append(decided.keep)
        repros[decided.keep.issue] = decided.repro.code
    return plan, repros


def issues_plan(
    payload: Any, settings: IssueSettings, permission: Callable[[str], str], repository: str
) -> tuple[Plan, dict[int, str]]:
    """An issues event's plan (``labeled_plan``) and the repro of a keep, to write
    beside it (the code the keep job checks against the approved digest)."""
    plan = labeled_plan(payload, settings, permission, repository)
    repros = {}
    for keep in plan.keeps:
        repro = find_repro(field(payload, "issue", "body"), "issue")
        if repro is not None and repro.digest == keep.sha256:
            repros[keep.issue] = repro.code
    return plan, repros


def labeled_plan(
    payload: Any, settings: IssueSettings, permission: Callable[[str], str], repository: str
) -> Plan:
    """An issues ``labeled`` event, put by a trusted sender: the watch's label approves
    the issue's repro as the event has it, the keep label keeps it as a case (issue/
    keep.py checks it is the approved one); anything else is a note."""
    plan = Plan(event="issues", repository=repository, bots=settings.bots)
    issue = field(payload, "issue", "number", kind=int)
    login = field(payload, "sender", "login") or ""
    label = field(payload, "label", "name")
    if field(payload, "action") != "labeled" or label not in (settings.label, settings.keep_label):
        plan.notes.append(f"ignored: not the {settings.label!r} or {settings.keep_label!r} label")
    elif issue is None or issue < 1 or field(payload, "issue", "pull_request", kind=dict):
        plan.notes.append("ignored: the label is not on an issue")
    elif not trusted_sender(login, settings, permission):
        plan.notes.append(f"ignored: {login[:40]!r} may not approve a repro (not trusted)")
    else:
        try:
            repro = find_repro(field(payload, "issue", "body"), "issue")
        except UserError as err:
            plan.replies.append(
                Reply(issue=issue, body=f"repromatrix cannot watch this issue: {err}")
            )
            return plan
        if repro is None:
            plan.notes.append(f"#{issue}: labelled, but its body has no repro block")
        elif label == settings.keep_label:
            decided = _keep(payload, issue, None, login, lambda reason: Decided(reason))
            if decided.keep is not None:
                plan.keeps.append(decided.keep)
            plan.notes.append(decided.note)
        else:
            plan.approvals.append(
                PlannedApproval(
                    issue=issue, sha256=repro.digest, by=login, how="label", head=repro.head()
                )
            )
            plan.notes.append(f"approve: #{issue} {repro.digest[:12]} labelled by {login}")
    return plan


def trusted_sender(login: str, settings: IssueSettings, permission: Callable[[str], str]) -> bool:
    """A sender trusted for a label or a close: named in the settings, or may write."""
    if not LOGIN.match(login):
        return False
    names = {name.lower() for name in settings.trusted}
    return login.lower() in names or permission(login) in TRUSTED_PERMISSIONS


def preflight_in(folder: Path, cases: Path, settings: IssueSettings) -> Preflight:
    """The preflight of the parse job: the repro written where the run will find it,
    then the checks of the job's hunt (offered.preflight: its plan, the limits)."""
    from repromatrix.issue.offered import Place, preflight

    def check(job: Job, repro: Repro | None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if repro is not None:
            (folder / job.repro_name()).write_text(repro.code, encoding="utf-8")
        preflight(job, Place(folder, cases, folder / job.kind), settings)

    return check
