"""The extra cells that separate the suspects of failing cells, pure (one round of
them; engine.plan_round asks for it, and its loop or the next night asks again).

A failing cell condemns nobody on its own (knowledge.py). A round asks, per case and
in this order, each at most once:

1. for a release not cleared in an unexplained failing cell: the same release with
   every other version changed, to cleared ones away from its failing partners (one
   factor at a time: failing again with new partners on every axis condemns it
   alone; passing clears it);
2. for an unexplained cell whose releases are all cleared: each of its pairs not
   cleared, kept, beside versions known to work (failing there isolates it);
3. for a pair isolated once (pending): the pair again with other partners on every
   remaining axis (its confirmation);
4. for a release condemned alone: its pairs no isolated cell tried, each kept beside
   versions known to work (a partner it works with clears it again);
5. for a pair a case never answered although cells held it (each of them failed for
   another cause): the pair beside versions known to work;
6. a cell where a case failed and passed: the same cell again (at most ``RERUNS``).

Each cell is chosen among those not tested or planned yet, never across a conflict.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from repromatrix.hunts.atlas.knowledge import CaseKnowledge, Knowledge, Seen, suspects
from repromatrix.hunts.atlas.rules import Answer, Rule
from repromatrix.hunts.atlas.universe import Cell, Pair, Universe, Value, shown
from repromatrix.outcomes import AnswerStatus

RERUNS = 2  # a flaky cell is run at most this many times again
MASKED_TRIES = 2  # cells planned for a pair a case never answered, before it is left
RECOVERED = "its cells failed for other causes"


@dataclass(frozen=True)
class Planned:
    """A cell to run and why (an audit's pair, case and rule ride along)."""

    cell: Cell
    why: str
    audit: tuple[Pair, str, str, str] | None = None  # pair, case, rule name, inferred status


def follow_ups(
    know: Knowledge,
    answers: Mapping[Pair, Answer],
    *,
    taken: Iterable[Cell],
    limit: int,
) -> list[Planned]:
    """At most ``limit`` new cells, never one in ``taken`` (tested or planned) but a
    flaky cell's rerun."""
    if limit <= 0:
        return []
    universe = know.universe
    taken_cells = set(taken)
    planned: list[Planned] = []
    asked: set[tuple[Value, ...]] = set()

    def add(keep: tuple[Value, ...], case: CaseKnowledge, why: str, **how) -> bool:
        if len(planned) >= limit or keep in asked:
            return False
        asked.add(keep)
        cell = complete(know, keep, case=case, taken=taken_cells, **how)
        if cell is not None:
            taken_cells.add(cell)
            planned.append(Planned(cell, why))
        return cell is not None

    for case in _cases(know):
        # One failing cell per suspect at a time: cells that share a suspect with one
        # localised now most likely fail of the same fault, and wait for its verdict.
        asked_now: set[tuple[Value, ...]] = set()
        recurring = _recurring(universe, case)
        for run in case.unexplained:
            found = suspects(universe, case, run)
            if asked_now & set(found):
                continue
            # A pair holding a release that fails again and again (of this cause) is
            # asked first; the others wait: once the fault is found they are
            # bystanders, asked several a cell (``recover``).
            likely = [s for s in found if len(s) == 1 or set(s) & recurring[run.cause]]
            found = likely or found
            asked_now |= set(found)
            alone = [s for s in found if len(s) == 1]
            for schema in alone:
                partners = [
                    r.cell
                    for r in case.failing[run.cause]
                    if schema[0] in _values(universe, r.cell)
                ]
                add(schema, case, f"localise: {shown(schema)} with other partners", away=partners)
            if alone:
                continue
            touched = sorted(
                {v for schema in found for v in schema}, key=universe.values(run.cell).index
            )
            if len(found) > len(touched):  # fewer cells changing one release at a time
                for value in touched:
                    keep = tuple(v for v in universe.values(run.cell) if v != value)
                    why = f"localise: {shown([value])} changed, the rest of a failing cell kept"
                    add(keep, case, why, away=[run.cell])
                continue
            for schema in found:
                why = f"localise: {shown(schema)} beside versions known to work"
                add(schema, case, why, away=[run.cell])
    for case in _cases(know):
        for condemned in case.pairs.values():
            for pair, judged in condemned.items():
                if judged.second is None:
                    first = know.universe.cell(know.cells[judged.first].pins)
                    why = f"confirm: {shown(pair)} with other partners"
                    add(pair, case, why, differ=first)
    for case in _cases(know):
        for cause, releases in case.alone.items():
            for value in releases:
                tried = {
                    v for r in case.isolated[(cause, value)] for v in _values(universe, r.cell)
                }
                for package in universe.packages:
                    if package == value[0]:
                        continue
                    for version in universe.axes[package]:
                        other = (package, version)
                        pair = universe.key(value, other)
                        if other in tried or pair in know.conflicts:
                            continue
                        why = f"localise: {shown(pair)} (untried beside a release failing alone)"
                        if add(pair, case, why, prefer_untried=value):
                            tried |= set(_values(universe, planned[-1].cell))
    if not planned:
        planned += recover(know, answers, taken=taken_cells, limit=limit)
    planned += _reruns(know, limit - len(planned), {p.cell for p in planned})
    return planned


def recover(
    know: Knowledge, answers: Mapping[Pair, Answer], *, taken: set[Cell], limit: int
) -> list[Planned]:
    """Cells for the pairs a case never answered although cells held them (each of
    those failed for another cause), several a cell where they fit together, beside
    versions known to work; a pair tried so in ``MASKED_TRIES`` cells is left to
    inference."""
    open_pairs: dict[Pair, CaseKnowledge] = {}
    for pair, answer in answers.items():
        for found in answer.cases:
            if found.status == AnswerStatus.UNTESTED or found.rule is Rule.NEIGHBOURS:
                held = know.cases[found.case].holding.get(pair, [])
                tries = sum(1 for r in held if RECOVERED in know.cells[r.index].reason)
                if held and tries < MASKED_TRIES:
                    open_pairs.setdefault(pair, know.cases[found.case])
    planned: list[Planned] = []
    for pair in sorted(open_pairs):
        if len(planned) >= limit:
            break
        if pair not in open_pairs:
            continue  # a cell planned now holds it
        cell = complete(know, pair, taken=taken, case=open_pairs[pair], bonus=set(open_pairs))
        if cell is None:
            continue
        taken.add(cell)
        for held in know.universe.pairs_of(cell):
            open_pairs.pop(held, None)
        planned.append(Planned(cell, f"localise: {shown(pair)} ({RECOVERED})"))
    return planned


def _recurring(universe: Universe, case: CaseKnowledge) -> dict[str, set[Value]]:
    """Per cause, the releases in two or more of its unexplained failing cells."""
    counts: dict[str, dict[Value, int]] = {}
    for run in case.unexplained:
        seen = counts.setdefault(run.cause, {})
        for value in universe.values(run.cell):
            seen[value] = seen.get(value, 0) + 1
    return {cause: {v for v, n in seen.items() if n >= 2} for cause, seen in counts.items()}


def _reruns(know: Knowledge, limit: int, now: set[Cell]) -> list[Planned]:
    universe = know.universe
    runs: dict[Cell, int] = {}
    flaky: list[Cell] = []
    for record in know.cells:
        cell = universe.cell(record.pins)
        if cell is None:
            continue
        runs[cell] = runs.get(cell, 0) + 1
    for case in know.cases.values():
        for run in case.runs:
            if run.seen is Seen.FLAKY and run.cell not in flaky:
                flaky.append(run.cell)
    out = []
    for cell in flaky:
        if len(out) < limit and runs.get(cell, 0) <= RERUNS and cell not in now:
            out.append(
                Planned(cell, f"rerun: a case failed and passed ({shown(universe.values(cell))})")
            )
    return out


def _cases(know: Knowledge) -> list[CaseKnowledge]:
    return [know.cases[c] for c in sorted(know.cases)]


def complete(
    know: Knowledge,
    keep: tuple[Value, ...],
    *,
    taken: set[Cell],
    case: CaseKnowledge | None = None,
    away: Sequence[Cell] = (),
    differ: Cell | None = None,
    prefer_untried: Value | None = None,
    bonus: set[Pair] | None = None,
    width: int = 4,
) -> Cell | None:
    """A cell holding ``keep``, the other axes filled with versions that make the rest
    as cleared as can be for ``case`` (no conflict, nothing condemned), preferring
    versions not in ``away``; on every free axis other than ``differ``'s version where
    another can stand; None when every such cell is taken."""
    universe = know.universe
    kept = dict(keep)
    free = [p for p in universe.packages if p not in kept]
    untried: set[Value] = set()
    if prefer_untried is not None and case is not None:
        untried = _untried(know, case, prefer_untried)
    options: list[list[str]] = []
    for package in free:
        i = universe.packages.index(package)
        versions = list(universe.axes[package])
        if differ is not None and any(v != differ[i] for v in versions):
            versions = [v for v in versions if v != differ[i]]
        ranked = sorted(
            versions,
            key=lambda v, p=package: -_value_score(know, case, kept, (p, v), away, untried, bonus),
        )
        options.append(ranked[:width])
    best: tuple[float, Cell] | None = None
    for choice in itertools.product(*options):
        pins = {**kept, **dict(zip(free, choice, strict=True))}
        cell = tuple(pins[p] for p in universe.packages)
        if cell in taken or (case is not None and _holds_condemned(universe, case, cell, keep)):
            continue
        score = _cell_score(know, case, cell, keep, away, untried)
        if score is not None and bonus:
            score += 3.0 * sum(1 for pair in know.universe.pairs_of(cell) if pair in bonus)
        if score is not None and (best is None or score > best[0]):
            best = (score, cell)
    return None if best is None else best[1]


def _holds_condemned(
    universe: Universe, case: CaseKnowledge, cell: Cell, keep: tuple[Value, ...]
) -> bool:
    """Whether the cell holds, besides ``keep``, a release or pair condemned for the
    case: its failure would hide what the cell asks (a kept release's own
    condemnation is what the cell re-tests)."""
    kept = set(keep)
    loose = [v for v in universe.values(cell) if v not in kept]
    if any(_condemned(case, (v,)) for v in loose):
        return True
    return any(
        any(pair in found for found in case.pairs.values())
        for pair in universe.pairs_of(cell)
        if not set(pair) <= kept
    )


def _untried(know: Knowledge, case: CaseKnowledge, value: Value) -> set[Value]:
    tried: set[Value] = set()
    for (_, release), runs in case.isolated.items():
        if release == value:
            tried |= {v for r in runs for v in _values(know.universe, r.cell)}
    return {
        (p, v)
        for p in know.universe.packages
        for v in know.universe.axes[p]
        if p != value[0] and (p, v) not in tried
    }


def _value_score(
    know: Knowledge, case: CaseKnowledge | None, kept: Mapping[str, str], value: Value,
    away: Sequence[Cell], untried: set[Value], bonus: set[Pair] | None = None,
) -> float:  # fmt: skip
    universe = know.universe
    score = 0.0
    for other in kept.items():
        pair = universe.key(value, other)
        if pair in know.conflicts:
            return -1e9
        score += _clear(know, case, pair) + (3.0 if bonus and pair in bonus else 0.0)
    score += _clear(know, case, (value,))
    score += 1.5 if value in untried else 0.0
    i = universe.packages.index(value[0])
    return score - 0.5 * sum(1 for cell in away if cell[i] == value[1])


def _cell_score(
    know: Knowledge, case: CaseKnowledge | None, cell: Cell, keep: tuple[Value, ...],
    away: Sequence[Cell], untried: set[Value],
) -> float | None:  # fmt: skip
    universe = know.universe
    score = 0.0
    for pair in universe.pairs_of(cell):
        if pair in know.conflicts:
            return None
        if not set(pair) <= set(keep):
            score += _clear(know, case, pair)
    for i, value in enumerate(universe.values(cell)):
        if value in keep:
            continue
        score += _clear(know, case, (value,)) + (1.5 if value in untried else 0.0)
        score -= 0.5 * sum(1 for other in away if other[i] == value[1])
    return score


def _clear(know: Knowledge, case: CaseKnowledge | None, schema: tuple[Value, ...]) -> float:
    """For the case asked about: +2 cleared, -4 condemned; +0.5 cleared for every
    case, -1 condemned for another (its failure could hide this one's)."""
    score = 0.0
    every = True
    for other in know.cases.values():
        bad = _condemned(other, schema)
        if other is case:
            score += -4.0 if bad else (2.0 if other.cleared(schema) else 0.0)
        elif bad:
            score -= 1.0
        every = every and other.cleared(schema)
    return score + (0.5 if every and know.cases else 0.0)


def _condemned(case: CaseKnowledge, schema: tuple[Value, ...]) -> bool:
    if any(v in found for found in case.alone.values() for v in schema):
        return True
    return len(schema) == 2 and any(schema in found for found in case.pairs.values())


def _values(universe: Universe, cell: Cell) -> set[Value]:
    return set(universe.values(cell))
