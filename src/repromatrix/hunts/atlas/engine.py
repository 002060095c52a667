"""The atlas's decisions, pure, with the cells run by whoever is handed in.

``plan_round`` is the one planning step, for ``atlas run``, ``atlas plan`` and the
nightly (plan, cells, fold) alike: the covering array's new cells (seeded with what
stands), then one round of localisation (localise.py), within the budget less the
audit's share; the audit (audit.py) when that round is cut short by the budget, or
has nothing left to ask. ``advance`` is ``atlas run``: rounds of it, each run by
the cell runner, until nothing is left to ask or the budget is spent. A nightly
runs one round a night.

A ``CellRunner`` receives planned cells and returns one CellRecord each: the
pipeline (cells.py), an oracle in the tests and the benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from repromatrix.hunts.atlas.answers import answers_of
from repromatrix.hunts.atlas.audit import audit_cells, audit_results, audit_wanted
from repromatrix.hunts.atlas.knowledge import Knowledge
from repromatrix.hunts.atlas.localise import Planned, follow_ups
from repromatrix.hunts.atlas.planner import covering_cells
from repromatrix.hunts.atlas.rules import Answer
from repromatrix.hunts.atlas.state import Audit, CellRecord
from repromatrix.hunts.atlas.universe import Cell, Pair, Universe
from repromatrix.outcomes import CellOutcome

Say = Callable[[str], None]


class CellRunner(Protocol):
    """Runs planned cells: one CellRecord each, in order."""

    def __call__(self, planned: Sequence[Planned]) -> list[CellRecord]: ...


@dataclass(frozen=True)
class Budget:
    cells: int  # the most cells a run (a night) tests
    audit: float = 0.0  # the share of it kept for re-testing inferred answers

    @property
    def reserve(self) -> int:
        return math.ceil(self.cells * self.audit) if self.audit > 0 else 0


@dataclass(frozen=True)
class Round:
    planned: list[Planned]
    knowledge: Knowledge
    answers: dict[Pair, Answer]


@dataclass
class Outcome:
    cells: list[CellRecord]  # every cell, the earlier ones first
    answers: dict[Pair, Answer]
    knowledge: Knowledge
    planned: int = 0  # cells run now
    rounds: int = 0
    audits: list[Audit] = field(default_factory=list)


def plan_round(
    universe: Universe,
    cells: Sequence[CellRecord],
    conflicts: Mapping[Pair, str],
    *,
    cells_left: int,
    audit_left: int,
    share: float,
    strength: int = 2,
    taken: Iterable[Cell] = (),
    known_axes: Mapping[str, Sequence[str]] | None = None,
    stale: Sequence[CellRecord] = (),
    audited: Iterable[Pair] = (),
) -> Round:
    """The next cells to run, each with why (``cells``: the standing ones; ``taken``:
    cells tried already that stand for nothing, as an error this run)."""
    know, answers = answers_of(universe, cells, conflicts, audited)
    audit_left = min(audit_left, audit_wanted(answers, share))  # none kept with nothing inferred
    main_limit = max(0, cells_left - audit_left)
    seen = [c for r in cells if (c := universe.cell(r.pins)) is not None]
    tried = list(dict.fromkeys([*seen, *taken]))  # in the order they ran: covertable's seed
    cover = _cover(universe, cells, tried, conflicts, strength, known_axes, stale)
    planned = cover[:main_limit]
    now = set(tried) | {p.cell for p in planned}
    planned += follow_ups(know, answers, taken=now, limit=main_limit - len(planned))
    cut_short = len(cover) > main_limit or len(planned) >= main_limit
    if audit_left > 0 and (cut_short or not planned):
        now |= {p.cell for p in planned}
        room = min(audit_left, cells_left - len(planned))
        planned += audit_cells(know, answers, share=share, limit=room, taken=now)
    return Round(planned, know, answers)


def advance(
    universe: Universe,
    cells: Sequence[CellRecord],
    conflicts: Mapping[Pair, str],
    run_cells: CellRunner,
    *,
    budget: Budget,
    strength: int = 2,
    known_axes: Mapping[str, Sequence[str]] | None = None,
    stale: Sequence[CellRecord] = (),
    audited: Iterable[Pair] = (),
    say: Say = lambda _line: None,
) -> Outcome:
    """Rounds of ``plan_round``, each run by ``run_cells``, within ``budget``."""
    cells = list(cells)
    errors: set[Cell] = set()
    spent = rounds = audit_spent = 0
    audits: list[Audit] = []
    checked = set(audited)
    while True:
        found = plan_round(
            universe, cells, conflicts,
            cells_left=budget.cells - spent, audit_left=max(0, budget.reserve - audit_spent),
            share=budget.audit, strength=strength, taken=errors, known_axes=known_axes,
            stale=stale, audited=checked,
        )  # fmt: skip
        if not found.planned:
            break
        rounds += 1
        audit_now = [p for p in found.planned if p.audit is not None]
        say(_round_line(rounds, found.planned, len(audit_now)))
        records = run_cells(found.planned)
        spent += len(found.planned)
        audit_spent += len(audit_now)
        for record in records:
            if record.outcome == CellOutcome.ERROR:
                if (cell := universe.cell(record.pins)) is not None:
                    errors.add(cell)
            else:
                cells.append(record)
        stale = [c for c in stale if universe.cell(c.pins) not in {p.cell for p in found.planned}]
        if audit_now:
            _, after = answers_of(universe, cells, conflicts, checked)
            done = audit_results(audit_now, after)
            audits += done
            checked |= {pair_of(universe, a.pins) for a in done}
    know, answers = answers_of(universe, cells, conflicts, checked)
    return Outcome(cells, answers, know, spent, rounds, audits)


def pair_of(universe: Universe, pins: Mapping[str, str]) -> Pair:
    """Two axes' pins as a pair in axis order."""
    (a, b) = sorted(pins.items(), key=lambda item: universe.packages.index(item[0]))
    return (a, b)


def _round_line(number: int, planned: Sequence[Planned], audits: int) -> str:
    kinds: dict[str, int] = {}
    for item in planned:
        kind = item.why.split(":")[0].split(" release")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in kinds.items())
    return f"round {number}: {len(planned)} cells ({parts})"


def _cover(
    universe: Universe,
    cells: Sequence[CellRecord],
    tried: list[Cell],
    conflicts: Mapping[Pair, str],
    strength: int,
    known_axes: Mapping[str, Sequence[str]] | None,
    stale: Sequence[CellRecord],
) -> list[Planned]:
    """The covering array's new cells, each with why: a new release, a stale answer
    (tested before with other cases or pins), or a pair (triple) still unanswered."""
    blocked = [
        c
        for r in cells
        if r.outcome == CellOutcome.CONFLICT and (c := universe.cell(r.pins)) is not None
    ]
    tested = [c for c in tried if c not in set(blocked)]
    new = covering_cells(universe, tested, conflicts=conflicts, blocked=blocked, strength=strength)
    stale_cells = {universe.cell(r.pins) for r in stale}
    planned: list[Planned] = []
    for cell in new:
        fresh = [
            f"{p} {v}"
            for p, v in universe.values(cell)
            if known_axes and p in known_axes and v not in known_axes[p]
        ]
        if fresh:
            why = "new release " + ", ".join(fresh)
        elif cell in stale_cells:
            why = "stale answer (tested with other cases or pins)"
        else:
            why = "pair unanswered" if strength == 2 else "triple unanswered"
        planned.append(Planned(cell, why))
    return planned
