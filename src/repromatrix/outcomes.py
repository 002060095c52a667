"""The vocabulary: what a case did, what a combination is, what a probe said, what
the atlas answers.

Every module spells these words through the enums here, and "failure" is defined
once (``FAILURES``). The members are strings (``CaseOutcome.FAILED == "failed"``), so
results.json keeps its words, and the results schema types its fields with these
enums: a word nobody defined is refused when a file is read.
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass

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
    LOST = "lost"  # no result came back: its CI job was killed, lost or cancelled (merge)


class Verdict(StrEnum):
    """One word per combination, in the order of precedence verdicts applies."""

    LOST = "LOST"
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


# --------------------------------------------------------------------------- the table
# How every part of the tool treats each verdict and each cell status, in one place:
# judge reads the verdicts' precedence and what is unexpected, the console and every
# report (Markdown, HTML, JUnit) read the rest. Symbols are single code points, so a
# character count is what GitHub counts. Adding a verdict is one row here (and its
# rule in verdicts/judge.py).


@dataclass(frozen=True)
class VerdictRow:
    verdict: Verdict
    attention: int  # reports list the lowest first: what a reader must see first
    symbol: str
    colour: str
    unexpected: bool  # makes the run's exit status non-zero
    quiet: bool  # nothing to do: the console names no such combination
    meaning: str


@dataclass(frozen=True)
class StatusRow:
    """A grid cell's status: a case status, or the grid's own ``regressed`` (a failure
    that a baseline shows passing) and ``missing`` (the case did not run there)."""

    word: str
    attention: int  # reports list the lowest first
    symbol: str
    colour: str
    mark: str  # the HTML cell's text besides its colour (for colour-blind readers, print)
    unexpected: bool  # a failure nobody registered: a reader must look at it
    quiet: bool  # says nothing is wrong with the case there
    meaning: str


# In order of precedence: a combination gets the first verdict whose rule applies.
VERDICT_TABLE: tuple[VerdictRow, ...] = (
    VerdictRow(
        Verdict.LOST, 2, "📭", "#57606a", True, False,
        "no result came back: the CI job that ran it was killed, lost its runner or was "
        "cancelled",
    ),
    VerdictRow(
        Verdict.INSTALL_ERROR, 3, "📦", "#8250df", True, False,
        "the environment could not be built",
    ),
    VerdictRow(
        Verdict.SKIPPED, 6, "⏩", "#8c959f", False, True,
        "could not run here (a GPU combination on a CPU host), or every case skipped",
    ),
    VerdictRow(
        Verdict.REGRESSED, 0, "🔻", "#a40e26", True, False,
        "passed in a baseline, fails now",
    ),
    VerdictRow(
        Verdict.FAILING, 1, "❌", "#cf222e", True, False,
        "a failure with nothing to compare it with",
    ),
    VerdictRow(
        Verdict.FIXED, 4, "✨", "#1f6feb", False, False,
        "failed in a baseline, or inside a known-issue range, passes now",
    ),
    VerdictRow(
        Verdict.KNOWN_BROKEN, 5, "🐛", "#f0b72f", False, True,
        "every failure is a registered upstream bug",
    ),
    VerdictRow(Verdict.PASS, 7, "✅", "#2da44e", False, True, "every case passes"),
)  # fmt: skip

# In the order legends list them.
STATUS_TABLE: tuple[StatusRow, ...] = (
    StatusRow("passed", 11, "✅", "#2da44e", "✓", False, True, "passed"),
    StatusRow(
        "regressed", 0, "🔻", "#a40e26", "▼", True, False,
        "regressed: passed in a baseline, fails now",
    ),
    StatusRow("failed", 1, "❌", "#cf222e", "✗", True, False, "failed"),
    StatusRow(
        "error", 2, "⛔", "#e16f24", "!", True, False, "error in setup, teardown or collection"
    ),
    StatusRow("crashed", 3, "💥", "#8250df", "C", True, False, "the interpreter crashed"),
    StatusRow("timed-out", 4, "⌛", "#9a6700", "T", True, False, "timed out"),
    StatusRow(
        "known-broken", 5, "🐛", "#f0b72f", "K", False, False,
        "known-broken: a registered upstream bug",
    ),
    StatusRow(
        "possibly-fixed", 6, "✨", "#1f6feb", "?", False, False,
        "possibly fixed: passes inside a known-issue range",
    ),
    StatusRow(
        "flaky", 7, "🔁", "#bf8700", "~", False, False,
        "flaky: failed, then passed in a fresh interpreter",
    ),
    StatusRow(
        "skipped", 8, "⏩", "#8c959f", "–", False, False,
        "skipped (reason on hover / in the details)",
    ),
    StatusRow("missing", 9, "—", "#eaeef2", "", False, True, "not run in this combination"),
)  # fmt: skip

VERDICTS: dict[Verdict, VerdictRow] = {row.verdict: row for row in VERDICT_TABLE}
STATUSES: dict[str, StatusRow] = {row.word: row for row in STATUS_TABLE}
# The grid's own cell words (not case statuses).
REGRESSED_CELL = "regressed"
MISSING_CELL = "missing"


def verdict_attention(word: str | None) -> int:
    """Where a verdict goes in a report's order (a word not in the table: last)."""
    row = VERDICTS.get(word) if word else None
    return row.attention if row is not None else len(VERDICT_TABLE)


