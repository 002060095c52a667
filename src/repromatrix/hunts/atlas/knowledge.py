"""What the tested cells prove, pure: per case, which versions and pairs are cleared
(seen in a cell where the case passed on every run), and per cause (a case and its
failure's signature) which releases and pairs are condemned, and how firmly.

The fault model (docs/atlas.md, "Fault model"): a case fails because of one release
alone, a pair, or (rarely) three or more releases together, and one fault fails
with one signature. So

- a release or a pair in a cell where the case passed does not break it (cleared);
- a failing cell is evidence only for its own cause: a cell that fails for another
  cause neither clears nor condemns for this one, and a flaky one (failed and
  passed) neither;
- a pair is condemned when a failing cell holds it and everything else in that cell
  is cleared (``isolated``), and confirmed by a second failing cell of the same
  cause with other partners on every remaining axis (a three-way fault with the
  first cell's partners is then ruled out); until then it is pending;
- a release is condemned alone when it fails, with the same cause, in isolated cells
  (everything without it cleared) with two different partners on every other axis
  (one factor at a time, Nie & Leung's minimal failure-causing schema);
- a failing cell whose every release and pair is cleared is a three-way (or wider)
  failure: its pairs work, and it is reported as such.

Until one of these explains it, a failing cell condemns nobody; its uncleared
releases and pairs are suspects (localise.py plans the cells that tell them apart).
"""

from __future__ import annotations

import enum
import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from repromatrix.hunts.atlas.state import CellRecord
from repromatrix.hunts.atlas.universe import Cell, Pair, Universe, Value
from repromatrix.outcomes import FAILURES, PASSING, CaseStatus, CellOutcome, raw_outcome


class Seen(enum.Enum):
    """What one case did in one cell, over its runs."""

    CLEAN = enum.auto()  # passed on every run: clears its releases and pairs
    FAIL = enum.auto()  # failed on every run, with one cause
    FLAKY = enum.auto()  # failed and passed
    SKIP = enum.auto()  # skipped (or not a verdict): says nothing


@dataclass(frozen=True)
class Run:
    """One case in one tested cell."""

    index: int  # the cell's place in the atlas's cells
    cell: Cell
    seen: Seen
    cause: str = ""  # the failure's signature key (FAIL)
    passed: int = 0
    runs: int = 0


@dataclass(frozen=True)
class HigherOrder:
    """A failing cell whose every release and pair is cleared: three or more of its
    releases fail together (``values``: the cell's releases)."""

    case: str
    cause: str
    index: int
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Condemned:
    """A pair condemned for a cause: the isolated failing cell, and the cell with
    other partners that confirms it (None: pending)."""

    first: int
    second: int | None


@dataclass
class CaseKnowledge:
    """Everything the cells prove about one case."""

    case: str
    packages: tuple[str, ...]  # the axes, in order
    runs: list[Run] = field(default_factory=list)
    cleared_values: set[Value] = field(default_factory=set)
    cleared_pairs: set[Pair] = field(default_factory=set)
    failing: dict[str, list[Run]] = field(default_factory=dict)  # cause -> its runs
    # cause -> release -> the isolated cells it failed in (condemned alone)
    alone: dict[str, dict[Value, tuple[int, ...]]] = field(default_factory=dict)
    isolated: dict[tuple[str, Value], list[Run]] = field(default_factory=dict)
    pairs: dict[str, dict[Pair, Condemned]] = field(default_factory=dict)
    higher: list[HigherOrder] = field(default_factory=list)
    unexplained: list[Run] = field(default_factory=list)
    holding: dict[Pair, list[Run]] = field(default_factory=dict)

    def cleared(self, schema: tuple[Value, ...]) -> bool:
        if len(schema) == 1:
            return schema[0] in self.cleared_values
        return schema in self.cleared_pairs

    def explained(self, run: Run) -> bool:
        found = self.alone.get(run.cause, {})
        pairs = self.pairs.get(run.cause, {})
        values = set(zip(self.packages, run.cell, strict=True))
        if values & set(found):
            return True
        if any(a in values and b in values for a, b in pairs):
            return True
        return any(h.index == run.index and h.cause == run.cause for h in self.higher)


