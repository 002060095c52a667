"""The tracking issue: one GitHub issue that follows the nightly, night after night.

Pure: given last night's state (kept in the issue body as hidden JSON, so the issue
is its own memory and nothing else has to survive between runs), tonight's judged
results and the hunts dispatched, it says what the issue must say and what to do
with it. nightly/triage.py's caller does the talking to GitHub.

- a *failure* is an unexpected failing case of tonight's run (failed, error,
  crashed, timed-out: ``outcomes.FAILURES``; known-broken and flaky are not), a
  combination that does not install, or one whose CI job was lost (``merge
  --tier``: its message names the job);
- *new*: failing tonight and not tracked yet. It makes the run red, whether or not
  there is a baseline (a first night's failure is new; so is one the baseline cannot
  vouch for because the baseline failed too or expired);
- *still failing*: tracked, with the night it was first seen and that run's link;
- *fixed*: tracked last night, passing (or registered as known-broken) tonight;
- *possibly fixed*: a known-broken case passing inside its registered range, listed
  with the exact edit to the registry;
- *hunts*: bisects and culprit hunts dispatched, with the answer each posted on the
  issue once it has (nightly/hunt_comment.py: a comment of the bot's own, its first
  line the hunt's marker; nobody else's comment speaks for a hunt).

The issue is opened when something fails or needs an edit, updated in place while
it does, closed with a comment once everything is back to pass / known-broken, and
reopened when something breaks again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from repromatrix.github.hidden import hidden, read_hidden
from repromatrix.github.inert import inert
from repromatrix.github.markdown import COMMENT_LIMIT, code_block, code_span, link, table_cell, text
from repromatrix.outcomes import FAILURES, CaseStatus, CombinationStatus
from repromatrix.reports.view import run_sources
from repromatrix.results import CombinationResult, Results
from repromatrix.verdicts.causes import by_cause as causes
from repromatrix.verdicts.causes import combination_cause, failure_cause, new_failures

STATE_SCHEMA = 1
INSTALL = "<install>"  # the "case" of a combination that does not install
LOST = "<lost>"  # the "case" of a combination whose CI job was lost (its message names the job)
# A combination that failed before any case: its status -> the "case" it is tracked as.
NO_CASES = {CombinationStatus.INSTALL_ERROR: INSTALL, CombinationStatus.LOST: LOST}
MESSAGE_LIMIT = 200


@dataclass
class Failure:
    combination: str
    case: str
    status: str
    message: str = ""
    since: str = ""  # the date of the night it was first seen ("" : before tracking)
    since_run: str = ""  # that night's run link
    signature: str = ""  # the key of what it died of (verdicts/causes.py): new ones group by it

    @property
    def key(self) -> str:
        return f"{self.combination} {self.case}"


@dataclass
class Dispatch:
    """A hunt the nightly sent to its workflow (a bisect, a culprit hunt), as the
    tracking issue lists it until its answer comes back (hunts.hunt.Hunt is the
    hunt itself)."""

    key: str  # bisect:<package>:<good>:<bad>:<case> | culprit:<combination>:<case>
    workflow: str
    what: str  # "transformers 4.52.4..4.53.0" / "tf-latest: 3 packages moved"
    combination: str
    case: str
    dispatched: str  # date
    run: str = ""  # the nightly run that dispatched it
    answer: str = ""
    answer_url: str = ""


@dataclass
class TrackingState:
    failures: dict[str, Failure] = field(default_factory=dict)
    hunts: list[Dispatch] = field(default_factory=list)
    last_run: str = ""

    def hidden(self) -> str:
        """The body's first line: this state, in the one hidden-state codec."""
        data = {
            "schema": STATE_SCHEMA,
            "failures": [asdict(f) for f in self.failures.values()],
            "hunts": [asdict(h) for h in self.hunts],
            "last_run": self.last_run,
        }
        return hidden("tracking", data)


def read_state(body: str) -> TrackingState | None:
    """The state an issue body carries on its first line (where render writes it; the
    summary quoted below it cannot stand in for it); None when it carries none (or an
    unreadable one: the issue is then rebuilt from tonight alone, never a traceback)."""
    data = read_hidden(body, "tracking", line="first")
    if not isinstance(data, dict):
        return None
    try:
        if data.get("schema") != STATE_SCHEMA:
            return None
        failures = [Failure(**f) for f in data.get("failures", [])]
        hunts = [Dispatch(**h) for h in data.get("hunts", [])]
    except (ValueError, TypeError, AttributeError):
        return None
    return TrackingState(
        failures={f.key: f for f in failures}, hunts=hunts, last_run=str(data.get("last_run", ""))
    )


