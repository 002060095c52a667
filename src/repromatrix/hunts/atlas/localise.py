"""The extra cells that separate the suspects of failing cells, pure.

A failing cell condemns nobody on its own (knowledge.py). Each round asks:

- for a version not yet cleared for a failing case: the same version with every
  other version changed (one factor at a time: still failing with new partners on
  every axis condemns it alone; passing clears it);
- for an open pair: that pair kept, the others chosen among versions and pairs
  already known to work, so that a failure can only be the pair's.

Rounds repeat until every pair is works, breaks or conflict, or nothing new can be
asked, or the budget is spent (flow.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

from repromatrix.hunts.atlas.knowledge import Answer, Knowledge
from repromatrix.hunts.atlas.universe import Cell, Pair, Universe, Value

Planned = tuple[Cell, str]  # a cell and why


def follow_ups(
    know: Knowledge,
    answers: Mapping[Pair, Answer],
    *,
    taken: Iterable[Cell],
    limit: int,
) -> list[Planned]:
    """At most ``limit`` new cells, never one in ``taken`` (tested or planned)."""
    universe = know.universe
    taken_cells = set(taken)
    planned: list[Planned] = []
    asked: set[Value] = set()

    def add(keep: tuple[Value, ...], away_from: list[Cell], why: str) -> bool:
        if len(planned) >= limit:
            return False
        cell = complete(know, keep, away_from=away_from, taken=taken_cells)
        if cell is not None:
            taken_cells.add(cell)
            planned.append((cell, why))
        return cell is not None

    # Versions first: once one is judged alone, the cells it failed in are explained
    # and their other pairs can be inferred. A version that no new cell can test
    # (every cell with it taken) leaves its pairs to the pair follow-ups.
    judged: set[Value] = set()  # versions with a cell planned now
    waiting: set[int] = set()  # failing cells whose verdict waits on such a version
    for case in sorted(know.cases):
        for t in know.tested:
            if case not in t.failing or know.explained(case, t.cell):
                continue
            for schema in know.suspects(case, t.cell):
                if len(schema) != 1:
                    continue
                value = schema[0]
                if value not in asked:
                    asked.add(value)
                    partners = [
                        u.cell
                        for u in know.tested
                        if case in u.failing and value in _values(universe, u.cell)
                    ]
                    why = f"localise: {value[0]} {value[1]} with other partners"
                    if add(schema, partners, why):
                        judged.add(value)
                if value in judged:
                    waiting.add(t.index)
    for pair, answer in answers.items():
        if answer.status != "untested" or not answer.cells or judged & set(pair):
            continue  # a pair never tested is the covering array's (planner.py)
        if all(i in waiting for i in answer.cells):
            continue  # once the version is judged, the cell may be explained
        why = f"localise: {_shown(pair)} beside versions known to work"
        add(pair, [know.tested_cell(i) for i in answer.cells], why)
    return planned


def complete(
    know: Knowledge,
    keep: tuple[Value, ...],
    *,
    away_from: list[Cell],
    taken: set[Cell],
    width: int = 4,
) -> Cell | None:
    """A cell holding ``keep``, the other axes filled with versions that make the
    rest as cleared as can be (no conflict, nothing condemned), preferring versions
    not in ``away_from``; None when every such cell is taken."""
    universe = know.universe
    kept = dict(keep)
    free = [p for p in universe.packages if p not in kept]
    options: list[list[str]] = []
    for package in free:
        ranked = sorted(
            universe.axes[package],
            key=lambda v, p=package: -_score(know, kept, (p, v), away_from),
        )
        options.append(ranked[:width])
    best: tuple[float, Cell] | None = None
    for choice in itertools.product(*options):
        pins = {**kept, **dict(zip(free, choice, strict=True))}
        cell = tuple(pins[p] for p in universe.packages)
        if cell in taken:
            continue
        score = _cell_score(know, cell, keep, away_from)
        if score is None:
            continue
        if best is None or score > best[0]:
            best = (score, cell)
    return None if best is None else best[1]


def _score(know: Knowledge, kept: Mapping[str, str], value: Value, away: list[Cell]) -> float:
    score = 0.0
    for other in kept.items():
        pair = _ordered(know.universe, value, other)
        if pair in know.conflicts:
            return -1e9
        score += _clear(know, pair)
    score += _clear(know, (value,))
    i = know.universe.packages.index(value[0])
    score -= 0.5 * sum(1 for cell in away if cell[i] == value[1])
    return score


def _cell_score(
    know: Knowledge, cell: Cell, keep: tuple[Value, ...], away: list[Cell]
) -> float | None:
    universe = know.universe
    score = 0.0
    for pair in universe.pairs_of(cell):
        if pair in know.conflicts:
            return None
        if set(pair) <= set(keep):
            continue
        score += _clear(know, pair)
    for i, value in enumerate(zip(universe.packages, cell, strict=True)):
        if value in keep:
            continue
        score += _clear(know, (value,))
        score -= 0.5 * sum(1 for other in away if other[i] == value[1])
    return score


def _clear(know: Knowledge, schema: tuple[Value, ...]) -> float:
    """+1 cleared for every case, -4 condemned for one, 0 unknown."""
    cases = know.cases
    for case in cases:
        if len(schema) == 1 and schema[0] in know.condemned_values.get(case, {}):
            return -4.0
        if len(schema) == 2 and (
            schema in know.condemned_pairs.get(case, {})
            or any(v in know.condemned_values.get(case, {}) for v in schema)
        ):
            return -4.0
    return 1.0 if cases and all(know.cleared(case, schema) for case in cases) else 0.0


def _ordered(universe: Universe, one: Value, other: Value) -> Pair:
    order = universe.packages
    return (one, other) if order.index(one[0]) < order.index(other[0]) else (other, one)


def _values(universe: Universe, cell: Cell) -> set[Value]:
    return set(zip(universe.packages, cell, strict=True))


def _shown(pair: Pair) -> str:
    return " + ".join(f"{p} {v}" for p, v in pair)
