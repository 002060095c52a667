"""Every pair's answer from stored cells and uv's resolutions (pure): what the
queries, the report and each round of a run read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from repromatrix.hunts.atlas.inference import infer
from repromatrix.hunts.atlas.knowledge import Answer, Knowledge, learn, suspected, tested_answers
from repromatrix.hunts.atlas.state import CellRecord, Resolution
from repromatrix.hunts.atlas.universe import Pair, Universe


def answers_of(
    universe: Universe, cells: Sequence[CellRecord], conflicts: Mapping[Pair, str]
) -> tuple[Knowledge, dict[Pair, Answer]]:
    """What the cells prove, then what their neighbours let one infer."""
    know = learn(universe, enumerate(cells), conflicts)
    return know, infer(universe, tested_answers(know), suspected(know))


def conflicts_of(universe: Universe, resolutions: Iterable[Resolution]) -> dict[Pair, str]:
    """The universe's pairs that uv cannot install together, with its reason."""
    order = universe.packages
    out: dict[Pair, str] = {}
    for resolution in resolutions:
        if not resolution.conflict or len(resolution.pins) != 2:
            continue
        (a, x), (b, y) = sorted(
            resolution.pins.items(),
            key=lambda item: order.index(item[0]) if item[0] in order else len(order),
        )
        if a in universe.axes and b in universe.axes:
            out[((a, x), (b, y))] = resolution.conflict
    return out
