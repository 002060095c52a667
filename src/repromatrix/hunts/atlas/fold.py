"""A nightly's cells folded into the atlas (``atlas fold``): what each cell job wrote
is data from code under test, so nothing in it speaks for another cell.

From each planned cell's own artifact (``combination-<first id of its job>``, the
job plan made again from the plan's tier file) only the result of that cell is
taken, and only when it ran the plan (its run's matrix digest is the tier file's,
which atlas.json's ``plan`` recorded) with the pins it was planned with. Anything
else is refused by name: a result for another cell (a foreign cell: never an answer
for a lost one), other pins (a relabelled cell), another plan, a file that is not
strict JSON (NaN), too large, or a value the results schema refuses (a bad version).
A refused or missing cell is LOST: no answer, planned again the next night. One bad
record refuses that cell, not the night; what is taken is bounded (cells.record_of).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.hunts.atlas.answers import answers_of, conflicts_of
from repromatrix.hunts.atlas.audit import audit_results
from repromatrix.hunts.atlas.cells import TIER, record_of
from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.state import (
    AtlasState,
    CellRecord,
    bounded,
    read_state,
    strict_json,
    with_held,
    write_state,
)
from repromatrix.hunts.atlas.universe import Universe
from repromatrix.verdicts.knownissues import Registry

MAX_RESULTS_BYTES = 16 * 2**20
MAX_LINES = 50


@dataclass(frozen=True)
class Expected:
    """A planned cell as the tier file says it: its pins, and the artifact of its job."""

    id: str
    requested: dict[str, str]
    artifact: str


def fold_night(
    out: Path,
    artifacts: Path,
    plan_file: Path,
    expected: list[Expected],
    *,
    stack: tuple[str, ...] = (),
    registry: Registry | None = None,
) -> list[str]:
    """Fold the artifacts in; the lines to print."""
    state = read_state(out)
    if state.plan is None:
        raise UserError(f"{out}/atlas.json: no plan to fold (atlas plan --tier-file wrote none)")
    digest = hashlib.sha256(plan_file.read_bytes()).hexdigest()
    if digest != state.plan.digest:
        raise UserError(
            f"{plan_file}: not the plan atlas.json recorded (sha256 {digest[:12]}, "
            f"expected {state.plan.digest[:12]})"
        )
    universe = Universe({p: tuple(v) for p, v in state.axes.items()}, held=state.held)
    planned = {c.id: c for c in state.plan.cells}
    lines: list[str] = []
    taken: list[tuple[CellRecord, Planned]] = []
    lost = 0
    for cell in expected:
        found = planned.get(cell.id)
        if found is None or universe.cell(found.pins) is None:
            lines.append(f"{cell.id}: not a cell of atlas.json's plan: refused")
            continue
        result, problem = take(artifacts / cell.artifact, cell, digest)
        if result is None:
            lost += 1
            lines.append(f"{cell.id}: {problem}: LOST, planned again")
            continue
        record = record_of(result, found.reason, state.held, universe.packages, stack, registry)
        record = with_held(replace(record, plan=digest), state.held)
        taken.append((record, _planned(universe, found)))
    for artifact in sorted({c.artifact for c in expected}):
        lines += _foreign(artifacts / artifact, {c.id for c in expected if c.artifact == artifact})
    state.cells += [record for record, _ in taken]
    state.audits += _audits(universe, state, [p for _, p in taken])
    state.plan = None  # folded once: a second fold finds nothing to take
    write_state(out, state)
    shown = lines[:MAX_LINES] + (
        [f"... {len(lines) - MAX_LINES} more"] if len(lines) > MAX_LINES else []
    )
    return [
        *shown,
        f"atlas: {len(taken)} cells folded in" + (f"; {lost} lost (no answer)" if lost else ""),
    ]


def take(folder: Path, cell: Expected, digest: str):
    """The result of ``cell`` from its own artifact, or None and why not."""
    from pydantic import ValidationError

    from repromatrix.results import CombinationResult, RunInfo

    path = folder / "results.json"
    if not folder.is_dir() or not path.is_file() or path.is_symlink():
        return None, f"no results in {folder.name}"
    if path.stat().st_size > MAX_RESULTS_BYTES:
        return None, f"{folder.name}/results.json is over {MAX_RESULTS_BYTES // 2**20} MiB: refused"
    try:
        data = strict_json(path.read_text(encoding="utf-8"))
        run = RunInfo.model_validate(data.get("run") or {})
        mine = [
            c
            for c in data.get("combinations") or []
            if isinstance(c, dict) and c.get("id") == cell.id
        ]
        if len(mine) != 1:
            return None, f"{folder.name} holds no single result of {cell.id}"
        result = CombinationResult.model_validate(mine[0])
    except (ValueError, RecursionError, UnicodeDecodeError, AttributeError, ValidationError) as err:
        return None, f"{folder.name}/results.json refused ({bounded(err, 160)})"
    if run.matrix_sha256 != digest:
        return (
            None,
            f"{folder.name} ran another plan (matrix sha256 {bounded(run.matrix_sha256, 16)})",
        )
    if result.tier != TIER or result.requested != cell.requested:
        got = ", ".join(f"{p} {v}" for p, v in result.requested.items())
        return (
            None,
            f"{folder.name} claims pins it was not planned with ({bounded(got, 160)}): refused",
        )
    return result, ""


def _foreign(folder: Path, mine: set[str]) -> list[str]:
    """A line for each result in an artifact that is not one of its own cells."""
    path = folder / "results.json"
    try:
        data = strict_json(path.read_text(encoding="utf-8")) if path.is_file() else {}
        ids = [c.get("id") for c in data.get("combinations") or [] if isinstance(c, dict)]
    except (ValueError, OSError, RecursionError, AttributeError):
        return []
    return [
        f"{folder.name} holds {bounded(i, 40)!r} too, not its cell: refused"
        for i in ids
        if i not in mine
    ][:MAX_LINES]


def _planned(universe: Universe, found) -> Planned:
    audit = None
    if found.audit is not None:
        pair = tuple(sorted(found.audit.pins.items(), key=lambda i: universe.packages.index(i[0])))
        audit = (pair, found.audit.case, found.audit.kind, found.audit.inferred)
    cell = universe.cell(found.pins)
    return Planned(cell, found.reason, audit)  # type: ignore[arg-type]


def _audits(universe: Universe, state: AtlasState, planned: list[Planned]):
    if not any(p.audit for p in planned):
        return []
    _, answers = answers_of(universe, state.standing(), conflicts_of(universe, state.resolutions))
    return audit_results(planned, answers)


def expected_cells(combos: list, artifact_of: Mapping[str, str]) -> list[Expected]:
    """The tier file's combinations as expected cells (cli/atlas.py names the artifacts)."""
    return [Expected(c.id, c.requested(), artifact_of[c.id]) for c in combos]