def verdict_symbol(word: str | None) -> str:
    row = VERDICTS.get(word) if word else None
    return row.symbol if row is not None else "?"


# The one definition of failure: an outcome (or status) a reader must look at.
FAILURES = frozenset(
    CaseOutcome(row.word)
    for row in STATUS_TABLE
    if row.unexpected and row.word in CaseOutcome._value2member_map_
)
# Failures worth a rerun in a fresh interpreter to tell flaky from broken: a timeout
# already cost the whole case timeout, a second one would cost it again.
RERUN_WORTHY = FAILURES - {CaseOutcome.TIMED_OUT}
# Verdicts that make the run's exit status non-zero.
UNEXPECTED = frozenset(row.verdict for row in VERDICT_TABLE if row.unexpected)

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


# --------------------------------------------------------------------------- the atlas
# The compatibility atlas's words (hunts/atlas/): what a cell showed, what a pair of
# releases is answered, and on what evidence. The page, answers.csv, summary.md, the
# console and atlas.json read them, and their symbols, colours and legend text, from
# ATLAS_LEGEND: no other module spells them.


class CellOutcome(StrEnum):
    """What one atlas cell (one version per axis, every case) showed."""

    WORKS = "works"  # every case passed (or skipped)
    BREAKS = "breaks"  # a case failed on every run
    FLAKY = "flaky"  # a case failed and passed: rerun, never an answer on its own
    CONFLICT = "conflict"  # uv found no solution: never run
    ERROR = "error"  # could not be built for another reason: retried


class AnswerStatus(StrEnum):
    """A pair's answer (for one case, or over every case)."""

    WORKS = "works"
    BREAKS = "breaks"
    FLAKY = "flaky"  # failed and passed in the cells that hold it: neither works nor breaks
    CONFLICT = "conflict"  # their metadata forbids installing them together
    SKIPPED = "skipped"  # the case skipped wherever the pair ran (a trl case without trl)
    UNTESTED = "untested"


class Evidence(StrEnum):
    """Why an answer holds."""

    TESTED = "tested"  # a cell holding the pair ran and its outcome is explained by it
    INFERRED = "inferred"  # by a named rule (neighbours agree, a release fails alone)
    AUDITED = "audited"  # inferred once, then tested by an audit cell


# The one definition of a case status that clears the versions of its cell: it ran
# and did not fail. A skip says nothing either way; flaky is neither.
PASSING = frozenset({CaseStatus.PASSED, CaseStatus.POSSIBLY_FIXED})


@dataclass(frozen=True)
class LegendRow:
    """One kind of square on the atlas page (and its line in every legend)."""

    status: AnswerStatus
    evidence: Evidence | None  # None: any (untested, conflict, skipped)
    alone: bool  # a release that fails on its own (shown once, on its row or column)
    symbol: str  # one code point: the console, answers.csv readers, the page's squares
    colour: str
    hatched: bool  # inferred: the page hatches the colour
    text: str


