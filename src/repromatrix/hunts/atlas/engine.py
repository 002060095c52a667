"""One atlas run's decisions, with the cells run by whoever is handed in (pure):

covering array (seeded with what stands) -> run -> rounds of localisation until
every pair is answered or nothing new can be asked -> infer -> audit a share of the
inferred answers -> the answers.

``run_cells`` receives planned cells (and why) and returns one CellRecord each: the
pipeline in flow.py, an oracle in the tests and the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from repromatrix.hunts.atlas.answers import answers_of
from repromatrix.hunts.atlas.knowledge import Answer, Knowledge
from repromatrix.hunts.atlas.localise import Planned, complete, follow_ups
from repromatrix.hunts.atlas.planner import covering_cells
from repromatrix.hunts.atlas.state import Audit, CellRecord
from repromatrix.hunts.atlas.universe import Cell, Pair, Universe

RunCells = Callable[[Sequence[Planned]], list[CellRecord]]
Say = Callable[[str], None]


@dataclass
class Outcome:
    cells: list[CellRecord]  # every cell, the earlier ones first
    answers: dict[Pair, Answer]
    knowledge: Knowledge
    planned: int = 0  # cells run now
    rounds: int = 0
    audits: list[Audit] = field(default_factory=list)


def cover_plan(
    universe: Universe,
    cells: Sequence[CellRecord],
    conflicts: Mapping[Pair, str],
    *,
    strength: int,
    known_axes: Mapping[str, Sequence[str]] | None = None,
    stale: Sequence[CellRecord] = (),
) -> list[Planned]:
    """The covering array's new cells, each with why: a new release, a stale answer
    (tested before with other cases or pins), or a pair (triple) still unanswered."""
    tested, blocked = [], []
    for record in cells:
        cell = universe.cell(record.pins)
        if cell is None:
            continue
        (blocked if record.outcome == "conflict" else tested).append(cell)
    new = covering_cells(universe, tested, conflicts=conflicts, blocked=blocked, strength=strength)
    stale_cells = {universe.cell(r.pins) for r in stale}
    planned: list[Planned] = []
    for cell in new:
        fresh = [
            f"{p} {v}"
            for p, v in zip(universe.packages, cell, strict=True)
            if known_axes and p in known_axes and v not in known_axes[p]
        ]
        if fresh:
            why = "new release " + ", ".join(fresh)
        elif cell in stale_cells:
            why = "stale answer (tested with other cases or pins)"
        else:
            why = "pair unanswered" if strength == 2 else "triple unanswered"
        planned.append((cell, why))
    return planned


def advance(
    universe: Universe,
    cells: Sequence[CellRecord],
    conflicts: Mapping[Pair, str],
    run_cells: RunCells,
    *,
    budget: int,
    audit: float = 0.0,
    strength: int = 2,
    known_axes: Mapping[str, Sequence[str]] | None = None,
    stale: Sequence[CellRecord] = (),
    say: Say = lambda _line: None,
) -> Outcome:
    """Plan, run and localise within ``budget`` cells; ``audit`` of it is kept for
    re-testing inferred answers."""
    cells = list(cells)
    reserve = int(budget * audit)
    spent = 0
    rounds = 0

    def run(planned: Sequence[Planned]) -> None:
        nonlocal spent, rounds
        rounds += 1
        records = run_cells(planned)
        spent += len(planned)
        cells.extend(records)

    cover = cover_plan(
        universe, cells, conflicts, strength=strength, known_axes=known_axes, stale=stale
    )
    first = cover[: max(0, budget - reserve)]
    if first:
        say(f"covering array: {len(cover)} cells to add; running {len(first)}")
        run(first)
    while True:
        know, answers = answers_of(universe, cells, conflicts)
        left = budget - reserve - spent
        if left <= 0:
            break
        taken = _taken(universe, cells)
        more = follow_ups(know, answers, taken=taken, limit=left)
        if not more:
            remaining = cover_plan(universe, cells, conflicts, strength=strength)
            more = remaining[:left]  # a conflict found by a run left pairs uncovered
        if not more:
            break
        say(f"localisation round {rounds + (0 if first else 1)}: {len(more)} cells")
        run(more)
    audits: list[Audit] = []
    inferred = sorted(p for p, a in answers.items() if a.evidence == "inferred")
    count = min(len(inferred), budget - spent, max(1, reserve) if audit > 0 else 0)
    if count > 0:
        chosen = [inferred[i * len(inferred) // count] for i in range(count)]
        taken = _taken(universe, cells)
        planned: list[Planned] = []
        for pair in chosen:
            cell = complete(know, pair, away_from=[], taken=taken)
            if cell is not None:
                taken.add(cell)
                planned.append((cell, f"audit: inferred {answers[pair].status} " + _shown(pair)))
        if planned:
            say(f"audit: {len(planned)} inferred answers re-tested")
            run(planned)
            know, after = answers_of(universe, cells, conflicts)
            for pair in chosen:
                found = after[pair]
                if found.evidence == "tested":
                    audits.append(
                        Audit(pins=dict(pair), inferred=answers[pair].status, found=found.status)
                    )
            answers = after
    return Outcome(cells, answers, know, spent, rounds, audits)


def _taken(universe: Universe, cells: Sequence[CellRecord]) -> set[Cell]:
    return {c for r in cells if (c := universe.cell(r.pins)) is not None}


def _shown(pair: Pair) -> str:
    return " + ".join(f"{p} {v}" for p, v in pair)
