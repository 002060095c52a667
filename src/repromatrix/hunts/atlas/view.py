"""The stored atlas read back for queries and reports (no index, no uv, no run):
atlas.json -> the universe it covers, its standing cells, every pair's answer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.hunts.atlas.answers import answers_of, conflicts_of
from repromatrix.hunts.atlas.knowledge import Answer, Knowledge
from repromatrix.hunts.atlas.state import FILE_NAME, AtlasState, CellRecord, read_state
from repromatrix.hunts.atlas.universe import Pair, Universe


@dataclass
class View:
    folder: Path
    state: AtlasState
    universe: Universe
    cells: list[CellRecord]  # the standing cells; Answer.cells index this list
    knowledge: Knowledge
    answers: dict[Pair, Answer]

    def answer(self, one: tuple[str, str], other: tuple[str, str]) -> Answer:
        order = self.universe.packages
        pair = (one, other) if order.index(one[0]) < order.index(other[0]) else (other, one)
        return self.answers[pair]


def load_view(folder: Path) -> View:
    state = read_state(folder)
    if not state.axes:
        raise UserError(f"{folder / FILE_NAME}: no atlas yet (repromatrix atlas run)")
    universe = Universe({p: tuple(v) for p, v in state.axes.items()}, held=state.held)
    cells = state.standing()
    conflicts = conflicts_of(universe, state.resolutions)
    know, answers = answers_of(universe, cells, conflicts)
    return View(folder, state, universe, cells, know, answers)
