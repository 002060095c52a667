"""Atlas cells through the normal pipeline: each planned cell becomes a Combination
of a tier ``atlas`` (the matrix's defaults, the held pins, one version per axis, the
atlas's cases), run by pipeline.run like any tier (environments, reruns, known
issues, --jobs); each combination's result becomes the cell's record.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.state import CellRecord, Failure
from repromatrix.hunts.atlas.universe import Universe
from repromatrix.matrix.atlas import AtlasSettings
from repromatrix.matrix.load import parse_matrix
from repromatrix.matrix.model import Matrix
from repromatrix.matrix.pins import parse_pin, pin_text
from repromatrix.matrix.read import read_text, yaml_data
from repromatrix.outcomes import CaseStatus, CombinationStatus
from repromatrix.results import CombinationResult, Results, utc_now
from repromatrix.verdicts.knownissues import Registry

TIER = "atlas"
PASSING = {CaseStatus.PASSED, CaseStatus.SKIPPED, CaseStatus.FLAKY, CaseStatus.POSSIBLY_FIXED}


def combinations(
    matrix: Matrix, settings: AtlasSettings, universe: Universe, planned: Sequence[Planned]
) -> Matrix:
    """A matrix whose one tier holds the planned cells (ids atlas-001, ...), each
    with the file's ``defaults`` under the atlas's held pins."""
    return parse_matrix(matrix_data(matrix, settings, universe, planned), matrix.path)


def matrix_data(
    matrix: Matrix, settings: AtlasSettings, universe: Universe, planned: Sequence[Planned]
) -> dict[str, Any]:
    """That matrix as plain data: what ``atlas plan --tier-file`` writes for a nightly
    to fan out like any tier (its ids name cells; each reason rides in its tags)."""
    raw = yaml_data(read_text(matrix.path), matrix.path.name)
    defaults = dict(raw.get("defaults") or {})
    defaults.update(
        {pin.package: None if str(pin) == "null" else str(pin) for pin in settings.pins}
    )
    if settings.cases:
        defaults["cases"] = list(settings.cases)
    entries: list[dict[str, Any]] = []
    for number, (cell, why) in enumerate(planned, 1):
        entry: dict[str, Any] = {"id": f"{TIER}-{number:03d}", "tags": [_tag(why)]}
        entry.update(universe.pins(cell))
        entries.append(entry)
    data = {
        "schema": 1,
        "packages": list(matrix.packages),
        "defaults": defaults,
        "tiers": {TIER: entries},
    }
    return data


def repro(requested: dict[str, str], case: str | None) -> str:
    """One line that reruns the cell's case anywhere (``check`` takes every pin)."""
    words = ["repromatrix", "check"]
    if case:
        words += ["--case", case]
    for package, spec in requested.items():
        words += ["--pin", pin_text(parse_pin(package, None if spec == "null" else spec))]
    return shlex.join(words)


def record_of(
    result: CombinationResult,
    why: str,
    held: dict[str, str],
    axes: Sequence[str],
    stack: Sequence[str] = (),
    registry: Registry | None = None,
) -> CellRecord:
    """A combination's result as the atlas keeps it (its pins from what it requested;
    a failure's registered issue from its verdict, or from ``registry`` for results
    not judged yet)."""
    requested = result.requested
    pins = {p: requested[p] for p in axes}
    common: dict[str, Any] = {
        "pins": pins,
        "resolved": {p: v for p, v in result.resolved.items() if p in stack},
        "reason": why,
        "tested": result.started or utc_now(),
        "seconds": result.seconds,
        "held": held,
    }
    if result.status == "install-error":
        conflict = result.message.startswith("resolve:") and "No solution found" in result.message
        return CellRecord(
            outcome="conflict" if conflict else "error",
            message=result.message,
            repro=repro(requested, None),
            **common,
        )
    if result.status == "skipped" and not result.cases:
        return CellRecord(outcome="error", message=result.message, **common)
    cases = {case.id: str(case.status) for case in result.cases}
    failures = [
        Failure(
            case=case.id,
            error=(case.message or case.error_type or str(case.status)).splitlines()[0][:300]
            if (case.message or case.error_type)
            else str(case.status),
            link=(case.known_issue or {}).get("link", "")
            or (issue.link if registry and (issue := registry.match(result, case.id)) else ""),
        )
        for case in result.cases
        if case.status not in PASSING
    ]
    first = failures[0].case if failures else (result.cases[0].id if result.cases else None)
    return CellRecord(
        outcome="breaks" if failures else "works",
        cases=cases,
        failures=failures,
        repro=repro(requested, first),
        **common,
    )


@dataclass
class PipelineCells:
    """Runs planned cells as one tier through pipeline.run (the injected
    ``run_cells`` of engine.advance, for real)."""

    matrix: Matrix
    settings: AtlasSettings
    universe: Universe
    results: Path
    jobs: int = 1
    reruns: int = 2
    env_dir: Path | None = None
    cases: Path | None = None
    known_issues: Path | None = None
    say: Callable[[str], None] = print

    def __call__(self, planned: Sequence[Planned]) -> list[CellRecord]:
        from repromatrix.pipeline import RunOptions, run

        built = combinations(self.matrix, self.settings, self.universe, planned)
        # The pipeline's own options, as this runner was given them.
        given = ("results", "env_dir", "cases", "reruns", "jobs", "known_issues")
        options = RunOptions(
            matrix=self.matrix.path, tier=TIER, **{name: getattr(self, name) for name in given}
        )
        results, _code = run(options, say=self.say, matrix=built)
        by_id = {c.id: c for c in results.combinations}
        held = self.settings.held()
        out = []
        for combo, (_cell, why) in zip(built.tier(TIER), planned, strict=True):
            result = by_id[combo.id]
            axes = self.universe.packages
            out.append(record_of(result, why, held, axes, self.matrix.packages))
        return out


def _tag(why: str) -> str:
    """A reason as a tag (tags name jobs: letters, digits and dashes)."""
    return "atlas-" + "-".join(w for w in re.split(r"[^a-z0-9]+", why.split(":")[0].lower()) if w)


def fold(
    results: Results,
    held: dict[str, str],
    universe: Universe,
    stack: Sequence[str],
    registry: Registry | None = None,
) -> list[CellRecord]:
    """A nightly's merged results of an ``atlas`` tier, as cells for the atlas. A
    LOST combination (its job reported nothing) is no answer: it is left out, and its
    pairs stay open for the next night to plan again."""
    out = []
    for result in results.combinations:
        if result.tier != TIER or any(p not in result.requested for p in universe.packages):
            continue
        if result.status == CombinationStatus.LOST:
            continue
        why = next((t for t in result.tags if t.startswith("atlas-")), "atlas-nightly")
        out.append(record_of(result, why, held, universe.packages, stack, registry))
    return out
