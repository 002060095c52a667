"""The atlas's commands as lists of small steps:

run:  load matrix + atlas: -> the universe (indexes) -> earlier state -> pairs
      resolved with uv (conflicts) -> engine.advance (covering array, localisation,
      audit; cells through the pipeline) -> atlas.json, index.html, answers.csv
plan: the same up to the covering array and tonight's localisation; runs nothing.

Each step's collaborators are arguments (the lister of releases, the resolver, the
cell runner), so tests hand in fakes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.atlas import state as atlas_state
from repromatrix.hunts.atlas.answers import answers_of, conflicts_of
from repromatrix.hunts.atlas.conflicts import (
    Resolve,
    held_requirements,
    resolve_pairs,
    uv_resolver,
)
from repromatrix.hunts.atlas.engine import Outcome, RunCells, advance, cover_plan
from repromatrix.hunts.atlas.localise import Planned, follow_ups
from repromatrix.hunts.atlas.releases import Lister, list_universe
from repromatrix.hunts.atlas.state import AtlasState, RunRecord, with_held
from repromatrix.hunts.atlas.universe import Universe
from repromatrix.matrix.atlas import AtlasSettings
from repromatrix.matrix.model import Matrix
from repromatrix.results import utc_now

Say = Callable[[str], None]


@dataclass
class AtlasOptions:
    matrix: Path = Path("matrix.yaml")
    out: Path = Path("reports/atlas")
    wheelhouse: Path | None = None
    budget: int | None = None  # default: the atlas: block's
    jobs: int = 1
    env_dir: Path | None = None
    cases: Path | None = None
    known_issues: Path | None = None
    reruns: int = 2


@dataclass
class Prepared:
    matrix: Matrix
    settings: AtlasSettings
    universe: Universe
    state: AtlasState
    index: IndexSettings
    budget: int
    conflicts: dict = field(default_factory=dict)
    options: AtlasOptions = field(default_factory=AtlasOptions)  # as given


def prepare(
    options: AtlasOptions,
    *,
    lister: Lister | None = None,
    resolve: Resolve | None = None,
    say: Say = print,
) -> Prepared:
    """Everything before a cell runs: settings, universe, state, conflicts."""
    from repromatrix.matrix.load import load_matrix

    matrix = load_matrix(options.matrix, cases=options.cases)
    if matrix.atlas is None:
        raise UserError(f"{matrix.path.name}: atlas: no atlas block (docs/atlas.md)")
    settings = matrix.atlas
    if options.budget is not None and options.budget < 1:
        raise UserError(f"--budget {options.budget}: give 1 or more cells")
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: give 1 or more")
    index = (
        IndexSettings.wheelhouse(options.wheelhouse)
        if options.wheelhouse is not None
        else IndexSettings.from_environment()
    )
    universe = list_universe(settings, index, **({"lister": lister} if lister else {}))
    state = atlas_state.read_state(options.out)
    known_axes = state.axes
    state.held, state.cases, state.strength = (
        settings.held(),
        list(settings.cases),
        settings.strength,
    )
    resolver = resolve or uv_resolver(index)
    state.resolutions += resolve_pairs(
        universe,
        state.resolutions,
        resolver,
        held=held_requirements(settings.pins),
        jobs=options.jobs,
        say=say,
    )
    prepared = Prepared(
        matrix,
        settings,
        universe,
        state,
        index,
        options.budget or settings.budget,
        conflicts_of(universe, state.resolutions),
        options,
    )
    prepared.state.axes = known_axes  # the axes of the last run, for "new release"
    return prepared


def plan(prepared: Prepared) -> tuple[list[Planned], dict[str, int]]:
    """Tonight's cells and why (covering array, then localisation of what the
    earlier cells left open), and the coverage: answered pairs, all, lower bound."""
    standing = prepared.state.standing()
    stale = [c for c in prepared.state.cells if c not in standing]
    universe = prepared.universe
    planned = cover_plan(
        universe,
        standing,
        prepared.conflicts,
        strength=prepared.settings.strength,
        known_axes=prepared.state.axes,
        stale=stale,
    )
    know, answers = answers_of(universe, standing, prepared.conflicts)
    taken = {c for r in standing if (c := universe.cell(r.pins)) is not None}
    taken |= {cell for cell, _ in planned}
    left = prepared.budget - len(planned)
    if left > 0:
        planned += follow_ups(know, answers, taken=taken, limit=left)
    return planned[: prepared.budget], coverage(universe, answers)


def coverage(universe: Universe, answers: dict) -> dict[str, int]:
    statuses = [a.status for a in answers.values()]
    return {
        "pairs": len(statuses),
        "answered": sum(1 for s in statuses if s != "untested"),
        "tested": sum(1 for a in answers.values() if a.evidence == "tested"),
        "inferred": sum(1 for a in answers.values() if a.evidence == "inferred"),
        "conflict": statuses.count("conflict"),
        "lower_bound": universe.lower_bound(),
    }


def run_prepared(
    prepared: Prepared,
    *,
    run_cells: RunCells | None = None,
    say: Say = print,
    started: str | None = None,
) -> Outcome:
    """Tonight's cells of ``prepared`` planned, run with ``run_cells`` (default:
    through the pipeline) and localised; atlas.json is written after every batch (an
    interrupted run keeps what it finished)."""
    options = prepared.options
    started, clock = started or utc_now(), time.monotonic()
    state, universe = prepared.state, prepared.universe
    known_axes = dict(state.axes)
    state.axes = {p: list(v) for p, v in universe.axes.items()}
    atlas_state.write_state(options.out, state)
    standing = state.standing()
    stale = [c for c in state.cells if c not in standing]
    runner = run_cells or _pipeline_cells(options, prepared, say)

    def run_and_keep(planned: Sequence[Planned]) -> list:
        # the held pins the cells ran with, the atlas's own (what keeps them standing)
        records = [with_held(r, state.held) for r in runner(planned)]
        state.cells.extend(records)
        atlas_state.write_state(options.out, state)
        return records

    outcome = advance(
        universe,
        standing,
        prepared.conflicts,
        run_and_keep,
        budget=prepared.budget,
        audit=prepared.settings.audit,
        strength=prepared.settings.strength,
        known_axes=known_axes,
        stale=stale,
        say=say,
    )
    state.audits += outcome.audits
    state.runs.append(
        RunRecord(
            started=started,
            cells=outcome.planned,
            seconds=round(time.monotonic() - clock, 1),
            jobs=options.jobs,
            lower_bound=universe.lower_bound(),
        )
    )
    atlas_state.write_state(options.out, state)
    return outcome


def _pipeline_cells(options: AtlasOptions, prepared: Prepared, say: Say) -> RunCells:
    from repromatrix.hunts.atlas.cells import PipelineCells

    return PipelineCells(
        matrix=prepared.matrix,
        settings=prepared.settings,
        universe=prepared.universe,
        results=options.out / "run",
        jobs=options.jobs,
        reruns=options.reruns,
        env_dir=options.env_dir,
        cases=options.cases,
        known_issues=options.known_issues,
        say=say,
    )
