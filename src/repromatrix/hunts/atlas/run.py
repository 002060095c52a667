"""The atlas as a hunt (hunts.Hunt; its row in hunt_table.py): ``plan`` checks the
``atlas:`` block, lists each axis's releases and resolves the pairs with uv;
``run(plan, prober)`` runs tonight's cells, localises what fails, writes atlas.json
after every batch and renders the page, the CSV and summary.md.

Its probe is a cell of the atlas with every case the block names, run through the
normal pipeline (one interpreter a cell, as a matrix combination: torch is imported
once, not once a case), so its prober is an ``engine.RunCells``: planned cells in,
their records out. Tests hand their own; None runs them through pipeline.run.
"""

from __future__ import annotations

from collections.abc import Callable

from repromatrix.hunts.atlas.engine import Outcome, RunCells
from repromatrix.hunts.atlas.flow import AtlasOptions, Prepared, prepare, run_prepared

__all__ = ["AtlasOptions", "plan", "run"]


def plan(options: AtlasOptions, *, say: Callable[[str], None] = print) -> Prepared:
    """Everything before a cell runs; a UserError (one line) for bad input."""
    return prepare(options, say=say)


def run(
    checked: Prepared, prober: RunCells | None, *, say: Callable[[str], None] = print
) -> tuple[Outcome, int]:
    """Tonight's cells of ``checked`` with ``prober`` running them (None: the
    pipeline); the outcome and the exit status (0: done)."""
    from repromatrix.hunts.atlas.report import render

    outcome = run_prepared(checked, run_cells=prober, say=say)
    written = render(checked.options.out)
    answered = sum(1 for a in outcome.answers.values() if a.status != "untested")
    say(
        f"atlas: {outcome.planned} cells run in {outcome.rounds} rounds "
        f"(lower bound {checked.universe.lower_bound()}); "
        f"{answered} of {len(outcome.answers)} pairs answered"
    )
    for path in written:
        say(f"  {path}")
    return outcome, 0
