"""The stored atlas read back for queries and reports (no index, no uv, no run):
atlas.json -> the universe it covers, its standing cells, every pair's answer."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.hunts.atlas.answers import answers_of, conflicts_of
from repromatrix.hunts.atlas.knowledge import Knowledge
from repromatrix.hunts.atlas.rules import Answer
from repromatrix.hunts.atlas.state import FILE_NAME, AtlasState, CellRecord, read_state
from repromatrix.hunts.atlas.universe import ABSENT, Pair, Universe, Value


@dataclass
class View:
    folder: Path
    state: AtlasState
    universe: Universe
    cells: list[CellRecord]  # the standing cells; Answer.cells index this list
    knowledge: Knowledge
    answers: dict[Pair, Answer]

    def answer(self, one: Value, other: Value) -> Answer:
        return self.answers[self.universe.key(one, other)]


def load_view(folder: Path) -> View:
    state = read_state(folder)
    if not state.axes:
        raise UserError(f"{folder / FILE_NAME}: no atlas yet (repromatrix atlas run)")
    universe = Universe({p: tuple(v) for p, v in state.axes.items()}, held=state.held)
    cells = state.standing()
    conflicts = conflicts_of(universe, state.resolutions)
    audited = [
        universe.key(*a.pins.items())  # type: ignore[call-arg]
        for a in state.audits
        if len(a.pins) == 2 and all(v in universe.axes.get(p, ()) for p, v in a.pins.items())
    ]
    know, answers = answers_of(universe, cells, conflicts, audited)
    return View(folder, state, universe, cells, know, answers)


def repro_of(view: View, index: int, case: str | None) -> str:
    """One line that reruns a stored cell (its held pins and its axes; an optional
    axis's ``ABSENT`` as ``PKG=null``), with ``case`` only."""
    cell = view.cells[index]
    pins = {**cell.held, **{p: (None if v == ABSENT else v) for p, v in cell.pins.items()}}
    return repro_line(pins, case)


def repro_line(requested: Mapping[str, str | None], case: str | None) -> str:
    """One line that reruns a cell's case anywhere (``check`` takes every pin)."""
    from repromatrix.matrix.pins import parse_pin, pin_text

    words = ["repromatrix", "check"] + (["--case", case] if case else [])
    for package, spec in requested.items():
        words += ["--pin", pin_text(parse_pin(package, None if spec in (None, "null") else spec))]
    return shlex.join(words)
