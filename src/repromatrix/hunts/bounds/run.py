"""A bounds hunt: are the target's declared dependency ranges right? To
reports/bounds/<target>-<version>/.

plan (options.py: the target's Requires-Dist read, markers and extras applied, each
tested dependency's releases listed) -> run: the all-floors set and the target's
release-day set resolved with uv (resolution.py, nothing runs) -> the engine's cells
(engine.py), each made by the prober it is handed (probing.py: exact pins, the
probe run) -> bounds.json, summary.md, pyproject.diff (report.py), written as cells
come in.

Progress goes to stderr (each cell, then the table); stdout gets the headline, or
bounds.json with ``--json``. Exit status: 0 every declared bound holds, 1 one is
wrong (or could not be judged: its reason says why), 2 bad input; an interrupted hunt
(Ctrl-C, SIGTERM) says so in bounds.json and summary.md.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from repromatrix import procs
from repromatrix.environment.source_tree import source_tree
from repromatrix.hunts.bounds import resolution
from repromatrix.hunts.bounds.answers import Answer, End, Judgement
from repromatrix.hunts.bounds.cellset import Cells
from repromatrix.hunts.bounds.engine import judge
from repromatrix.hunts.bounds.options import BoundsOptions, Plan, plan
from repromatrix.hunts.bounds.probing import CellMaker
from repromatrix.hunts.bounds.record import BoundsRecord, DependencyRecord, EndRecord, Run
from repromatrix.hunts.bounds.report import console_table, headline, pyproject_diff
from repromatrix.hunts.bounds.report import write as write_report
from repromatrix.hunts.hunt import Hunt, Voice, run_hunt, took_by_cell
from repromatrix.hunts.rerun import reproducible
from repromatrix.probe.prober import CellProber, Prober
from repromatrix.results import ResultsDir, utc_now

# A caller of run_bounds takes its options from here too (cli).
__all__ = ["BOUNDS", "BoundsOptions", "plan", "run", "run_bounds"]

WRONG = 1  # exit status: a declared bound is wrong, or could not be judged


def run(checked: Plan, prober: Prober, voice: Voice) -> tuple[BoundsRecord, int]:
    """Run a planned hunt; returns the record written and the exit status."""
    show, say = voice.show, voice.say
    options, target = checked.options, checked.target
    clock = time.monotonic()
    record = BoundsRecord(
        target=target.shown,
        name=target.name,
        version=target.version,
        python=checked.python,
        left_out=[{"requirement": line, "why": why} for line, why in checked.left_out],
        jobs=options.jobs,
        **reproducible(checked.held, checked.probe, checked.index, checked.command),
    )
    if target.folder is not None:
        record.source = source_tree(target.name, target.folder, target.shown).record()
    lock = threading.Lock()

    def save() -> None:
        record.seconds = round(time.monotonic() - clock, 2)
        record.summary = headline(record)
        write_report(checked.folder, record)

    def on_run(one: Run) -> None:
        with lock:
            record.runs.append(one)
            record.runs.sort(key=lambda r: r.cell)
            record.cells = len(record.runs)
            save()
        _progress(show, one)

    tested = [d for d in checked.dependencies if d.admitted]
    sizes = ", ".join(f"{d.name} {d.declared} ({len(d.admitted)})" for d in tested)
    show.print(f"bounds of {target.name} {target.version}: {sizes or 'nothing to test'}")
    with ResultsDir(checked.folder).claimed("fresh"):
        save()
        cells = Cells(CellMaker(checked, prober, on_run), options.jobs, procs.cancel_all)
        try:
            floors = resolution.all_floors(checked) if tested else None
            references = resolution.release_day(checked) if tested else []
            judged = judge(
                checked.dependencies,
                cells,
                floors=floors,
                references=references,
                say=lambda line: show.print(line, highlight=False),
            )
        except BaseException:
            procs.cancel_all()  # probes in other threads (--jobs N) stop with the hunt
            record.status, record.finished = "interrupted", utc_now()
            save()
            say(record.summary)
            raise
        _fill(record, judged)
        record.diff = pyproject_diff(record, target.folder)
        record.status, record.finished = "done", utc_now()
        save()
    console_table(record, show)
    if options.json:
        sys.stdout.write(json.dumps(record.dump(), indent=2) + "\n")
    else:
        say(record.summary)
    return record, 0 if record.holds else WRONG


def run_bounds(
    options: BoundsOptions,
    prober: Prober | None = None,
    *,
    console: Console | None = None,
    say: Callable[[str], None] = print,
) -> tuple[BoundsRecord, int]:
    """Plan and run the hunt on the one road (``prober``: default, cells from the
    default store); for callers without a command line (benchmarks/bench_bounds.py)."""
    voice = Voice(say=say, console=console)
    return run_hunt(BOUNDS, options, prober or CellProber(), voice)


def _plan(options: BoundsOptions, _voice: Voice) -> Plan:
    return plan(options)


BOUNDS: Hunt[BoundsOptions, Plan, BoundsRecord, Prober] = Hunt("bounds", _plan, run, took_by_cell)


def _fill(record: BoundsRecord, judged: Judgement) -> None:
    runs = {r.cell: r for r in record.runs}
    record.working_set = {n: str(v) for n, v in sorted((judged.working or {}).items())}
    record.working_from = judged.working_from
    record.notes = list(judged.notes)
    record.dependencies = [_dependency(a, runs) for a in judged.answers]


def _dependency(answer: Answer, runs: dict[int, Run]) -> DependencyRecord:
    d = answer.dependency
    return DependencyRecord(
        name=d.name,
        declared=d.specifier,
        requirements=list(d.lines),
        extra=d.extra,
        verdict=answer.verdict,
        suggested=answer.suggested,
        releases=len(d.admitted),
        floor=_end(answer.floor, runs),
        ceiling=_end(answer.ceiling, runs),
    )


def _end(end: End, runs: dict[int, Run]) -> EndRecord:
    text = lambda v: None if v is None else str(v)  # noqa: E731
    return EndRecord(
        verdict=end.verdict,
        tested=text(end.tested),
        outcome=end.outcome,
        works=text(end.works),
        fails=text(end.fails),
        excluded=text(end.excluded),
        excluded_outcome=end.excluded_outcome,
        untested=[str(v) for v in end.untested],
        together=list(end.together),
        evidence=end.evidence,
        reason=end.reason,
        cells=[runs[n] for n in sorted(end.cells) if n in runs],
    )


def _progress(console: Console, one: Run) -> None:
    style = {"good": "green", "bad": "red", "skip": "yellow"}[one.outcome.value]
    pins = " ".join(f"{n}=={v}" for n, v in sorted(one.pins.items()))
    said = f" ({one.error[:160]})" if one.error else ""
    head = f"  cell {one.cell} {one.role}: {pins}: "
    console.print(Text.assemble(head, (one.outcome.value, style), said, f" {one.seconds:.1f}s"))