ATLAS_LEGEND: tuple[LegendRow, ...] = (
    LegendRow(AnswerStatus.WORKS, Evidence.TESTED, False, "✓", "#1a7f37", False,
              "works (tested: a cell holding the pair passed)"),
    LegendRow(AnswerStatus.WORKS, Evidence.AUDITED, False, "✓", "#1a7f37", False,
              "works (audited: inferred, then a cell holding the pair passed)"),
    LegendRow(AnswerStatus.WORKS, Evidence.INFERRED, False, "✓", "#1a7f37", True,
              "works (inferred: neighbours on both sides agree)"),
    LegendRow(AnswerStatus.BREAKS, Evidence.TESTED, False, "✗", "#cf222e", False,
              "breaks (tested: failing cells with other partners, one cause)"),
    LegendRow(AnswerStatus.BREAKS, Evidence.AUDITED, False, "✗", "#cf222e", False,
              "breaks (audited: inferred, then confirmed by a cell)"),
    LegendRow(AnswerStatus.BREAKS, Evidence.INFERRED, False, "✗", "#cf222e", True,
              "breaks (inferred: by the rule its note names)"),
    LegendRow(AnswerStatus.BREAKS, None, True, "⊗", "#953800", False,
              "a release that fails on its own (its row or column says why)"),
    LegendRow(AnswerStatus.FLAKY, None, False, "~", "#bf8700", False,
              "flaky: failed and passed (passed/runs)"),
    LegendRow(AnswerStatus.CONFLICT, None, False, "⊘", "#6e7781", False,
              "conflict (uv cannot install both)"),
    LegendRow(AnswerStatus.SKIPPED, None, False, "–", "#afb8c1", False,
              "skipped (the cases skip there)"),
    LegendRow(AnswerStatus.UNTESTED, None, False, "·", "#eaeef2", False, "untested"),
)  # fmt: skip


def legend_row(status: str, evidence: str | None = None, *, alone: bool = False) -> LegendRow:
    """The legend's row of an answer: its status's row for that evidence, else its
    status's first (an unknown word: untested's)."""
    rows = [row for row in ATLAS_LEGEND if row.status == status and row.alone == alone]
    exact = [row for row in rows if row.evidence in (None, evidence)]
    return (exact or rows or [ATLAS_LEGEND[-1]])[0]


# --------------------------------------------------------------------------- bounds
# What `repromatrix bounds` says of one declared dependency range (hunts/bounds/): the
# console, summary.md, bounds.json and the tracking issue read this table.


class BoundVerdict(StrEnum):
    """One word per declared dependency range, and per end of it."""

    OK = "ok"
    FLOOR_TOO_LOW = "floor-too-low"
    FLOORS_CONFLICT = "floors-conflict"
    CEILING_MISSING = "ceiling-missing"
    CEILING_TOO_TIGHT = "ceiling-too-tight"
    UNTESTABLE = "untestable"


@dataclass(frozen=True)
class BoundRow:
    verdict: BoundVerdict
    symbol: str
    wrong: bool  # a declared bound shown wrong (exit 1, the tracking issue)
    meaning: str


# In order of precedence: a dependency's verdict is the first of its ends' verdicts here.
BOUND_TABLE: tuple[BoundRow, ...] = (
    BoundRow(
        BoundVerdict.FLOOR_TOO_LOW, "⬇️", True,
        "the lowest release the range admits fails beside a working set of the others",
    ),
    BoundRow(
        BoundVerdict.FLOORS_CONFLICT, "🧩", True,
        "each floor works alone, the floors fail (or cannot be installed) together",
    ),
    BoundRow(
        BoundVerdict.CEILING_MISSING, "⬆️", True,
        "the newest release the range admits fails: an upper bound is missing or too high",
    ),
    BoundRow(
        BoundVerdict.CEILING_TOO_TIGHT, "🔒", True,
        "the upper bound shuts out releases that work",
    ),
    BoundRow(
        BoundVerdict.UNTESTABLE, "❔", False,
        "could not be judged here (its reason says why)",
    ),
    BoundRow(BoundVerdict.OK, "✅", False, "both ends hold"),
)  # fmt: skip
BOUNDS: dict[BoundVerdict, BoundRow] = {row.verdict: row for row in BOUND_TABLE}
