"""The atlas as a hunt (hunts.hunt.Hunt; its row in hunt_table.py): ``plan`` checks the
``atlas:`` block, lists each axis's releases and resolves the pairs with uv;
``run(plan, cells)`` runs tonight's cells, localises what fails, writes atlas.json
after every batch and renders the page, the CSV and summary.md.

Its probe is a cell of the atlas with every case the block names, run through the
normal pipeline (one interpreter a cell, as a matrix combination: torch is imported
once, not once a case), so its runner is no Prober but an ``engine.RunCells``:
planned cells in, their records out. Tests hand their own; None runs them through
pipeline.run. Its cells are a matrix's: matrix.yaml's ``defaults:`` under the
block's pins and axes (cells.matrix_data).
"""

from __future__ import annotations

from repromatrix.hunts.atlas.engine import Outcome, RunCells
from repromatrix.hunts.atlas.flow import AtlasOptions, Prepared, prepare, run_prepared
from repromatrix.hunts.hunt import Hunt, Voice
from repromatrix.matrix.pins import pin_text

__all__ = ["ATLAS", "AtlasOptions"]


def plan(options: AtlasOptions, voice: Voice) -> Prepared:
    """Everything before a cell runs; a UserError (one line) for bad input."""
    return prepare(options, say=voice.say)


def run(checked: Prepared, cells: RunCells | None, voice: Voice) -> tuple[Outcome, int]:
    """Tonight's cells of ``checked`` with ``cells`` running them (None: the
    pipeline); the outcome and the exit status (0: done)."""
    from repromatrix.hunts.atlas.report import render

    outcome = run_prepared(checked, run_cells=cells, say=voice.say)
    written = render(checked.options.out)
    answered = sum(1 for a in outcome.answers.values() if a.status != "untested")
    voice.say(
        f"atlas: {outcome.planned} cells run in {outcome.rounds} rounds "
        f"(lower bound {checked.universe.lower_bound()}); "
        f"{answered} of {len(outcome.answers)} pairs answered"
    )
    for path in written:
        voice.say(f"  {path}")
    return outcome, 0


def took(options: AtlasOptions) -> str:
    """What every cell takes from matrix.yaml's defaults: the pins the block's own pins
    and axes leave, in words."""
    from repromatrix.matrix.load import load_matrix

    matrix = load_matrix(options.matrix, cases=options.cases)
    if matrix.atlas is None or matrix.defaults is None:
        return ""  # the plan says what is wrong
    own = {pin.package for pin in matrix.atlas.pins} | set(matrix.atlas.axes)
    taken = [pin_text(pin) for pin in matrix.defaults.pins if pin.package not in own]
    return f"from matrix.yaml's defaults: {', '.join(taken)}" if taken else ""


ATLAS: Hunt[AtlasOptions, Prepared, Outcome, RunCells | None] = Hunt("atlas", plan, run, took)
