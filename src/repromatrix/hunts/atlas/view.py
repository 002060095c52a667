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
from repromatrix.hunts.atlas.state import (
    FILE_NAME,
    AtlasState,
    CellRecord,
    held_pin,
    held_source,
    old_source,
    read_state,
)
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

    def sources(self) -> list[str]:
        """Which tree of each held folder pin the answers are about (``mylib . abc1234
        + edits, sha256:0f1e2d3c4b5a``)."""
        return [
            f"{p} {held_pin(v)} {src}"
            for p, v in self.state.held.items()
            if (src := held_source(v))
        ]

    def old_trees(self) -> list[str]:
        """One line per held folder pin whose tree changed under tested cells: their
        answers are about an old tree, never counted (the next run re-tests them)."""
        cells: dict[str, int] = {}
        trees: dict[str, dict[str, None]] = {}
        for cell in self.state.cells:
            for package, source in old_source(cell, self.state.held).items():
                cells[package] = cells.get(package, 0) + 1
                trees.setdefault(package, {})[source] = None
        return [
            f"{n} cells tested on an old tree of {p} ({', '.join(list(trees[p])[-2:])}"
            f"{'' if len(trees[p]) <= 2 else f' and {len(trees[p]) - 2} more'})"
            for p, n in cells.items()
        ]


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
    pins = {
        **{p: held_pin(v) for p, v in cell.held.items()},
        **{p: (None if v == ABSENT else v) for p, v in cell.pins.items()},
    }
    return repro_line(pins, case)


def repro_line(requested: Mapping[str, str | None], case: str | None) -> str:
    """One line that reruns a cell's case anywhere (``check`` takes every pin)."""
    from repromatrix.matrix.pins import parse_pin, pin_text

    words = ["repromatrix", "check"] + (["--case", case] if case else [])
    for package, spec in requested.items():
        words += ["--pin", pin_text(parse_pin(package, None if spec in (None, "null") else spec))]
    return shlex.join(words)
