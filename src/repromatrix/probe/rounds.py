"""Probes at once, around any prober (rounds of a k-section bisect, a sweep's
``--jobs``): each trial in a thread of its own (uv and the probe are child processes;
the store locks per identity), each on its own GPUs where the host has several, and
the others stopped when one is interrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace

from repromatrix import procs
from repromatrix.execution import host, scheduler
from repromatrix.probe.observation import Observation
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Trial


class Rounds:
    """A round of trials probed at once, one thread each, each on its own GPU group
    of the host's (``gpus``: nvidia-smi's list, read when a round has more than one
    trial)."""

    def __init__(self, prober: Prober, gpus: Callable[[], Sequence[str]] = host.gpus) -> None:
        self.prober = prober
        self.gpus = gpus

    def __call__(self, trials: list[Trial]) -> list[Observation]:
        if len(trials) == 1:
            return [self.prober(trials[0])]
        devices = probe_devices(len(trials), list(self.gpus()))
        placed = [replace(trial, devices=d) for trial, d in zip(trials, devices, strict=True)]
        try:
            with ThreadPoolExecutor(max_workers=len(placed)) as pool:
                return list(pool.map(self.prober, placed))
        except BaseException:
            procs.cancel_all()  # the round's other probes stop with it
            raise


def pooled(
    prober: Prober, trials: Sequence[Trial], jobs: int, name: str = "probe"
) -> Iterator[tuple[Trial, Observation]]:
    """Every trial probed, ``jobs`` at a time, each as it finishes. Stopped (Ctrl-C
    and SIGTERM reach the thread that reads this) or closed, it stops the probes
    running in the other threads (their children are in sessions of their own) and
    drops those not started, or the exit would wait for them; those threads then
    raise procs.Cancelled and say nothing."""
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix=name)
    try:
        futures = {pool.submit(prober, trial): trial for trial in trials}
        for future in as_completed(futures):
            yield futures[future], future.result()
    except BaseException:
        procs.cancel_all()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def probe_devices(count: int, listed: list[str]) -> list[str | None]:
    """CUDA_VISIBLE_DEVICES for each of a round's ``count`` probes: on a multi-GPU host
    each its own GPU group (the scheduler's split, as `run --jobs N` gives combinations);
    with more probes than GPUs they take turns round the groups; no GPU: None each."""
    groups = scheduler.gpu_groups(count, scheduler.gpu_ids(listed))
    if not groups:
        return [None] * count
    return [groups[i % len(groups)] for i in range(count)]
