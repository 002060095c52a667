"""Failures grouped by what they died of: one cause per signature key.

A failing case carries its signature (``CaseResult.signature``, computed in the cell);
grouping is a dict lookup of its key, never a reading of messages. A combination
that did not install, or whose CI job was lost, has no case to sign: its cause is
its status and its message, masked as a case's message is (so two installs refused
for one reason at different versions are one cause); a lost job's message is kept
whole, as it names the job.

Read by summary.md (new failures by cause), the nightly's console lines and its
tracking issue.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from repromatrix.execution._cell.signature import MESSAGE_CHARS, Signature
from repromatrix.outcomes import FAILURES, CombinationStatus
from repromatrix.results import CaseResult, CombinationResult, FailureSignature, Results

# A combination that failed before any case: the status it is grouped under.
NO_CASES = (CombinationStatus.INSTALL_ERROR, CombinationStatus.LOST)


@dataclass
class Cause:
    """One signature and the failures that show it: (combination id, case id), a case
    id of "" for a combination that failed before its cases, in the order given."""

    signature: FailureSignature
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.signature.key

    @property
    def combinations(self) -> list[str]:
        return list(dict.fromkeys(combination for combination, _ in self.failures))

    @property
    def cases(self) -> list[str]:
        return list(dict.fromkeys(case for _, case in self.failures if case))


def combination_cause(combination: CombinationResult) -> FailureSignature:
    """The cause of a combination that failed before its cases: its status and message
    (masked; a lost one's message names its CI job, kept whole: each job is a cause)."""
    status, message = combination.status.value, combination.message
    if combination.status == CombinationStatus.LOST:
        line = " ".join(message.split())[:MESSAGE_CHARS]
        return FailureSignature.of(Signature(status, (), line))
    return FailureSignature.of(Signature.of(status, (), message))


def failure_cause(combination: CombinationResult, case: CaseResult | None) -> FailureSignature:
    """What one failure died of: the case's signature (derived from its traceback in
    files written before signatures), or the combination's own cause."""
    found = case.cause() if case is not None else None
    return found if found is not None else combination_cause(combination)


def new_failures(results: Results) -> Iterator[tuple[CombinationResult, CaseResult | None]]:
    """A judged run's new failures, in matrix order: each case failing unexpectedly
    (``FAILURES``: not known-broken, not flaky) that the baseline does not show failing
    too, and each combination that did not install or was lost (case None)."""
    for combination in results.combinations:
        if combination.status in NO_CASES:
            yield combination, None
        for case in combination.cases:
            if case.status in FAILURES and case.change != "still-failing":
                yield combination, case


def by_cause(failures: Iterable[tuple[CombinationResult, CaseResult | None]]) -> list[Cause]:
    """The failures grouped by signature key: the cause with the most failures first,
    first seen first among equals."""
    groups: dict[str, Cause] = {}
    for combination, case in failures:
        signature = failure_cause(combination, case)
        cause = groups.setdefault(signature.key, Cause(signature))
        cause.failures.append((combination.id, case.id if case is not None else ""))
    return sorted(groups.values(), key=lambda cause: -len(cause.failures))