@dataclass(frozen=True)
class PossiblyFixed:
    combination: str
    case: str
    link: str
    edit: str  # a diff of cases/known_issues.yaml's entry


@dataclass(frozen=True)
class Night:
    """What tonight's run knows about itself."""

    results: Results  # judged (verdicts.judge)
    date: str
    run: str = ""  # this run's link
    baseline_note: str = ""  # why there is no baseline, when there is none
    registry_file: str = "cases/known_issues.yaml"


@dataclass
class Update:
    state: TrackingState
    new: list[Failure]
    still: list[Failure]
    fixed: list[Failure]
    possibly_fixed: list[PossiblyFixed]
    body: str = ""

    @property
    def failing(self) -> bool:
        return bool(self.new or self.still)

    @property
    def needs_issue(self) -> bool:
        """Something a person must act on: a failure, or a registry entry to narrow."""
        return self.failing or bool(self.possibly_fixed)

    def closing_comment(self, night: Night) -> str:
        fixed = "".join(f"\n- {_ids(f)}" for f in self.fixed)
        run = f" ({link('run', night.run)})" if night.run else ""
        return _posted(
            f"Everything is back to pass / known-broken as of the nightly of {text(night.date)}"
            f"{run}.{' Fixed since the last run:' if fixed else ''}{fixed}\n\nClosing; "
            "the nightly reopens this issue when something breaks again.",
            night,
        )

    def reopening_comment(self, night: Night) -> str:
        lines = "".join(f"\n- {_ids(f)}: {text(f.status)}" for f in self.new)
        run = link("run", night.run) if night.run else "this run"
        return _posted(f"Broken again in the nightly of {text(night.date)} ({run}):{lines}", night)


def _ids(failure: Failure) -> str:
    return f"{code_span(failure.combination)} {code_span(failure.case)}"


def _posted(markdown: str, night: Night, limit: int = COMMENT_LIMIT) -> str:
    """What the tracking issue shows, through the one renderer: inert but for this
    run's own links, within GitHub's limit."""
    note = "_… cut to fit GitHub's limit: the run's triage.json lists everything._"
    return inert(markdown, limit=limit, note=note, links=[night.run] if night.run else [])


def failures_of(results: Results) -> dict[str, Failure]:
    """Tonight's unexpected failures, by key."""
    found: dict[str, Failure] = {}
    for combo in results.combinations:
        if combo.status in NO_CASES:
            case = NO_CASES[combo.status]
            failure = Failure(combo.id, case, combo.status.value, _short(combo.message))
            failure.signature = combination_cause(combo).key
            found[failure.key] = failure
        for case in combo.cases:
            if case.status in FAILURES:
                failure = Failure(combo.id, case.id, case.status.value, _short(case.message))
                failure.signature = failure_cause(combo, case).key
                found[failure.key] = failure
    return found


def follow(
    previous: TrackingState | None,
    night: Night,
    *,
    baseline: Results | None = None,
    hunts: list[Dispatch] = (),  # type: ignore[assignment]
    answers: dict[str, tuple[str, str]] | None = None,
    summary: str = "",
) -> Update:
    """Tonight's update of the tracking issue.

    ``previous``: the state of the open (or last closed) tracking issue; without one,
    the baseline's word is taken for what was already failing (a case the verdicts
    call still-failing is not new). ``answers``: hunt key -> (answer line, url), read
    from the issue's comments. A possibly-fixed case's edit comes from the entry its
    result records (``known_issue``: the pattern, ``when`` and link the verdicts used)."""
    tonight = failures_of(night.results)
    if previous is not None:
        tracked = previous.failures
    else:  # last night's results are the only memory: what failed there is not new
        tracked = failures_of(baseline) if baseline is not None else {}
    new, still = [], []
    for key, failure in tonight.items():
        before = tracked.get(key)
        if before is None:
            failure.since, failure.since_run = night.date, night.run
            new.append(failure)
        else:
            failure.since, failure.since_run = before.since, before.since_run
            still.append(failure)
    fixed = [f for key, f in (previous.failures if previous else {}).items() if key not in tonight]
    state = TrackingState(
        failures={f.key: f for f in [*new, *still]},
        hunts=_hunts(previous, hunts, answers or {}, keep={f.key for f in [*new, *still]}),
        last_run=night.run,
    )
    update = Update(state, new, still, fixed, _possibly_fixed(night))
    update.body = render(update, night, summary)
    return update


