"""Tonight's triage, carried out on GitHub: the tracking issue opened, updated,
closed or reopened (tracking.py decides), and the hunts dispatched with the issue's
number so that their answers come back to it.

Order matters for what survives a failure: triage.json and the step outputs are
written before the first gh call (the night's results were uploaded before this
step), so a gh that is not authenticated or is rate limited costs the issue, never
the results; and it is one line naming the gh call, never a traceback.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.github.authors import DEFAULT_BOTS
from repromatrix.github.client import GitHub
from repromatrix.hunt_table import HUNTS
from repromatrix.nightly import hunt_comment, kept, tracking
from repromatrix.nightly.triage import Triage, triage
from repromatrix.results import Results, write_json_atomic
from repromatrix.verdicts.knownissues import Registry

# The hunts the nightly dispatches, and to which workflow (the table's rows).
WORKFLOWS = {row.name: row.workflow for row in HUNTS if row.workflow}


@dataclass
class FollowOptions:
    tonight: Results
    folder: Path  # where triage.json goes
    baseline: Results | None = None
    baseline_note: str = ""
    registry: Registry | None = None
    registry_file: str = "cases/known_issues.yaml"
    cells: Mapping[str, str] = field(default_factory=dict)
    limit: int = 5
    summary: Path | None = None  # given: keep the tracking issue
    label: str = "nightly-regression"
    title: str = "Nightly: regressions"
    dispatch: bool = False
    # Each hunt the triage asks for -> the workflow it is dispatched to (hunt_table.py).
    workflows: Mapping[str, str] = field(default_factory=lambda: dict(WORKFLOWS))
    ref: str | None = None
    run: str = ""  # this run's link
    github_output: Path | None = None
    # What the nightly ran with, handed to each hunt: its runner labels and where it
    # installed repromatrix from (a hand-started nightly's inputs, not the defaults).
    runner: str = ""
    repromatrix: str = ""
    # A combination's own runner (matrix.yaml's runner:, as JSON), where it names one: its
    # hunts run there (a 2-GPU combination's bisect on the 2-GPU runner), not on `runner`.
    runners: Mapping[str, str] = field(default_factory=dict)
    # Whose comments on the tracking issue are the hunts' answers: the workflow's own
    # bot identity (github/authors.py; .github/repromatrix.yml's issue.bots).
    bots: Sequence[str] = DEFAULT_BOTS


@dataclass
class Followed:
    found: Triage
    update: tracking.Update
    issue: int | None = None
    gh_error: str = ""  # the gh call that failed, when one did

    @property
    def new(self) -> bool:
        return bool(self.update.new)


def follow_nightly(
    options: FollowOptions, client: GitHub, say: Callable[[str], None] = print
) -> Followed:
    found = triage(
        options.tonight,
        options.baseline,
        limit=options.limit,
        registry=options.registry,
        cells=options.cells,
    )
    night = tracking.Night(
        results=options.tonight,
        date=_date(options.tonight),
        run=options.run,
        baseline_note=options.baseline_note,
        registry_file=options.registry_file,
    )
    hunts = _hunts(options, found, night) if options.dispatch else []
    # Without an issue to read, tonight is judged against last night's results alone.
    alone = tracking.follow(None, night, baseline=options.baseline, hunts=hunts)
    followed = Followed(found, alone)
    _write(options, followed)
    for line in _lines(followed, options):
        say(line)
    try:
        if options.summary is not None:
            _track(options, client, followed, night, hunts, say)
            _tell_kept(options, client, followed.update, night, say)
        if options.dispatch:
            _dispatch(options, client, followed)
    except UserError as err:
        followed.gh_error = str(err)
    _write(options, followed)
    _outputs(options, followed)
    return followed


def _track(
    options: FollowOptions,
    client: GitHub,
    followed: Followed,
    night: tracking.Night,
    hunts: list[tracking.Dispatch],
    say: Callable[[str], None],
) -> None:
    issues = client.issues(options.label)
    open_ = [i for i in issues if str(i.get("state", "")).upper() == "OPEN"]
    open_.sort(key=lambda i: i.get("title") != options.title)  # the exact title first
    closed = [i for i in issues if str(i.get("state", "")).upper() == "CLOSED"]
    current = open_[0] if open_ else (closed[0] if closed else None)
    previous = tracking.read_state(str(current.get("body", ""))) if current else None
    number = int(current["number"]) if current else None
    answers = (
        hunt_comment.answers_in(client.comments(number), options.bots) if open_ and number else {}
    )
    summary = options.summary.read_text() if options.summary.is_file() else ""
    update = tracking.follow(
        previous,
        night,
        baseline=options.baseline,
        hunts=hunts,
        answers=answers,
        summary=summary,
    )
    followed.update = update
    _write(options, followed)  # the outputs now say what the issue will say
    body = options.folder / "tracking-issue.md"
    body.write_text(update.body)
    if open_ and number is not None:
        client.edit_body(number, body)
        if update.needs_issue:
            say(f"updated tracking issue #{number}")
        else:
            comment = options.folder / "tracking-closing.md"
            comment.write_text(update.closing_comment(night))
            client.post(number, comment)
            client.close(number)
            say(f"closed tracking issue #{number}: everything is back to pass / known-broken")
        followed.issue = number
    elif update.needs_issue and closed and number is not None:
        client.reopen(number)
        client.edit_body(number, body)
        comment = options.folder / "tracking-reopening.md"
        comment.write_text(update.reopening_comment(night))
        client.post(number, comment)
        say(f"reopened tracking issue #{number}")
        followed.issue = number
    elif update.needs_issue:
        followed.issue = client.create_issue(title=options.title, label=options.label, body=body)
        if followed.issue is not None:
            say(f"opened tracking issue #{followed.issue}")
    _write(options, followed)


def _tell_kept(
    options: FollowOptions,
    client: GitHub,
    update: tracking.Update,
    night: tracking.Night,
    say: Callable[[str], None],
) -> None:
    """Kept issue repros' transitions on the issues they came from (nightly/kept.py)."""
    for told in kept.transitions(update, options.baseline, night.date, night.run):
        body = options.folder / f"kept-{told.issue}.md"
        body.write_text(told.body)
        client.post(told.issue, body)
        say(f"told #{told.issue}: its kept case changed tonight")


