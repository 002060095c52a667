"""From raw case outcomes to statuses and one verdict per combination.

Inputs: the stored results (each case's raw ``outcome``), the known-issue registry,
and optionally a baseline run. Nothing here runs anything, so re-rendering a report
with a newer registry or another baseline gives new verdicts from the same results.

Case status
    the raw outcome, except that a failure inside a registered known issue is
    ``known-broken`` and a pass inside one is ``possibly-fixed``. ``flaky`` (failed,
    then passed in a fresh interpreter) stays flaky and is never a regression.

Regression, against two baselines
    1. the baseline run, matched by combination id + case id: passed there and
       fails now -> regressed; failed there and passes now -> fixed;
    2. neighbours in this run: combinations whose resolved versions differ from
       this one in exactly one matrix package. The nearest one where the case
       passes names the transition ("regressed between transformers 4.52.4 and
       4.53.0 (torch 2.13.0, peft 0.17.1)") and the bisect command for it. A
       newer neighbour that passes means the bug was fixed upstream: reported as
       such (with ``--find first-good``), not as a regression.

Combination verdict, first that applies
    in the order of outcomes.VERDICT_TABLE, each by its rule here (RULES):
    LOST (merge found no result for it: its CI job was lost), INSTALL-ERROR, SKIPPED
    (could not run here, or every case skipped), REGRESSED, FAILING (an unexpected
    failure that no baseline shows as new), FIXED, KNOWN-BROKEN, PASS. The exit
    status is non-zero exactly when some verdict is one the table calls unexpected
    (REGRESSED, FAILING, LOST or INSTALL-ERROR).
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Iterable

from repromatrix.outcomes import (
    COLLECTION_ID,
    FAILURES,
    UNEXPECTED,
    VERDICT_TABLE,
    CaseOutcome,
    CaseStatus,
    CombinationStatus,
    Verdict,
)
from repromatrix.redact import portable_path
from repromatrix.results import (
    CaseChange,
    CaseResult,
    Change,
    CombinationResult,
    Results,
    Summary,
    Transition,
    set_fields,
)
from repromatrix.results.bulk import without_cycle_collection
from repromatrix.verdicts.knownissues import KnownIssue, Registry
from repromatrix.verdicts.transitions import (
    Neighbours,
    baseline_transition,
    changed_packages,
    changed_sources,
    outcome_in,
    raw_outcome,
    source_change_text,
)

PASSED = CaseOutcome.PASSED
# The order counts are listed in (summary.verdicts, summary.statuses).
VERDICTS = tuple(row.verdict for row in VERDICT_TABLE)
CASE_STATUSES = tuple(CaseStatus)


def case_repro(combination: CombinationResult, case_id: str | None = None) -> str:
    """One line that reruns exactly this combination and case."""
    command = combination.repro or f"nox -s {combination.id}"
    if case_id and case_id != COLLECTION_ID:
        command += f" -- {shlex.quote(case_id)}"
    return command


def is_regression(case: CaseResult) -> bool:
    """A failure nobody expected that a baseline shows passing."""
    if case.status not in FAILURES:
        return False  # passed, skipped, flaky, known-broken, possibly-fixed
    if case.change == "regressed":
        return True
    if case.change == "still-failing":
        return False  # failing in the baseline run too: not new, whatever neighbours say
    return bool(case.transitions) and case.transitions[0].direction == "regressed"


def is_fixed(case: CaseResult) -> bool:
    return case.change == "fixed" or case.status == CaseStatus.POSSIBLY_FIXED


def exit_code(results: Results) -> int:
    return 1 if any(c.verdict in UNEXPECTED for c in results.combinations) else 0


# --------------------------------------------------------------------------- judging


@without_cycle_collection
def judge(
    results: Results,
    registry: Registry | None = None,
    baseline: Results | None = None,
    *,
    baseline_name: str | None = None,
) -> Results:
    """Fill in the verdict fields of ``results`` (in place; returned for chaining).

    Every field this writes is reset first: judging twice, or with another
    registry or baseline, gives the same answer as judging once.
    """
    registry = registry or Registry()
    for combination in results.combinations:
        match = registry.matcher(combination)
        for case in combination.cases:
            _apply_known_issue(case, match)

    neighbours = Neighbours(results.combinations)
    before = {c.id: c for c in baseline.combinations} if baseline is not None else {}
    for combination in results.combinations:
        previous = before.get(combination.id)
        for case in combination.cases:
            change, then = _compare_with_baseline(case, previous, has_baseline=baseline is not None)
            transitions: list[Transition] = []
            if case.outcome in FAILURES:
                if change == "regressed" and previous is not None:
                    moved = baseline_transition(combination, previous, case.id)
                    transitions += [moved] if moved else []
                transitions += neighbours.transitions(combination, case.id)
            # The judge's own values (enums, models it built): set, not validated again.
            set_fields(case, change=change, baseline_status=then, transitions=transitions)
        verdict, reason = _verdict(combination)
        set_fields(combination, verdict=verdict, verdict_reason=reason)

    regressions, fixed = _changes(results, baseline, before)
    summary = Summary(
        verdicts=_ordered_counts((c.verdict or "" for c in results.combinations), VERDICTS),
        statuses=_ordered_counts(
            (case.status for c in results.combinations for case in c.cases), CASE_STATUSES
        ),
        exit_code=exit_code(results),
        baseline=(
            {"run": baseline.run.id, "started": baseline.run.started, "file": baseline_name}
            if baseline is not None
            else None
        ),
        known_issues=portable_path(registry.source) if registry.source else None,
    )
    set_fields(results, regressions=regressions, fixed=fixed, summary=summary)
    return results


# A raw outcome as a case status (the same word).
_AS_STATUS = {outcome: CaseStatus(outcome.value) for outcome in CaseOutcome}


def _apply_known_issue(case: CaseResult, match: Callable[[str], KnownIssue | None]) -> None:
    outcome = raw_outcome(case)
    status, known_issue = _AS_STATUS[outcome], None
    # skipped and flaky say nothing about a known bug
    if outcome in FAILURES or outcome == PASSED:
        issue = match(case.id)
        if issue is not None:
            status = CaseStatus.KNOWN_BROKEN if outcome in FAILURES else CaseStatus.POSSIBLY_FIXED
            known_issue = issue.describe()
    set_fields(case, outcome=outcome, status=status, known_issue=known_issue)


def _compare_with_baseline(
    case: CaseResult, previous: CombinationResult | None, *, has_baseline: bool
) -> tuple[CaseChange | None, CaseStatus | None]:
    """The case's change against the baseline run, and its status there."""
    if not has_baseline:
        return None, None
    then = outcome_in(previous, case.id) if previous is not None else None
    now = case.outcome
    change: CaseChange | None = None
    if now in FAILURES:
        if then == PASSED:
            change = "regressed"
        elif then in FAILURES:
            change = "still-failing"
        else:
            change = "new"
    elif now == PASSED and then in FAILURES:
        change = "fixed"
    return change, _AS_STATUS[then] if then is not None else None