def _hunts(
    previous: TrackingState | None,
    tonight: list[Dispatch],
    answers: dict[str, tuple[str, str]],
    keep: set[str],
) -> list[Dispatch]:
    """Earlier hunts for failures still tracked, tonight's, each with its answer."""
    hunts = {h.key: h for h in (previous.hunts if previous else []) if _failure_key(h) in keep}
    for hunt in tonight:
        hunts.setdefault(hunt.key, hunt)
    for key, hunt in hunts.items():
        if key in answers:
            hunt.answer, hunt.answer_url = answers[key]
    return list(hunts.values())


def _failure_key(hunt: Dispatch) -> str:
    return f"{hunt.combination} {hunt.case}"


def _possibly_fixed(night: Night) -> list[PossiblyFixed]:
    found = []
    for combo in night.results.combinations:
        for case in combo.cases:
            entry = case.known_issue
            if case.status != CaseStatus.POSSIBLY_FIXED or not entry:
                continue
            pattern = str(entry.get("case", case.id))
            edit = registry_edit(night.registry_file, pattern, entry.get("when", {}), combo)
            found.append(PossiblyFixed(combo.id, case.id, str(entry.get("link", "")), edit))
    return found


def registry_edit(
    registry_file: str, pattern: str, when: dict[str, str], combo: CombinationResult
) -> str:
    """The edit that takes ``combo``'s passing versions out of the entry's range: each
    package's upper bound lowered to the version that passed (a diff to apply by
    hand; the measured boundary may be lower still, which a bisect would say)."""
    narrowed = {}
    for package, spec in when.items():
        version = combo.resolved.get(package)
        clauses = [c for c in spec.split(",") if c and not c.lstrip().startswith("<")]
        narrowed[package] = ",".join([*clauses, f"<{version}"]) if version else spec

    def flow(mapping: dict[str, str]) -> str:
        return "{" + ", ".join(f'{k}: "{v}"' for k, v in mapping.items()) + "}"

    return (
        f"--- {registry_file}\n+++ {registry_file}\n"
        f" - case: {pattern}\n-  when: {flow(when)}\n+  when: {flow(narrowed)}"
    )