def _dispatch(options: FollowOptions, client: GitHub, followed: Followed) -> None:
    """Each hunt, told the tracking issue's number so that it comments its answer there."""
    issue = followed.issue
    same = {
        k: v for k, v in (("runner", options.runner), ("repromatrix", options.repromatrix)) if v
    }
    for request in followed.found.requests():
        inputs = {**request.workflow_inputs(issue), **same, **_own(options, request.combination)}
        client.dispatch(options.workflows[request.HUNT], inputs, ref=options.ref)


def _own(options: FollowOptions, combination: str) -> dict[str, str]:
    runner = options.runners.get(combination)
    return {"runner": runner} if runner else {}


def _hunts(options: FollowOptions, found: Triage, night: tracking.Night) -> list[tracking.Dispatch]:
    """Tonight's hunts as the issue lists them, under the workflow each is sent to."""
    sent = [(options.workflows[request.HUNT], request) for request in found.requests()]
    return [
        tracking.Dispatch(
            key=request.hunt,
            workflow=workflow,
            what=request.what,
            combination=request.combination,
            case=request.case,
            dispatched=night.date,
            run=night.run,
        )
        for workflow, request in sent
    ]


def _date(results: Results) -> str:
    started = results.run.started or dt.datetime.now(dt.timezone.utc).isoformat()
    return started[:10]


def _lines(followed: Followed, options: FollowOptions) -> list[str]:
    lines = []
    if options.baseline_note:
        lines.append(options.baseline_note)
    for r in followed.found.regressions:
        lines.append(f"regressed: {r.combination} {r.case} ({r.before} -> {r.now})")
    for said, failures in tracking.by_cause(followed.update.new, options.tonight):
        covered = ", ".join(f"{f.combination} {f.case} ({f.status})" for f in failures[:8])
        more = f" (+{len(failures) - 8})" if len(failures) > 8 else ""
        lines.append(f"new: {said}: {covered}{more}")
    for line in followed.found.not_bisected:
        lines.append(f"not bisected: {line}")
    for request in followed.found.bisects:
        lines.append(
            f"culprit hunt: {request.package} {request.good}..{request.bad} ({request.reason})"
        )
    for hunt in followed.found.culprits:
        lines.append(f"culprit hunt: {hunt.combination} {hunt.case}: {', '.join(hunt.changed)}")
    for p in followed.update.possibly_fixed:
        lines.append(f"possibly fixed: {p.combination} {p.case}: narrow {options.registry_file}")
    return lines


def _write(options: FollowOptions, followed: Followed) -> None:
    """triage.json, rewritten as the issue's fate becomes known."""
    write_json_atomic(
        options.folder / "triage.json",
        {
            **followed.found.dump(),
            "new": followed.new,
            "tracking": tracking.dump(followed.update),
            "issue": followed.issue,
            "gh_error": followed.gh_error,
        },
    )


def _outputs(options: FollowOptions, followed: Followed) -> None:
    if options.github_output is None:
        return
    outputs = {
        "new": "true" if followed.new else "false",
        "regressed": "true" if followed.found.regressed else "false",
        "issue": str(followed.issue or ""),
        "bisects": str(len(followed.found.bisects)),
        "culprits": str(len(followed.found.culprits)),
    }
    with open(options.github_output, "a") as handle:
        handle.writelines(f"{k}={v}\n" for k, v in outputs.items())
