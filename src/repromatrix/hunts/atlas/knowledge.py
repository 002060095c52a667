"""What the tested cells prove, pure: per case, which versions and pairs are cleared
(seen in a cell where that case passed) and which are condemned; per pair, the
tested answer.

The fault model is NIST's: a failure is caused by one version alone or by a pair
(the registered bugs here are one- or two-way). So

- a pair or a version seen in a cell where a case passed does not break that case;
- a failing cell whose versions and pairs are all cleared but one pair condemns that
  pair (the failure must lie inside it);
- a version condemns itself alone when it fails in cells where everything without it
  is cleared, with two different partners on every other axis (changing every
  other version did not help: one factor at a time, Nie & Leung's minimal
  failure-causing schema). Until then a failing cell condemns nobody.

Answers: ``conflict`` (uv cannot install the pair), ``breaks`` (a case condemns the
pair or one of its versions), ``works`` (cleared for every case), else open.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from repromatrix.hunts.atlas.state import CellRecord
from repromatrix.hunts.atlas.universe import Cell, Pair, Universe, Value, pair_key

# Case statuses that count as a pass (a skip says nothing against the pair).
PASSING = frozenset({"passed", "skipped", "flaky", "possibly-fixed"})


@dataclass(frozen=True)
class Tested:
    """One tested cell in universe terms."""

    cell: Cell
    failing: frozenset[str]
    passing: frozenset[str]
    record: CellRecord
    index: int  # its place in the atlas's cells


@dataclass(frozen=True)
class Answer:
    status: str  # works | breaks | conflict | untested
    evidence: str = ""  # tested (a cell ran, or uv resolved) | inferred ("" when untested)
    case: str = ""  # the failing case (breaks)
    error: str = ""
    link: str = ""
    cells: tuple[int, ...] = ()  # indexes into the atlas's cells that show it
    note: str = ""
    failures: tuple[tuple[str, str, str], ...] = ()  # every breaking (case, error, link)


@dataclass
class Knowledge:
    universe: Universe
    tested: list[Tested]
    conflicts: Mapping[Pair, str]
    cleared_values: dict[str, set[Value]] = field(default_factory=dict)
    cleared_pairs: dict[str, set[Pair]] = field(default_factory=dict)
    condemned_pairs: dict[str, dict[Pair, int]] = field(default_factory=dict)
    condemned_values: dict[str, dict[Value, int]] = field(default_factory=dict)
    unexplained: list[int] = field(default_factory=list)  # failing cells no schema explains

    @property
    def cases(self) -> set[str]:
        found: set[str] = set()
        for t in self.tested:
            found |= t.failing | t.passing
        return found

    def cleared(self, case: str, schema: tuple[Value, ...]) -> bool:
        if len(schema) == 1:
            return schema[0] in self.cleared_values.get(case, ())
        return schema in self.cleared_pairs.get(case, ())

    def tested_cell(self, index: int) -> Cell:
        return next(t.cell for t in self.tested if t.index == index)

    def explained(self, case: str, cell: Cell) -> bool:
        values = list(zip(self.universe.packages, cell, strict=True))
        if any(v in self.condemned_values.get(case, {}) for v in values):
            return True
        return any(p in self.condemned_pairs.get(case, {}) for p in self.universe.pairs_of(cell))

    def suspects(self, case: str, cell: Cell) -> list[tuple[Value, ...]]:
        """The minimal schemas of a failing cell not cleared for ``case``: versions
        not cleared, then pairs not cleared whose versions both are."""
        values = list(zip(self.universe.packages, cell, strict=True))
        loose = [(v,) for v in values if not self.cleared(case, (v,))]
        pairs = [
            p
            for p in self.universe.pairs_of(cell)
            if not self.cleared(case, p) and all(self.cleared(case, (v,)) for v in p)
        ]
        return loose + pairs


def suspected(know: Knowledge) -> set[Pair]:
    """Pairs that may cause a failure nothing explains yet: inference must not answer
    them (localisation will)."""
    universe = know.universe
    found: set[Pair] = set()
    values: set[Value] = set()
    for t in know.tested:
        for case in t.failing:
            if know.explained(case, t.cell):
                continue
            for schema in know.suspects(case, t.cell):
                if len(schema) == 1:  # a version that may fail alone: every pair of it
                    values.add(schema[0])
                else:
                    found.add(schema)  # type: ignore[arg-type]
    found.update(pair for pair in universe.pairs() if values & set(pair))
    return found


def learn(
    universe: Universe,
    records: Iterable[tuple[int, CellRecord]],
    conflicts: Mapping[Pair, str],
) -> Knowledge:
    """Everything the cells prove (``records``: (index in the atlas, cell) pairs)."""
    tested: list[Tested] = []
    for index, record in records:
        cell = universe.cell(record.pins)
        if cell is None or record.outcome not in ("works", "breaks"):
            continue
        failing = frozenset(c for c, s in record.cases.items() if s not in PASSING)
        passing = frozenset(c for c, s in record.cases.items() if s in PASSING)
        tested.append(Tested(cell, failing, passing, record, index))
    know = Knowledge(universe, tested, conflicts)
    for t in tested:
        for case in t.passing:
            know.cleared_values.setdefault(case, set()).update(
                zip(universe.packages, t.cell, strict=True)
            )
            know.cleared_pairs.setdefault(case, set()).update(universe.pairs_of(t.cell))
    _condemn(know)
    return know


def _condemn(know: Knowledge) -> None:
    universe = know.universe
    isolated: dict[tuple[str, Value], list[Cell]] = defaultdict(list)
    first_isolated: dict[tuple[str, Value], int] = {}
    for t in know.tested:
        for case in sorted(t.failing):
            values = list(zip(universe.packages, t.cell, strict=True))
            loose = [(v,) for v in values if not know.cleared(case, (v,))]
            loose += [p for p in universe.pairs_of(t.cell) if not know.cleared(case, p)]
            touched = {v for schema in loose for v in schema}
            if not loose:
                know.unexplained.append(t.index)
                continue
            if len(touched) <= 2:  # every schema outside one pair is cleared: it fails
                pair = _pair_within(universe, t.cell, touched)
                know.condemned_pairs.setdefault(case, {}).setdefault(pair, t.index)
            # A version whose cell is otherwise all cleared: one-factor evidence.
            for value in touched:
                others = [v for v in zip(universe.packages, t.cell, strict=True) if v != value]
                rest_clear = all(know.cleared(case, (v,)) for v in others) and all(
                    know.cleared(case, p) for p in universe.pairs_of(t.cell) if value not in p
                )
                if rest_clear and not know.cleared(case, (value,)):
                    isolated[(case, value)].append(t.cell)
                    first_isolated.setdefault((case, value), t.index)
    for (case, value), cells in isolated.items():
        if _partners_vary(know, case, value, cells):
            know.condemned_values.setdefault(case, {})[value] = first_isolated[(case, value)]


def _pair_within(universe: Universe, cell: Cell, touched: set[Value]) -> Pair:
    """The cell's pair that holds every version in ``touched`` (one or two)."""
    for pair in universe.pairs_of(cell):
        if touched <= set(pair):
            return pair
    raise AssertionError(touched)


