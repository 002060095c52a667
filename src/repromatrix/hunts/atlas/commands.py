"""What ``repromatrix atlas plan / fold / report`` print and write (cli/atlas.py calls
these; ``atlas run`` is the hunt, run.py): the steps are flow.py's, the page and the
CSV report.py's."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from repromatrix.hunts.atlas.flow import AtlasOptions, prepare
from repromatrix.hunts.atlas.flow import plan as plan_cells
from repromatrix.hunts.atlas.state import write_state


def plan(
    matrix: Path,
    out: Path,
    wheelhouse: Path | None,
    budget: int | None,
    as_json: bool,
    tier_file: Path | None = None,
) -> int:
    prepared = prepare(
        AtlasOptions(matrix=matrix, out=out, wheelhouse=wheelhouse, budget=budget),
        say=lambda _line: None,
    )
    planned, reached = plan_cells(prepared)
    universe = prepared.universe
    # uv's answers and tonight's releases are kept (nothing is run): a nightly's fold
    # reads them, and no later run asks uv again.
    prepared.state.axes = {p: list(v) for p, v in universe.axes.items()}
    write_state(out, prepared.state)
    if tier_file is not None:
        from repromatrix.hunts.atlas.cells import matrix_data

        data = matrix_data(prepared.matrix, prepared.settings, universe, planned)
        tier_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    if as_json:
        cells = [{"pins": universe.pins(cell), "reason": why} for cell, why in planned]
        print(json.dumps({"cells": cells, "coverage": reached}, indent=2))
        return 0
    for number, (cell, why) in enumerate(planned, 1):
        pins = " ".join(f"{p}=={v}" for p, v in universe.pins(cell).items())
        print(f"{number:>4}  {pins}  ({why})")
    print(
        f"coverage: {reached['answered']} of {reached['pairs']} pairs answered "
        f"({reached['tested']} tested, {reached['inferred']} inferred, "
        f"{reached['conflict']} conflicts); {len(planned)} cells planned; "
        f"lower bound {reached['lower_bound']} cells (the two largest axes' product)"
    )
    return 0


def fold(out: Path, matrix: Path, results: Path) -> int:
    """A nightly's merged results of the planned tier, folded into the atlas."""
    from repromatrix.hunts.atlas.cells import TIER
    from repromatrix.hunts.atlas.cells import fold as fold_results
    from repromatrix.hunts.atlas.view import load_view
    from repromatrix.matrix.load import load_matrix
    from repromatrix.outcomes import CombinationStatus
    from repromatrix.results import load_results
    from repromatrix.verdicts.knownissues import RegistryLocation

    loaded = load_matrix(matrix)
    view = load_view(out)
    state = view.state
    found = load_results(results / "results.json" if results.is_dir() else results)
    registry = RegistryLocation.of(matrix=loaded.path).load()
    cells = fold_results(found, state.held, view.universe, loaded.packages, registry)
    known = {tuple(sorted(c.pins.items())) for c in state.standing()}
    new = [c for c in cells if tuple(sorted(c.pins.items())) not in known]
    state.cells += new
    write_state(out, state)
    lost = sum(
        1 for r in found.combinations if r.tier == TIER and r.status == CombinationStatus.LOST
    )
    print(
        f"atlas: {len(new)} cells folded in ({len(cells) - len(new)} already there"
        + (f"; {lost} lost, no answer: planned again" if lost else "")
        + ")"
    )
    return report(out)


def report(out: Path) -> int:
    from repromatrix.hunts.atlas.report import render

    for path in render(out):
        print(path)
    return 0
