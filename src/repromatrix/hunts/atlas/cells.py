"""Atlas cells through the normal pipeline: each planned cell becomes a Combination
of a tier ``atlas`` (the matrix's defaults, the held pins, one version per axis, an
optional axis's ``ABSENT`` as a null pin, the atlas's cases), run by pipeline.run
like any tier (environments, reruns, known issues, --jobs) from the atlas's indexes
(``--wheelhouse``: only that folder); each combination's result becomes the cell's
record, every case with its runs and its failure's signature.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repromatrix.environment import IndexSettings
from repromatrix.hunts.atlas.knowledge import Seen, seen_of
from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.state import (
    LONG_CHARS,
    CaseRecord,
    CellRecord,
    bounded,
    finite,
    held_text,
    safe_link,
)
from repromatrix.hunts.atlas.universe import ABSENT, Universe
from repromatrix.hunts.atlas.view import repro_line
from repromatrix.matrix.atlas import AtlasSettings
from repromatrix.matrix.load import parse_matrix
from repromatrix.matrix.model import Matrix
from repromatrix.matrix.read import read_text, yaml_data
from repromatrix.outcomes import (
    PASSING,
    CaseOutcome,
    CaseStatus,
    CellOutcome,
    CombinationStatus,
)
from repromatrix.results import CaseResult, CombinationResult, utc_now
from repromatrix.verdicts.knownissues import Registry

TIER = "atlas"


def requested_pins(universe: Universe, cell: tuple[str, ...]) -> dict[str, str | None]:
    """A cell's axes as a combination's pins (``ABSENT``: null, not installed)."""
    return {p: (None if v == ABSENT else v) for p, v in universe.pins(cell).items()}


def combinations(
    matrix: Matrix, settings: AtlasSettings, universe: Universe, planned: Sequence[Planned]
) -> Matrix:
    """A matrix whose one tier holds the planned cells (ids atlas-001, ...), each
    with the file's ``defaults`` under the atlas's held pins."""
    return parse_matrix(matrix_data(matrix, settings, universe, planned), matrix.path)


def cell_id(number: int) -> str:
    return f"{TIER}-{number:03d}"


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
    for number, item in enumerate(planned, 1):
        entry: dict[str, Any] = {"id": cell_id(number), "tags": [_tag(item.why)]}
        entry.update(requested_pins(universe, item.cell))
        entries.append(entry)
    return {
        "schema": 1,
        "packages": list(matrix.packages),
        "defaults": defaults,
        "tiers": {TIER: entries},
    }


def signature_of(case: CaseResult) -> tuple[str, str]:
    """A failing case's signature as (key, one line): the one the cell computed where
    the case failed, else one from its stored traceback (results/schema.py)."""
    found = case.cause()
    if found is None:
        return "", ""
    return found.key, bounded(found.line())


def case_record(case: CaseResult, link: str = "") -> CaseRecord:
    """One case's result as the atlas keeps it: its runs, and a failure's signature."""
    attempts = list(case.attempts) or [case.outcome or case.status]
    runs = len(attempts)
    passed = sum(1 for a in attempts if a in (CaseOutcome.PASSED, CaseStatus.POSSIBLY_FIXED))
    if case.status in PASSING and passed == 0:
        passed = runs  # an older result without attempts
    record = CaseRecord(status=str(case.status), runs=runs, passed=passed)
    if seen_of(record.status, runs, passed) is Seen.FAIL:
        record.signature, record.cause = signature_of(case)
        first = (case.message or case.error_type or str(case.status)).splitlines()
        record.error = bounded(first[0] if first else "")
        record.link = safe_link((case.known_issue or {}).get("link", "") or link)
    return record


def record_of(
    result: CombinationResult,
    why: str,
    held: dict[str, str],
    axes: Sequence[str],
    stack: Sequence[str] = (),
    registry: Registry | None = None,
) -> CellRecord:
    """A combination's result as the atlas keeps it (its pins from what it requested,
    ``ABSENT`` for a null pin; a failure's registered issue from its verdict, or from
    ``registry`` for results not judged yet)."""
    requested = result.requested
    pins = {p: ABSENT if requested[p] in ("null", "") else requested[p] for p in axes}
    common: dict[str, Any] = dict(
        pins=pins,
        resolved={p: bounded(v, 80) for p, v in result.resolved.items() if p in stack},
        reason=bounded(why, LONG_CHARS),
        tested=bounded(result.started or utc_now()),
        seconds=finite(result.seconds),
        held=held,
    )
    if result.status == CombinationStatus.INSTALL_ERROR:
        conflict = result.message.startswith("resolve:") and "No solution found" in result.message
        return CellRecord(
            outcome=CellOutcome.CONFLICT if conflict else CellOutcome.ERROR,
            message=bounded(result.message),
            repro=bounded(repro_line(requested, None), LONG_CHARS),
            **common,
        )
    if result.status != CombinationStatus.PASSED and not result.cases:
        return CellRecord(outcome=CellOutcome.ERROR, message=bounded(result.message), **common)
    cases: dict[str, CaseRecord] = {}
    for case in result.cases:
        issue = registry.match(result, case.id) if registry else None
        cases[bounded(case.id, LONG_CHARS)] = case_record(case, issue.link if issue else "")
    seen = {c: seen_of(r.status, r.runs, r.passed) for c, r in cases.items()}
    failing = [c for c, s in seen.items() if s is Seen.FAIL]
    flaky = [c for c, s in seen.items() if s is Seen.FLAKY]
    outcome = CellOutcome.BREAKS if failing else CellOutcome.FLAKY if flaky else CellOutcome.WORKS
    first = (failing or flaky or [None])[0] or (next(iter(cases), None))
    return CellRecord(
        outcome=outcome,
        cases=cases,
        repro=bounded(repro_line(requested, first), LONG_CHARS),
        **common,
    )


@dataclass
class PipelineCells:
    """The real cell runner: planned cells as one tier through pipeline.run, from
    ``index`` (the atlas's: ``--wheelhouse`` alone, or the user's settings)."""

    matrix: Matrix
    settings: AtlasSettings
    universe: Universe
    results: Path
    index: IndexSettings
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
        given = ("results", "env_dir", "cases", "reruns", "jobs", "known_issues", "index")
        options = RunOptions(
            matrix=self.matrix.path, tier=TIER, **{name: getattr(self, name) for name in given}
        )
        results, _code = run(options, say=self.say, matrix=built)
        by_id = {c.id: c for c in results.combinations}
        held = held_pins(self.settings)  # the trees as they are now, built just before
        axes = self.universe.packages
        return [
            record_of(by_id[combo.id], item.why, held, axes, self.matrix.packages)
            for combo, item in zip(built.tier(TIER), planned, strict=True)
        ]


def held_pins(settings: AtlasSettings) -> dict[str, str]:
    """The held pins as the atlas keeps them: each pin's text, a folder pin's with the
    tree it builds from (its commit, dirty flag and digest), so that an edit leaves
    the cells of the old tree standing for nothing (state.py)."""
    from repromatrix.environment.source_tree import pin_sources

    trees = {tree.package: tree for tree in pin_sources(settings.pins)}
    return {
        pin.package: held_text(
            str(pin),
            f"{tree.short()}, {tree.digest[:19]}" if (tree := trees.get(pin.package)) else "",
        )
        for pin in settings.pins
    }


def _tag(why: str) -> str:
    """A reason as a tag (tags name jobs: letters, digits and dashes)."""
    return "atlas-" + "-".join(w for w in re.split(r"[^a-z0-9]+", why.split(":")[0].lower()) if w)
