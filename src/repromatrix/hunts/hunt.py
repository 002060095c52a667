"""One road for every hunt. A ``Hunt`` is what a hunt's run module declares: its
name (its row in hunt_table.py), ``plan`` (the options checked and the candidates
listed before anything is built), ``run`` (the plan, with the runner it is handed),
and what its options took from matrix.yaml's ``defaults:``. ``run_hunt`` is the
road: the command line (and so nox and the nightly's workflows), the issue bot,
culprit's release bisect and the tests all take it.

A hunt declares its runner's type: the release hunts and check take a
``probe.Prober`` (a Trial in, an Observation out), the atlas its own cell runner
(planned cells in, their records out). Nothing hands one where the other is
wanted: ``Hunt[Options, Plan, Record, Runner]`` says which.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from repromatrix import hunt_table, procs

if TYPE_CHECKING:
    from rich.console import Console

    from repromatrix.matrix.cell import CellSpec

Options = TypeVar("Options")  # what a command line, the issue bot or a test asks for
Plan = TypeVar("Plan")  # the options checked, the candidates listed
Record = TypeVar("Record")  # what it writes as it goes (JSON, Markdown) and answers
Runner = TypeVar("Runner")  # what makes its probes: a Prober, or the atlas's cell runner

Say = Callable[[str], None]


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


@dataclass(frozen=True)
class Voice:
    """Where a hunt speaks: ``say`` gets its answer (the verdict or summary line:
    stdout on the command line), ``note`` a line on the way (what it took, what its
    probe printed: stderr), ``show`` its progress (a rich console on stderr, or the
    caller's ``console``)."""

    say: Say = print
    note: Say = _to_stderr
    console: Console | None = None

    @property
    def show(self) -> Console:
        """The progress console: the one given, else a plain one on stderr (rich is
        loaded here: check, which only notes, never loads it)."""
        if self.console is not None:
            return self.console
        from repromatrix.console import plain_console

        return plain_console(stderr=True)


@dataclass(frozen=True)
class Hunt(Generic[Options, Plan, Record, Runner]):
    """What a hunt is: ``plan(options, voice)`` (a UserError, one line, for bad
    input, before anything is built; the plan carries the command that reruns it),
    ``run(plan, runner, voice)`` (its record, written as it goes, and its exit
    status), and ``took(options)``: what the options took from matrix.yaml's
    defaults, in words ("" : nothing), said on the hunt's first line; ``publish(plan,
    voice)``, where a hunt has one, renders its reports from what its run stored, once
    the run is done (the atlas: its page, CSV and summary from atlas.json, as ``atlas
    report`` does; asv's publish). The others write theirs as they go."""

    name: str
    plan: Callable[[Options, Voice], Plan]
    run: Callable[[Plan, Runner, Voice], tuple[Record, int]]
    took: Callable[[Options], str]
    publish: Callable[[Plan, Voice], None] | None = None

    @property
    def row(self) -> hunt_table.HuntRow:
        return hunt_table.hunt(self.name)


class Celled(Protocol):
    """Options that hold the cell their probes are made in (every hunt but the
    atlas, whose cells are a matrix's)."""

    @property
    def cell(self) -> CellSpec: ...


def took_by_cell(options: Celled) -> str:
    """What the options' cell took from matrix.yaml's defaults (CellSpec.from_command),
    in words."""
    return options.cell.took()


def run_hunt(
    hunt: Hunt[Options, Plan, Record, Runner],
    options: Options,
    runner: Runner,
    voice: Voice | None = None,
) -> tuple[Record, int]:
    """The one road: planned (bad input is one line, nothing built yet), then what
    the options took from the defaults said, first, run with ``runner``, then its
    reports published (where the hunt has a ``publish``); the record and the exit
    status. An interrupt goes through (the hunt has written what it did): the command
    line says it (cli/app.py)."""
    voice = voice or Voice()
    procs.reset_cancelled()
    checked = hunt.plan(options, voice)
    took = hunt.took(options)
    if took:
        voice.note(f"{hunt.name}: {took}")
    record, status = hunt.run(checked, runner, voice)
    if hunt.publish is not None:
        hunt.publish(checked, voice)
    return record, status