# --------------------------------------------------------------------------- verdicts


Found = tuple[Verdict, str] | None


def _lost(combination: CombinationResult) -> Found:
    if combination.status != CombinationStatus.LOST:
        return None
    return Verdict.LOST, combination.message or "no result came back from the job that ran it"


def _install_error(combination: CombinationResult) -> Found:
    if combination.status != CombinationStatus.INSTALL_ERROR:
        return None
    return Verdict.INSTALL_ERROR, combination.message or "the environment could not be built"


def _skipped(combination: CombinationResult) -> Found:
    cases = combination.cases
    if not cases:
        return Verdict.SKIPPED, combination.message or "no case ran"
    if all(c.status == CaseStatus.SKIPPED for c in cases):
        reason = cases[0].message or combination.message or "skipped"
        return Verdict.SKIPPED, f"all {len(cases)} cases skipped: {reason}"
    return None


def _regressed(combination: CombinationResult) -> Found:
    regressed = [c for c in combination.cases if is_regression(c)]
    if not regressed:
        return None
    first = regressed[0]
    why = "passed in the baseline run" if first.change == "regressed" else first.transitions[0].text
    return Verdict.REGRESSED, f"{first.id}: {why}{_more(regressed)}"


def _failing(combination: CombinationResult) -> Found:
    failing = [c for c in combination.cases if c.status in FAILURES]
    if not failing:
        return None
    first = failing[0]
    label = first.status + (f" ({first.error_type})" if first.error_type else "")
    note = "; failing in the baseline run too" if first.change == "still-failing" else ""
    return Verdict.FAILING, f"{first.id}: {label}{note}{_more(failing)}"


