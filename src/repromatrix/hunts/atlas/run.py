"""The atlas as a hunt (its row in hunt_table.py): ``plan`` checks the ``atlas:``
block, lists each axis's releases and resolves the pairs with uv, from the atlas's
indexes (``--wheelhouse``: that folder alone, for the listing, the resolution and
every cell's install); ``run(plan, cells)`` hands the engine its cell runner
(engine.advance: rounds of engine.plan_round) and keeps atlas.json after every
batch; ``publish`` then renders the page, the CSV and summary.md from it (report.py,
as ``atlas report`` does). ``tonight`` is the same planning step once, for ``atlas
plan`` and the nightly.

Its probe is a whole cell (every case the block names, one interpreter: torch is
imported once, not once a case), so it takes an ``engine.CellRunner`` (planned cells
in, their records out), not a ``probe.Prober``: the pipeline's by default
(cells.PipelineCells), an oracle in the tests. Its cells are a matrix's: matrix.yaml's
``defaults:`` under the block's pins and axes (cells.matrix_data); ``took`` says which
pins they take, on the hunt's first line (hunts.hunt.run_hunt). ``ATLAS`` is the hunt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.atlas import state as atlas_state
from repromatrix.hunts.atlas.answers import conflicts_of
from repromatrix.hunts.atlas.conflicts import Resolve, held_requirements, resolve_pairs, uv_resolver
from repromatrix.hunts.atlas.engine import (
    Budget,
    CellRunner,
    Outcome,
    Round,
    advance,
    pair_of,
    plan_round,
)
from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.releases import Lister, list_universe
from repromatrix.hunts.atlas.rules import Answer
from repromatrix.hunts.atlas.state import AtlasState, CellRecord, RunRecord, with_held
from repromatrix.hunts.atlas.universe import Pair, Universe
from repromatrix.hunts.hunt import Hunt, Voice
from repromatrix.matrix.atlas import AtlasSettings
from repromatrix.matrix.model import Matrix
from repromatrix.matrix.pins import pin_text
from repromatrix.outcomes import AnswerStatus, Evidence
from repromatrix.results import utc_now

__all__ = ["ATLAS", "AtlasOptions", "AtlasPlan", "plan", "publish", "run", "tonight"]

Say = Callable[[str], None]


@dataclass
class AtlasOptions:
    """``atlas run``'s options; ``matrix`` is matrix.yaml as read once (``read``), so
    what ``took`` says and what ``plan`` checks are the same file's."""

    matrix: Matrix
    out: Path = Path("reports/atlas")
    wheelhouse: Path | None = None
    budget: int | None = None  # default: the atlas: block's
    jobs: int = 1
    env_dir: Path | None = None
    cases: Path | None = None
    known_issues: Path | None = None
    reruns: int = 2

    @classmethod
    def read(cls, matrix: Path, **given: Any) -> AtlasOptions:
        """The options with ``matrix`` read from that file (its cases folder: ``cases``
        where given); a UserError (one line) for a bad one."""
        from repromatrix.matrix.load import load_matrix

        return cls(load_matrix(matrix, cases=given.get("cases")), **given)


@dataclass
class AtlasPlan:
    """Everything checked before a cell runs."""

    settings: AtlasSettings
    universe: Universe
    state: AtlasState
    index: IndexSettings
    budget: Budget
    options: AtlasOptions
    conflicts: dict[Pair, str] = field(default_factory=dict)
    known_axes: dict[str, list[str]] = field(default_factory=dict)  # the last run's releases

    @property
    def matrix(self) -> Matrix:
        return self.options.matrix  # read once, with the options

    def standing(self) -> list[CellRecord]:
        return self.state.standing()

    def stale(self) -> list[CellRecord]:
        standing = self.standing()
        return [c for c in self.state.cells if c not in standing]

    def audited(self) -> set[Pair]:
        return {pair_of(self.universe, a.pins) for a in self.state.audits if _in(self, a.pins)}


def _in(found: AtlasPlan, pins: Mapping[str, str]) -> bool:
    axes = found.universe.axes
    return len(pins) == 2 and all(p in axes and v in axes[p] for p, v in pins.items())


def plan(
    options: AtlasOptions,
    voice: Voice,
    *,
    lister: Lister | None = None,
    resolve: Resolve | None = None,
) -> AtlasPlan:
    """Settings, universe, state, conflicts; a UserError (one line) for bad input.
    ``lister`` and ``resolve`` (the indexes, uv) are the tests' to hand."""
    from repromatrix.hunts.atlas.cells import held_pins

    say = voice.say

    matrix = options.matrix
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
    known_axes = dict(state.axes)
    state.held, state.cases, state.strength = (
        held_pins(settings),
        list(settings.cases),
        settings.strength,
    )
    state.optional = list(settings.optional)
    state.resolutions += resolve_pairs(
        universe,
        state.resolutions,
        resolve or uv_resolver(index),
        held=held_requirements(settings.pins),
        jobs=options.jobs,
        say=say,
    )
    return AtlasPlan(
        settings,
        universe,
        state,
        index,
        Budget(options.budget or settings.budget, settings.audit),
        options,
        conflicts_of(universe, state.resolutions),
        known_axes,
    )