@dataclass
class Knowledge:
    universe: Universe
    cells: list[CellRecord]  # the standing cells: every index points here
    conflicts: Mapping[Pair, str]
    cases: dict[str, CaseKnowledge] = field(default_factory=dict)


def seen_of(status: str, runs: int, passed: int) -> Seen:
    """A case's record as evidence: clean, failing, flaky or nothing."""
    if status == CaseStatus.FLAKY or 0 < passed < runs:
        return Seen.FLAKY
    if status in PASSING:
        return Seen.CLEAN
    try:
        failed = raw_outcome(status) in FAILURES
    except ValueError:
        failed = False
    return Seen.FAIL if failed else Seen.SKIP


def learn(universe: Universe, cells: list[CellRecord], conflicts: Mapping[Pair, str]) -> Knowledge:
    """Everything the cells prove (their indexes are their places in ``cells``)."""
    know = Knowledge(universe, cells, conflicts)
    for index, record in enumerate(cells):
        cell = universe.cell(record.pins)
        if cell is None or record.outcome in (CellOutcome.CONFLICT, CellOutcome.ERROR):
            continue
        for case, found in record.cases.items():
            seen = seen_of(found.status, found.runs, found.passed)
            cause = (found.signature or f"error:{found.error}") if seen is Seen.FAIL else ""
            run = Run(index, cell, seen, cause, found.passed, found.runs)
            if case not in know.cases:
                know.cases[case] = CaseKnowledge(case, universe.packages)
            know.cases[case].runs.append(run)
    for case_know in know.cases.values():
        _learn_case(universe, case_know, conflicts)
    return know


def _learn_case(universe: Universe, know: CaseKnowledge, conflicts: Mapping[Pair, str]) -> None:
    for run in know.runs:
        for pair in universe.pairs_of(run.cell):
            know.holding.setdefault(pair, []).append(run)
        if run.seen is Seen.CLEAN:
            know.cleared_values.update(universe.values(run.cell))
            know.cleared_pairs.update(universe.pairs_of(run.cell))
        elif run.seen is Seen.FAIL:
            know.failing.setdefault(run.cause, []).append(run)
    # A release condemned alone for one cause fails every cell it is in of that cause:
    # for another cause it is as good as cleared (its failure has another signature),
    # so judging is repeated while such releases are found.
    masked: dict[str, set[Value]] = {}
    for _ in range(3):
        _judge(universe, know, conflicts, masked)
        found = {
            cause: {v for other, values in know.alone.items() if other != cause for v in values}
            for cause in know.failing
        }
        if found == masked:
            break
        masked = found
    know.unexplained = [
        run for runs in know.failing.values() for run in runs if not know.explained(run)
    ]


