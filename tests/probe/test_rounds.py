"""probe/rounds.py: probes at once around any prober (a k-section's rounds, a sweep's
--jobs), each on its own GPUs; the hunts hand it their prober, tests a stand-in."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from repromatrix import procs
from repromatrix.environment import IndexSettings
from repromatrix.matrix.cell import CellSpec
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import Observation
from repromatrix.probe.rounds import Rounds, pooled
from repromatrix.probe.spec import Probe, Trial


def trials(tmp_path: Path, count: int) -> list[Trial]:
    probe = Probe(case="test_x.py::test_y")
    return [Trial(probe, CellSpec(), IndexSettings(), tmp_path, f"t{i}") for i in range(count)]


def test_a_round_probes_at_once_each_on_its_own_gpus(tmp_path: Path) -> None:
    seen: list[tuple[str, str | None, str]] = []
    started = threading.Barrier(3, timeout=10)  # all three run at once, or this times out

    def prober(trial: Trial) -> Observation:
        started.wait()
        seen.append((trial.name, trial.devices, threading.current_thread().name))
        return Observation(ProbeOutcome.GOOD, trial.name)

    gpus = lambda: ["GPU 0: a", "GPU 1: b"]  # noqa: E731
    said = Rounds(prober, gpus)(trials(tmp_path, 3))
    assert [o.detail for o in said] == ["t0", "t1", "t2"], "in the round's order"
    assert sorted((name, devices) for name, devices, _ in seen) == [
        ("t0", "0"),
        ("t1", "1"),
        ("t2", "0"),  # more probes than GPUs: they take turns
    ]


def test_a_round_of_one_runs_here_with_what_this_process_sees(tmp_path: Path) -> None:
    asked: list = []

    def prober(trial: Trial) -> Observation:
        asked.append((trial.devices, threading.current_thread() is threading.main_thread()))
        return Observation(ProbeOutcome.BAD)

    def no_listing() -> list[str]:
        raise AssertionError("one probe needs no GPU split")

    Rounds(prober, no_listing)(trials(tmp_path, 1))
    assert asked == [(None, True)]


def test_pooled_gives_every_trial_as_it_finishes(tmp_path: Path) -> None:
    given = trials(tmp_path, 5)
    done = list(pooled(lambda t: Observation(ProbeOutcome.SKIP, t.name), given, jobs=2))
    assert sorted(trial.name for trial, _ in done) == [t.name for t in given]
    assert all(trial.name == observation.detail for trial, observation in done)


def test_a_stopped_pool_starts_nothing_more(tmp_path: Path) -> None:
    ran: list[str] = []

    def prober(trial: Trial) -> Observation:
        ran.append(trial.name)
        if trial.name == "t0":
            raise KeyboardInterrupt
        time.sleep(0.2)
        return Observation(ProbeOutcome.GOOD)

    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in pooled(prober, trials(tmp_path, 6), jobs=1):
                pass
    finally:
        procs.reset_cancelled()  # the pool cancelled every child of this process
    # The one worker may have taken the next trial before the pool heard; no more.
    assert ran[0] == "t0" and len(ran) <= 2, ran
