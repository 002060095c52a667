"""The search with real probes: k-section (search.py) over a walk of releases or
commits, one check per candidate (check.py), a round's candidates in threads of their
own, each on its own GPUs, every step written to the record as it ends; and the
progress a person watches on stderr meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from packaging.version import Version
from rich.console import Console

from repromatrix import procs
from repromatrix.environment import Environment, IndexSettings
from repromatrix.execution import host, scheduler
from repromatrix.hunts.bisect.options import BisectOptions
from repromatrix.hunts.bisect.record import add_step
from repromatrix.hunts.bisect.report import BisectRecord
from repromatrix.matrix.pins import Pin
from repromatrix.probe.check import CheckOptions, Probe, check
from repromatrix.results import utc_now
from repromatrix.search.bisection import (
    Observation,
    ProbeOutcome,
    SearchResult,
    Step,
    ksection,
    most_rounds,
)


def search_with_probes(
    options: BisectOptions,
    probe: Probe,
    index: IndexSettings,
    folder: Path,
    record: BisectRecord,
    save: Callable[[], None],
    walk: list,
    pin_for: Callable[[Any], Pin],
    as_of_for: Callable[[Any], str | None],
    environments: dict[str, Environment],
    progress: Progress,
) -> SearchResult:
    """k-section over ``walk`` (jobs 1: the sequential search), one real check per
    candidate, every step written to bisect.json as it ends."""

    def oracle(candidate: Any, devices: str | None = None) -> Observation:
        name = str(candidate)
        return check(
            CheckOptions(
                pins=(*options.pins, pin_for(candidate)),
                probe=probe,
                index=index,
                python=options.python,
                env_dir=options.env_dir,
                install_timeout=options.install_timeout,
                as_of=as_of_for(candidate),
                stack=options.stack,
                visible_devices=devices,
                cell=options.cell,
            ),
            workdir=folder / "steps",
            name=name,
            on_environment=lambda env: environments.__setitem__(name, env),
        )

    def run_round(candidates: list) -> list[Observation]:
        # One thread per candidate: each builds its own environment (uv and the
        # probe are child processes; the store locks per identity).
        if len(candidates) == 1:
            return [oracle(candidates[0])]
        devices = probe_devices(len(candidates), list(host.gpus()))
        with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
            return list(pool.map(oracle, candidates, devices))

    def on_step(step: Step, most_left: int) -> None:
        add_step(record, step)
        save()
        progress.done(step, most_left)

    save()
    try:
        return ksection(
            walk, run_round, options.find, options.jobs, on_step=on_step, on_round=progress.round
        )
    except BaseException:
        procs.cancel_all()  # probes in other threads (--jobs N) stop with the bisect
        record.status, record.finished = "interrupted", utc_now()
        save()
        raise
    finally:
        progress.stop()


def probe_devices(count: int, listed: list[str]) -> list[str | None]:
    """CUDA_VISIBLE_DEVICES for each of a round's ``count`` probes: on a multi-GPU host
    each its own GPU group (the scheduler's split, as `run --jobs N` gives combinations);
    with more probes than GPUs they take turns round the groups; no GPU: None each."""
    groups = scheduler.gpu_groups(count, scheduler.gpu_ids(listed))
    if not groups:
        return [None] * count
    return [groups[i % len(groups)] for i in range(count)]


class Progress:
    """One line per finished step, a spinner for the running round (rich)."""

    def __init__(
        self, console: Console, package: str, walk: list, probe: Probe, jobs: int = 1
    ) -> None:
        self.console = console
        self.package = package
        self.status = None
        self.most = most_rounds(len(walk), jobs)
        at_once = f", {jobs} at a time" if jobs > 1 else ""
        unit = "rounds" if jobs > 1 else "steps"
        console.print(
            f"bisecting {package}: {len(walk)} candidates from "
            f"{walk[0]} to {walk[-1]}{at_once}, at most {self.most} {unit} "
            f"without skips ({probe.label})"
        )
        self.unit = "round" if jobs > 1 else "step"

    def round(self, number: int, batch: list[tuple[Version, str]]) -> None:
        said = ", ".join(
            f"{candidate}" + (f" ({role})" if role != "step" else "") for candidate, role in batch
        )
        text = f"{self.unit} {number}: testing {self.package} {said}"
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def done(self, step: Step[Version], most_left: int) -> None:
        observation = step.observation
        style = {ProbeOutcome.GOOD: "green", ProbeOutcome.BAD: "red", ProbeOutcome.SKIP: "yellow"}[
            observation.outcome
        ]
        role = f" ({step.role})" if step.role != "step" else ""
        unit = f"{self.unit}{'s' if most_left != 1 else ''}"
        self.console.print(
            f"  {step.candidate}{role}: [{style}]{observation.outcome.value}[/{style}] "
            f"({observation.detail}, {observation.seconds:.1f}s); "
            f"at most {most_left} more {unit}",
            highlight=False,
        )

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None