def _judge(
    universe: Universe, know: CaseKnowledge, conflicts: Mapping[Pair, str],
    masked: Mapping[str, set[Value]],
) -> None:  # fmt: skip
    """Isolated cells, releases alone, condemned pairs and three-way failures, with
    ``masked`` releases counted as cleared for each cause."""
    know.isolated, know.alone, know.pairs, know.higher = {}, {}, {}, []
    first: dict[str, dict[Pair, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for cause, runs in know.failing.items():
        hidden = masked.get(cause, set())
        for run in runs:
            values = universe.values(run.cell)
            pairs = list(universe.pairs_of(run.cell))
            loose_values = [v for v in values if v not in know.cleared_values and v not in hidden]
            loose_pairs = [p for p in pairs if p not in know.cleared_pairs and not hidden & set(p)]
            if not loose_values and not loose_pairs:
                if not hidden & set(values):
                    know.higher.append(HigherOrder(know.case, cause, run.index, tuple(values)))
                continue
            for value in loose_values:
                rest = all(v in know.cleared_values or v in hidden for v in values if v != value)
                if rest and all(p not in loose_pairs for p in pairs if value not in p):
                    know.isolated.setdefault((cause, value), []).append(run)
            if len(universe.packages) == 2:
                first[cause][pairs[0]].append(run)  # the cell is the pair: it breaks
            elif not loose_values and len(loose_pairs) == 1:
                first[cause][loose_pairs[0]].append(run)
    for (cause, value), runs in know.isolated.items():
        if _partners_vary(universe, know, value, runs, conflicts):
            know.alone.setdefault(cause, {})[value] = tuple(r.index for r in runs)
    for cause, found in first.items():
        for pair, runs in found.items():
            know.pairs.setdefault(cause, {})[pair] = _confirmed(
                universe, know, cause, pair, runs, conflicts
            )


def _usable(
    universe: Universe, know: CaseKnowledge, package: str, kept: Iterable[Value],
    conflicts: Mapping[Pair, str],
) -> list[str]:  # fmt: skip
    """The versions of ``package`` that could stand beside ``kept`` in a cell that
    proves something: cleared for the case, installable with each kept release."""
    kept = list(kept)
    return [
        v
        for v in universe.axes[package]
        if (package, v) in know.cleared_values
        and not any(universe.key(k, (package, v)) in conflicts for k in kept)
    ]


def _partners_vary(
    universe: Universe, know: CaseKnowledge, value: Value, runs: list[Run],
    conflicts: Mapping[Pair, str],
) -> bool:  # fmt: skip
    """Two different versions beside ``value`` on every other axis, or every one of
    an axis with fewer that could stand there."""
    for i, package in enumerate(universe.packages):
        if package == value[0]:
            continue
        usable = _usable(universe, know, package, [value], conflicts)
        seen = {run.cell[i] for run in runs}
        if len(seen) < min(2, len(usable)):
            return False
    return True


def _confirmed(
    universe: Universe, know: CaseKnowledge, cause: str, pair: Pair, isolated: list[Run],
    conflicts: Mapping[Pair, str],
) -> Condemned:  # fmt: skip
    """The pair's isolated cell and, where one exists, another isolated cell of the
    same cause that differs from it on every remaining axis that has another usable
    version (so that neither a partner nor a three-way failure with the first cell's
    partners explains both)."""
    others = isolated
    rest = [i for i, p in enumerate(universe.packages) if p not in (pair[0][0], pair[1][0])]
    for one in isolated:
        for two in others:
            if two.index == one.index:
                continue
            differs = all(
                two.cell[i] != one.cell[i]
                or not [
                    v
                    for v in _usable(universe, know, universe.packages[i], pair, conflicts)
                    if v != one.cell[i]
                ]
                for i in rest
            )
            if differs:
                return Condemned(one.index, two.index)
    if not rest:
        return Condemned(isolated[0].index, isolated[0].index)  # two axes: the cell is the pair
    return Condemned(isolated[0].index, None)


def suspects(universe: Universe, know: CaseKnowledge, run: Run) -> list[tuple[Value, ...]]:
    """The minimal schemas of an unexplained failing cell: releases not cleared, then
    pairs not cleared whose releases both are. A release condemned alone for another
    cause is none of them: every cell with it fails of that cause, so it can be
    tested for no other (the pairs without it can)."""
    masked = {v for cause, found in know.alone.items() if cause != run.cause for v in found}
    values = [v for v in universe.values(run.cell) if v not in masked]
    loose: list[tuple[Value, ...]] = [(v,) for v in values if v not in know.cleared_values]
    loose += [
        p
        for p in itertools.combinations(values, 2)
        if p not in know.cleared_pairs and all(v in know.cleared_values for v in p)
    ]
    return loose


def suspected(universe: Universe, know: CaseKnowledge) -> set[Pair]:
    """Pairs that may cause a failure nothing explains yet: inference must not answer
    them (localisation will)."""
    found: set[Pair] = set()
    values: set[Value] = set()
    for run in know.unexplained:
        for schema in suspects(universe, know, run):
            if len(schema) == 1:  # a release that may fail alone: every pair of it
                values.add(schema[0])
            else:
                found.add(schema)  # type: ignore[arg-type]
    if values:
        found.update(pair for pair in universe.pairs() if values & set(pair))
    return found