def tonight(checked: AtlasPlan) -> Round:
    """One round of the planning step, as a nightly runs it (and ``atlas plan``
    shows it): the same budget and audit as ``atlas run``."""
    return plan_round(
        checked.universe,
        checked.standing(),
        checked.conflicts,
        cells_left=checked.budget.cells,
        audit_left=checked.budget.reserve,
        share=checked.budget.audit,
        strength=checked.settings.strength,
        known_axes=checked.known_axes,
        stale=checked.stale(),
        audited=checked.audited(),
    )


def run(checked: AtlasPlan, cells: CellRunner | None, voice: Voice) -> tuple[Outcome, int]:
    """Rounds of cells within the budget, run by ``cells`` (None: the pipeline);
    atlas.json is written after every batch (an interrupted run keeps what it
    finished: cli/app.py says so). The outcome and the exit status (0: done)."""
    say = voice.say

    options, state, universe = checked.options, checked.state, checked.universe
    started, clock = utc_now(), time.monotonic()
    state.axes = {p: list(v) for p, v in universe.axes.items()}
    atlas_state.write_state(options.out, state)
    runner = cells or _pipeline_cells(checked, say)

    def run_and_keep(planned: Sequence[Planned]) -> list[CellRecord]:
        # A few cells at a time, each few kept at once: an interrupted run loses at
        # most the cells running then.
        records: list[CellRecord] = []
        step = max(4, 2 * options.jobs)
        for start in range(0, len(planned), step):
            # the held pins the cells ran with, the atlas's own (what keeps them standing)
            done = [with_held(r, state.held) for r in runner(planned[start : start + step])]
            state.cells.extend(done)
            records += done
            atlas_state.write_state(options.out, state)
        return records

    outcome = advance(
        universe,
        checked.standing(),
        checked.conflicts,
        run_and_keep,
        budget=checked.budget,
        strength=checked.settings.strength,
        known_axes=checked.known_axes,
        stale=checked.stale(),
        audited=checked.audited(),
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
    say(
        f"atlas: {outcome.planned} cells run in {outcome.rounds} rounds "
        f"(lower bound {universe.lower_bound()}); {_answered(outcome.answers)}"
    )
    return outcome, 0


def publish(checked: AtlasPlan, voice: Voice) -> None:
    """The page, the CSV and summary.md rendered from the atlas.json a run kept, each
    file said under the run's line."""
    from repromatrix.hunts.atlas.report import render

    for path in render(checked.options.out):
        voice.say(f"  {path}")


def coverage(universe: Universe, answers: Mapping[Pair, Answer]) -> dict[str, int]:
    """How many pairs are answered, and how: what ``atlas plan`` and summary.md say."""
    found = list(answers.values())
    counts: dict[str, int] = {
        "pairs": len(found),
        "answered": sum(1 for a in found if a.status != AnswerStatus.UNTESTED),
        "lower_bound": universe.lower_bound(),
    }
    for word in Evidence:
        counts[str(word)] = sum(1 for a in found if a.evidence == word)
    for word in AnswerStatus:
        counts[str(word)] = sum(1 for a in found if a.status == word)
    return counts


def _answered(answers: Mapping[Pair, Answer]) -> str:
    found = list(answers.values())
    answered = sum(1 for a in found if a.status != AnswerStatus.UNTESTED)
    inferred = sum(1 for a in found if a.evidence == Evidence.INFERRED)
    return f"{answered} of {len(found)} pairs answered ({inferred} inferred)"


def _pipeline_cells(checked: AtlasPlan, say: Say) -> CellRunner:
    from repromatrix.hunts.atlas.cells import PipelineCells

    options = checked.options
    # The run's own options, as the command line gave them.
    given = ("jobs", "reruns", "env_dir", "cases", "known_issues")
    return PipelineCells(
        matrix=checked.matrix,
        settings=checked.settings,
        universe=checked.universe,
        results=options.out / "run",
        index=checked.index,
        say=say,
        **{name: getattr(options, name) for name in given},
    )


def took(options: AtlasOptions) -> str:
    """What every cell takes from matrix.yaml's defaults: the pins the block's own pins
    and axes leave, in words."""
    matrix = options.matrix
    if matrix.atlas is None or matrix.defaults is None:
        return ""  # the plan says what is wrong
    own = {pin.package for pin in matrix.atlas.pins} | set(matrix.atlas.axes)
    taken = [pin_text(pin) for pin in matrix.defaults.pins if pin.package not in own]
    return f"from matrix.yaml's defaults: {', '.join(taken)}" if taken else ""


ATLAS: Hunt[AtlasOptions, AtlasPlan, Outcome, CellRunner | None] = Hunt(
    "atlas", plan, run, took, publish
)
