"""What ``repromatrix atlas run / plan / report`` print and write (cli/atlas.py calls
these): the steps are flow.py's, the page and the CSV report.py's."""

from __future__ import annotations

import json
from pathlib import Path

from repromatrix.hunts.atlas.flow import AtlasOptions, plan as plan_cells, prepare, run as run_flow


def run(options: AtlasOptions) -> int:
    outcome, prepared = run_flow(options, say=print)
    written = render(options.out)
    answered = sum(1 for a in outcome.answers.values() if a.status != "untested")
    print(
        f"atlas: {outcome.planned} cells run in {outcome.rounds} rounds "
        f"(lower bound {prepared.universe.lower_bound()}); "
        f"{answered} of {len(outcome.answers)} pairs answered"
    )
    for path in written:
        print(f"  {path}")
    return 0


def plan(matrix: Path, out: Path, wheelhouse: Path | None, budget: int | None, as_json: bool) -> int:
    prepared = prepare(
        AtlasOptions(matrix=matrix, out=out, wheelhouse=wheelhouse, budget=budget),
        say=lambda _line: None,
    )
    planned, reached = plan_cells(prepared)
    universe = prepared.universe
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


def render(out: Path) -> list[Path]:
    from repromatrix.hunts.atlas.report import write_report
    from repromatrix.hunts.atlas.view import load_view

    return write_report(load_view(out))


def report(out: Path) -> int:
    for path in render(out):
        print(path)
    return 0