def _short(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"


# --------------------------------------------------------------------------- rendering


def render(update: Update, night: Night, summary: str = "") -> str:
    """The issue body: state, then what is new, still failing, fixed, possibly fixed
    and hunted, then tonight's summary.md (collapsed; cut first when over GitHub's
    limit). Everything below the state line goes through the one renderer
    (github/inert.py): the body keeps only its own links (this run's, the nights'
    runs, the hunts' answers) and fits GitHub's limit."""
    run = link("run", night.run) if night.run else "this run"
    head = [
        f"## Nightly of {text(night.date)}: {len(update.new)} new, {len(update.still)} still "
        f"failing, {len(update.fixed)} fixed ({run})",
        "",
    ]
    if night.baseline_note:
        head += [f"> {text(night.baseline_note)}", ""]
    trees = run_sources(night.results)  # the user's own package: which tree tonight built
    if trees:
        head += ["Your source: " + ", ".join(code_span(t.label()) for t in trees), ""]
    parts = [
        _new_by_cause(update.new, night.results),
        _table("Still failing", update.still, with_since=True),
        _fixed(update.fixed),
        _possibly(update.possibly_fixed),
        _hunt_lines(update.state.hunts),
    ]
    body = "\n".join(head) + "\n".join(p for p in parts if p)
    if not update.needs_issue:
        body += "\nEverything is back to pass / known-broken.\n"
    state = update.state.hidden()
    links = [u for u in [night.run, *_links(update)] if u]
    room = COMMENT_LIMIT - len(state) - 1
    shown = inert(
        body, limit=room - 200 if summary else room, note="_… cut (triage.json)._", links=links
    )
    if summary:
        folded = inert(summary, limit=max(room - len(shown) - 100, 0), note="(cut)")
        shown += f"\n\n<details><summary>Tonight's summary</summary>\n\n{folded}\n\n</details>"
    return f"{state}\n{shown}\n"


def _links(update: Update) -> list[str]:
    """The links the body makes itself: each failure's first night, each hunt's answer."""
    failures = [f.since_run for f in [*update.new, *update.still, *update.fixed]]
    return [*failures, *(h.answer_url for h in update.state.hunts)]


def by_cause(new: list[Failure], results: Results) -> list[tuple[str, list[Failure]]]:
    """New failures grouped by signature, the largest group first: what each died of
    (one line) and its failures."""
    said = {c.key: c.signature.line() for c in causes(new_failures(results))}
    groups: dict[str, list[Failure]] = {}
    for failure in new:
        groups.setdefault(failure.signature, []).append(failure)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    return [(said.get(key) or failures[0].message, failures) for key, failures in ordered]


def _new_by_cause(new: list[Failure], results: Results) -> str:
    """New failures, one line per cause, with the combinations it covers."""
    if not new:
        return ""
    groups = by_cause(new, results)
    failures = f"{len(new)} failure" + ("s" if len(new) != 1 else "")
    causes = f"{len(groups)} cause" + ("s" if len(groups) != 1 else "")
    lines = [f"### New tonight: {failures}, {causes}", ""]
    for said, failures in groups:
        statuses = Counter(f.status for f in failures)
        counted = ", ".join(f"{n} {status}" for status, n in statuses.most_common())
        covered = ", ".join(_ids(f) for f in failures[:8])
        more = f" (+{len(failures) - 8})" if len(failures) > 8 else ""
        lines.append(f"- {code_span(said)}: {counted}: {covered}{more}")
    return "\n".join([*lines, ""]) + "\n"


def _table(title: str, failures: list[Failure], *, with_since: bool) -> str:
    if not failures:
        return ""
    head = (
        "| combination | case | status | since | error |"
        if with_since
        else ("| combination | case | status | error |")
    )
    rule = "|---|---|---|---|---|" if with_since else "|---|---|---|---|"
    rows = []
    for f in failures:
        since = link(f.since, f.since_run) if f.since_run else text(f.since or "before tracking")
        cells = [code_span(f.combination, cell=True), code_span(f.case, cell=True), text(f.status)]
        cells += [since] if with_since else []
        rows.append("| " + " | ".join([*cells, table_cell(f.message)]) + " |")
    return "\n".join([f"### {title}", "", head, rule, *rows, ""]) + "\n"


def _fixed(fixed: list[Failure]) -> str:
    if not fixed:
        return ""
    lines = [f"- {_ids(f)} (failing since {text(f.since or '?')})" for f in fixed]
    return "\n".join(["### Fixed since the last run", "", *lines, ""]) + "\n"


def _possibly(found: list[PossiblyFixed]) -> str:
    if not found:
        return ""
    lines = ["### Possibly fixed: known issues that passed inside their range", ""]
    for p in found:
        diff = code_block(p.edit, "diff").rstrip("\n").split("\n")
        lines += [
            f"- {_ids(p)} passes ({text(p.link)}); narrow the range:",
            "",
            *("  " + line for line in diff),
        ]
    return "\n".join([*lines, ""]) + "\n"


def _hunt_lines(hunts: list[Dispatch]) -> str:
    if not hunts:
        return ""
    lines = ["### Hunts", ""]
    for h in hunts:
        answer = (
            f"**{text(h.answer)}**"
            + (f" ({link('comment', h.answer_url)})" if h.answer_url else "")
            if h.answer
            else "waiting for its answer"
        )
        lines.append(
            f"- {text(h.workflow)}: {text(h.what)} ({code_span(h.case)}), dispatched "
            f"{text(h.dispatched)}: {answer}"
        )
    return "\n".join([*lines, ""]) + "\n"


def dump(update: Update) -> dict[str, Any]:
    """For triage.json."""
    return {
        "new": [asdict(f) for f in update.new],
        "still_failing": [asdict(f) for f in update.still],
        "fixed": [asdict(f) for f in update.fixed],
        "possibly_fixed": [asdict(p) for p in update.possibly_fixed],
        "hunts": [asdict(h) for h in update.state.hunts],
    }
