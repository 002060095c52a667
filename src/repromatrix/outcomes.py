"""The vocabulary: what a case did, what a combination is, what a probe said.

Every module spells these words through the enums here, and "failure" is defined
once (``FAILURES``). The members are strings (``CaseOutcome.FAILED == "failed"``), so
results.json keeps its words, and the results schema types its fields with these
enums: a word nobody defined is refused when a file is read.
"""

from __future__ import annotations

import enum
import sys

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10: the same behaviour, spelled out

    class StrEnum(str, enum.Enum):
        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return format(str(self.value), spec)


class CaseOutcome(StrEnum):
    """What the runner saw a case do, before any verdict."""

    PASSED = "passed"
    FAILED = "failed"  # the assertion or the call raised
    ERROR = "error"  # setup, teardown or collection
    SKIPPED = "skipped"  # message = the reason
    CRASHED = "crashed"  # the interpreter died; message names the signal
    TIMED_OUT = "timed-out"
    FLAKY = "flaky"  # failed, then passed on a rerun in a fresh interpreter


class CaseStatus(StrEnum):
    """A case's outcome after verdicts: the known-issue registry turns a failure
    inside a registered range into known-broken and a pass there into possibly-fixed."""

    PASSED = "passed"
    POSSIBLY_FIXED = "possibly-fixed"
    FLAKY = "flaky"
    SKIPPED = "skipped"
    KNOWN_BROKEN = "known-broken"
    FAILED = "failed"
    ERROR = "error"
    CRASHED = "crashed"
    TIMED_OUT = "timed-out"


class CombinationStatus(StrEnum):
    """How far a combination got, and what its cases did."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    INSTALL_ERROR = "install-error"


class Verdict(StrEnum):
    """One word per combination, in the order of precedence verdicts applies."""

    INSTALL_ERROR = "INSTALL-ERROR"
    SKIPPED = "SKIPPED"
    REGRESSED = "REGRESSED"
    FAILING = "FAILING"
    FIXED = "FIXED"
    KNOWN_BROKEN = "KNOWN-BROKEN"
    PASS = "PASS"


class ProbeOutcome(StrEnum):
    """What one bisect, sweep or culprit step said about a candidate (git bisect's
    words: good, bad, skip = cannot tell here)."""

    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"


# The one definition of failure: an outcome (or status) a reader must look at.
FAILURES = frozenset(
    {CaseOutcome.FAILED, CaseOutcome.ERROR, CaseOutcome.CRASHED, CaseOutcome.TIMED_OUT}
)
# Failures worth a rerun in a fresh interpreter to tell flaky from broken: a timeout
# already cost the whole case timeout, a second one would cost it again.
RERUN_WORTHY = FAILURES - {CaseOutcome.TIMED_OUT}
# Verdicts that make the run's exit status non-zero.
UNEXPECTED = frozenset({Verdict.REGRESSED, Verdict.FAILING, Verdict.INSTALL_ERROR})

# The runner's case id for "no case could run" (collection failed, the interpreter
# died before the first case).
COLLECTION_ID = "<collection>"


def raw_outcome(status: str) -> CaseOutcome:
    """The outcome behind a status (older files may only have ``status``)."""
    if status == CaseStatus.KNOWN_BROKEN:
        return CaseOutcome.FAILED
    if status == CaseStatus.POSSIBLY_FIXED:
        return CaseOutcome.PASSED
    return CaseOutcome(status)


def combination_status(outcomes: set[str]) -> CombinationStatus:
    """A combination that ran: failed if any case failed, skipped if none ran."""
    if outcomes & FAILURES:
        return CombinationStatus.FAILED
    if not outcomes or outcomes <= {CaseOutcome.SKIPPED}:
        return CombinationStatus.SKIPPED
    return CombinationStatus.PASSED