def _fixed(combination: CombinationResult) -> Found:
    fixed = [c for c in combination.cases if is_fixed(c)]
    if not fixed:
        return None
    first = fixed[0]
    if first.change == "fixed":
        why = f"failed in the baseline run ({first.baseline_status}), passes now"
    else:
        link = (first.known_issue or {}).get("link", "")
        why = f"passes inside a known-issue range ({link}): the registry may be out of date"
    return Verdict.FIXED, f"{first.id}: {why}{_more(fixed)}"


def _known_broken(combination: CombinationResult) -> Found:
    known = [c for c in combination.cases if c.status == CaseStatus.KNOWN_BROKEN]
    if not known:
        return None
    links = sorted({(c.known_issue or {}).get("link", "") for c in known})
    return Verdict.KNOWN_BROKEN, f"{len(known)} known-broken ({', '.join(links)})"


def _pass(combination: CombinationResult) -> Found:
    counts = Counter(c.status for c in combination.cases)
    shown = (CaseStatus.PASSED, CaseStatus.FLAKY, CaseStatus.SKIPPED)
    return Verdict.PASS, ", ".join(f"{counts[s]} {s}" for s in shown if counts[s])


def _more(cases: list[CaseResult]) -> str:
    return f" (+{len(cases) - 1} more)" if len(cases) > 1 else ""


# Each verdict's rule: the verdict and its reason when it applies to a combination,
# else None. They are tried in the table's order of precedence (outcomes.VERDICT_TABLE).
RULES: dict[Verdict, Callable[[CombinationResult], Found]] = {
    Verdict.LOST: _lost,
    Verdict.INSTALL_ERROR: _install_error,
    Verdict.SKIPPED: _skipped,
    Verdict.REGRESSED: _regressed,
    Verdict.FAILING: _failing,
    Verdict.FIXED: _fixed,
    Verdict.KNOWN_BROKEN: _known_broken,
    Verdict.PASS: _pass,
}


def _verdict(combination: CombinationResult) -> tuple[str, str]:
    for row in VERDICT_TABLE:
        found = RULES[row.verdict](combination)
        if found is not None:
            return found
    raise AssertionError(f"no verdict for {combination.id}")  # PASS always applies


def _changes(
    results: Results, baseline: Results | None, before: dict[str, CombinationResult]
) -> tuple[list[Change], list[Change]]:
    regressions: list[Change] = []
    fixed: list[Change] = []
    since = f"baseline run {baseline.run.id}" if baseline is not None else "the baseline run"
    for combination in results.combinations:
        for case in combination.cases:
            repro = case_repro(combination, case.id)
            if is_regression(case):
                # the step that explains it: the moved pin, or the nearest older neighbour
                # that passes (a newer one that passes explains nothing here)
                step = next((t for t in case.transitions if t.direction == "regressed"), None)
                if case.change == "regressed":
                    text = f"passed in {since}, {case.status} now"
                    if step is not None and step.source == "baseline":
                        text += f"; {step.text}"
                    elif baseline is not None:
                        text += _moved_text(combination, before.get(combination.id))
                    source = "baseline"
                else:
                    text = f"{step.text}; passes in {step.good_combination}" if step else ""
                    source = "neighbour"
                where = {"combination": combination.id, "case": case.id, "repro": repro}
                regressions.append(Change(**where, source=source, text=text, transition=step))
            elif is_fixed(case):
                if case.change == "fixed":
                    text, source = f"{case.baseline_status} in {since}, passes now", "baseline"
                else:
                    link = (case.known_issue or {}).get("link", "")
                    text, source = f"passes inside the known-issue range of {link}", "known-issue"
                where = {"combination": combination.id, "case": case.id, "repro": repro}
                fixed.append(Change(**where, source=source, text=text))
    return regressions, fixed


def _moved_text(combination: CombinationResult, previous: CombinationResult | None) -> str:
    if previous is None:
        return ""
    moved = changed_packages(combination, previous)
    sources = changed_sources(combination, previous)
    if not moved and not sources:
        return "; same versions as then (look at the cases, the host or the build)"
    said = []
    if moved:
        steps = ", ".join(f"{p} {a or '-'} -> {b or '-'}" for p, (a, b) in moved.items())
        said.append(f"since then: {steps}")
    if sources:
        said.append(source_change_text(sources))
    return "; " + "; ".join(said)


def _ordered_counts(values: Iterable[str], order: tuple[str, ...]) -> dict[str, int]:
    counts = Counter(values)
    known = {name: counts[name] for name in order if counts[name]}
    extra = {name: n for name, n in sorted(counts.items()) if name not in order and n}
    return {**known, **extra}
