"""What ``repromatrix atlas plan / fold / report`` print and write (cli/atlas.py
calls these; ``atlas run`` is run.py's). The planning step is run.tonight, the
fold fold.py's, the page and the CSV report.py's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.run import AtlasOptions, AtlasPlan, coverage, tonight
from repromatrix.hunts.atlas.run import plan as check
from repromatrix.hunts.atlas.state import Plan, PlannedCell, write_state
from repromatrix.hunts.hunt import Voice
from repromatrix.outcomes import AnswerStatus, Evidence


def plan(
    matrix: Path,
    out: Path,
    wheelhouse: Path | None,
    budget: int | None,
    as_json: bool,
    tier_file: Path | None = None,
) -> int:
    """Tonight's cells and why, as ``atlas run`` would plan its first round (the same
    budget and audit); with ``tier_file``, a nightly's plan: the cells as a tier and
    in atlas.json (``plan``: each cell's job id and pins, and the tier file's digest,
    which its results carry), for ``atlas fold`` to take back only what was planned."""
    checked = check(
        AtlasOptions.read(matrix, out=out, wheelhouse=wheelhouse, budget=budget),
        Voice(say=lambda _line: None),
    )
    found = tonight(checked)
    planned, universe = found.planned, checked.universe
    reached = coverage(universe, found.answers)
    keep_plan(checked, planned, tier_file)
    if as_json:
        cells = [{"pins": universe.pins(p.cell), "reason": p.why} for p in planned]
        print(json.dumps({"cells": cells, "coverage": reached}, indent=2))
        return 0
    for number, item in enumerate(planned, 1):
        pins = " ".join(f"{p}=={v}" for p, v in universe.pins(item.cell).items())
        print(f"{number:>4}  {pins}  ({item.why})")
    print(
        f"coverage: {reached['answered']} of {reached['pairs']} pairs answered "
        f"({reached[Evidence.TESTED]} {Evidence.TESTED}, "
        f"{reached[Evidence.INFERRED]} {Evidence.INFERRED}, "
        f"{reached[AnswerStatus.CONFLICT]} conflicts); {len(planned)} cells planned "
        f"(budget {checked.budget.cells}, of it {checked.budget.reserve} for the audit); "
        f"lower bound {reached['lower_bound']} cells (the two largest axes' product)"
    )
    return 0


def keep_plan(checked: AtlasPlan, planned: list[Planned], tier_file: Path | None) -> None:
    """atlas.json with tonight's releases and uv's answers (nothing is run: a nightly's
    fold reads them, and no later run asks uv again); with ``tier_file``, the cells as
    a tier there and in atlas.json's ``plan`` (each job id and pins, and the tier
    file's digest, which its results carry)."""
    from repromatrix.hunts.atlas.audit import planned_audit
    from repromatrix.hunts.atlas.cells import cell_id, matrix_data

    state, universe = checked.state, checked.universe
    state.axes = {p: list(v) for p, v in universe.axes.items()}
    if tier_file is not None:
        data = matrix_data(checked.matrix, checked.settings, universe, planned)
        text = yaml.safe_dump(data, sort_keys=False)
        tier_file.write_text(text, encoding="utf-8")
        state.plan = Plan(
            digest=hashlib.sha256(text.encode()).hexdigest(),
            cells=[
                PlannedCell(cell_id(n), universe.pins(p.cell), p.why, planned_audit(p))
                for n, p in enumerate(planned, 1)
            ],
        )
    write_state(checked.options.out, state)


def fold(out: Path, matrix: Path | None, plan_file: Path, artifacts: Path, expected: list) -> int:
    """A nightly's cell artifacts folded into the atlas (fold.py says what is taken);
    registered links come from the project's known issues for results not judged."""
    from repromatrix.hunts.atlas.fold import fold_night
    from repromatrix.matrix.load import load_matrix
    from repromatrix.verdicts.knownissues import RegistryLocation

    project = load_matrix(matrix)
    registry = RegistryLocation.of(matrix=project.path).load()
    lines = fold_night(
        out, artifacts, plan_file, expected, stack=project.packages, registry=registry
    )
    for line in lines:
        print(line)
    return report(out)


def report(out: Path) -> int:
    from repromatrix.hunts.atlas.report import render

    for path in render(out):
        print(path)
    return 0