def _partners_vary(know: Knowledge, case: str, value: Value, cells: list[Cell]) -> bool:
    """Two different versions beside ``value`` on every other axis, or every one of
    an axis with fewer that could stand there (cleared for the case, installable
    with ``value``): a cell with a version not cleared proves nothing about it."""
    universe = know.universe
    for i, package in enumerate(universe.packages):
        if package == value[0]:
            continue
        usable = [
            v
            for v in universe.axes[package]
            if know.cleared(case, ((package, v),))
            and pair_key(value, (package, v), universe.packages) not in know.conflicts
        ]
        seen = {cell[i] for cell in cells}
        if len(seen) < min(2, len(usable)):
            return False
    return True


def tested_answers(know: Knowledge) -> dict[Pair, Answer]:
    """Every pair's answer from the tests alone (``untested`` where none is proven)."""
    universe = know.universe
    cases = know.cases
    holding: dict[Pair, list[Tested]] = defaultdict(list)
    for t in know.tested:
        for pair in universe.pairs_of(t.cell):
            holding[pair].append(t)
    answers: dict[Pair, Answer] = {}
    for pair in universe.pairs():
        if pair in know.conflicts:
            answers[pair] = Answer(
                "conflict", "tested", error=know.conflicts[pair], note="uv: no solution"
            )
            continue
        broken = _breaking(know, pair, holding[pair])
        if broken is not None:
            answers[pair] = broken
            continue
        cells = holding[pair]
        if cells and all(know.cleared(case, pair) for case in cases):
            showing = tuple(t.index for t in cells if not t.failing) or tuple(
                t.index for t in cells
            )
            answers[pair] = Answer("works", "tested", cells=showing)
        else:
            answers[pair] = Answer("untested", cells=tuple(t.index for t in cells))
    return answers


def _breaking(know: Knowledge, pair: Pair, cells: list[Tested]) -> Answer | None:
    """The pair's breaking cases (each registered bug shows where it is), the first
    as the answer's case."""
    found: list[tuple[str, str, str, tuple[int, ...], str]] = []
    for case in sorted(know.cases):
        if pair in know.condemned_pairs.get(case, {}):
            why = "the pair fails where everything else is known to work"
        elif any(v in know.condemned_values.get(case, {}) for v in pair):
            bad = next(v for v in pair if v in know.condemned_values.get(case, {}))
            why = f"{bad[0]} {bad[1]} fails with every partner tried"
        else:
            continue
        failing = [t for t in cells if case in t.failing]
        if not failing:
            continue  # never tested together: only inference may answer it
        failure = next((f for f in failing[0].record.failures if f.case == case), None)
        error, link = (failure.error, failure.link) if failure else ("", "")
        found.append((case, error, link, tuple(t.index for t in failing), why))
    if not found:
        return None
    # a registered bug first: it has a link to follow
    found.sort(key=lambda item: (not item[2], item[0]))
    case, error, link, cells_shown, why = found[0]
    return Answer(
        "breaks",
        "tested",
        case=case,
        error=error,
        link=link,
        cells=cells_shown,
        note=why,
        failures=tuple((c, e, k) for c, e, k, _, _ in found),
    )
