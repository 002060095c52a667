"""The scheduler of `run --jobs N`: concurrency bound, GPU exclusivity, output
blocks that never interleave, errors and interrupts that stop the rest."""

from __future__ import annotations

import threading
import time

import pytest

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.execution.scheduler import Job, Lane, PlainDisplay, Scheduler, gpu_groups, gpu_ids


class Tracker:
    """Records which jobs ran when, on which devices, and how many at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.spans: list[tuple[str, float, float, str | None]] = []

    def work(self, seconds: float):
        def run(name: str, lane: Lane) -> str:
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
            began = time.monotonic()
            for i in range(3):
                lane.say(f"{name} line {i}")
                time.sleep(seconds / 3)
            with self.lock:
                self.running -= 1
                self.spans.append((name, began, time.monotonic(), lane.devices))
            return name.upper()

        return run


def test_gpu_ids_come_from_nvidia_smi_or_the_narrowed_environment() -> None:
    listed = ["GPU 0: NVIDIA H100 (UUID: GPU-a)", "GPU 1: NVIDIA H100 (UUID: GPU-b)"]
    assert gpu_ids(listed, environ={}) == ["0", "1"]
    assert gpu_ids(listed, environ={"CUDA_VISIBLE_DEVICES": "2, 3"}) == ["2", "3"]
    assert gpu_ids([], environ={}) == []


@pytest.mark.parametrize(
    ("jobs", "ids", "groups"),
    [
        (2, ["0", "1", "2", "3"], ["0,2", "1,3"]),
        (4, ["0", "1"], ["0", "1"]),
        (1, ["0", "1", "2"], ["0,1,2"]),
        (3, [], []),
    ],
)
def test_gpu_groups_are_disjoint_and_cover_every_gpu(jobs, ids, groups) -> None:
    assert gpu_groups(jobs, ids) == groups
    used = [d for g in groups for d in g.split(",")]
    assert sorted(used) == sorted(ids)


def test_at_most_n_jobs_run_at_once_and_all_finish() -> None:
    tracker, done = Tracker(), []
    lines: list[str] = []
    scheduler = Scheduler(3, PlainDisplay(lines.append))
    jobs = [Job(f"c{i}", f"c{i}") for i in range(7)]
    scheduler.run(jobs, tracker.work(0.3), lambda job, result: done.append((job.name, result)))
    assert sorted(done) == sorted((f"c{i}", f"C{i}") for i in range(7))
    assert tracker.most == 3


def test_each_jobs_output_is_one_block() -> None:
    tracker, lines = Tracker(), []
    Scheduler(3, PlainDisplay(lines.append)).run(
        [Job(f"c{i}", f"c{i}") for i in range(5)], tracker.work(0.3), lambda *_: None
    )
    assert tracker.most > 1  # they did overlap, so interleaving was possible
    blocks = [lines[i : i + 3] for i in range(0, len(lines), 3)]
    for block in blocks:
        name = block[0].split()[0]
        assert block == [f"{name} line {i}" for i in range(3)]


def test_one_job_at_a_time_streams_its_lines() -> None:
    seen_while_running: list[int] = []
    lines: list[str] = []

    def work(name: str, lane: Lane) -> None:
        lane.say("first")
        seen_while_running.append(len(lines))

    Scheduler(1, PlainDisplay(lines.append)).run([Job("a", "a")], work, lambda *_: None)
    assert seen_while_running == [1]


def test_concurrent_gpu_jobs_never_share_a_device() -> None:
    tracker = Tracker()
    scheduler = Scheduler(3, PlainDisplay(lambda _: None), gpu_groups=gpu_groups(3, ["0", "1"]))
    jobs = [Job(f"g{i}", f"g{i}", needs_gpu=True) for i in range(5)]
    jobs += [Job(f"c{i}", f"c{i}") for i in range(3)]
    scheduler.run(jobs, tracker.work(0.3), lambda *_: None)
    spans = {name: (a, b, dev) for name, a, b, dev in tracker.spans}
    assert len(spans) == 8
    assert all(spans[f"g{i}"][2] in ("0", "1") for i in range(5))
    assert all(spans[f"c{i}"][2] is None for i in range(3))
    gpu = [v for k, v in spans.items() if k.startswith("g")]
    for i, (a1, b1, d1) in enumerate(gpu):
        for a2, b2, d2 in gpu[i + 1 :]:
            if a1 < b2 and a2 < b1:  # overlapped in time
                assert d1 != d2
    # CPU jobs ran beside the GPU ones instead of queueing behind them.
    assert tracker.most == 3


def test_a_failing_job_stops_the_others_and_is_raised() -> None:
    started: list[str] = []
    done: list[str] = []

    def work(name: str, lane: Lane) -> str:
        started.append(name)
        if name == "bad":
            raise RuntimeError("boom")
        time.sleep(0.2)
        return name

    jobs = [Job("bad", "bad"), *[Job(f"c{i}", f"c{i}") for i in range(6)]]
    with pytest.raises(RuntimeError, match="boom"):
        Scheduler(2, PlainDisplay(lambda _: None)).run(
            jobs, work, lambda job, _: done.append(job.name)
        )
    assert len(started) < 7  # the queue was not drained after the failure
    assert "bad" not in done


def test_an_interrupt_cancels_the_children_of_running_jobs() -> None:
    """Ctrl-C reaches the main thread only: the running jobs' child processes are
    killed and their threads raise Cancelled instead of recording anything."""
    outcomes: list[str] = []
    ready = threading.Event()

    def work(name: str, lane: Lane) -> None:
        try:
            if name == "sleeper":
                ready.set()
                procs.run(["sleep", "30"], timeout=60)
                outcomes.append("sleep finished")  # must not happen
            else:
                ready.wait(5)
                time.sleep(0.3)
                raise KeyboardInterrupt  # stands for the main thread's Ctrl-C
        except procs.Cancelled:
            outcomes.append("cancelled")
            raise

    def on_done(job, result) -> None:
        raise AssertionError("nothing finished")

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        Scheduler(2, PlainDisplay(lambda _: None)).run(
            [Job("sleeper", "sleeper"), Job("other", "other")], work, on_done
        )
    assert outcomes == ["cancelled"]
    assert time.monotonic() - began < 10
    procs.reset_cancelled()


def test_jobs_must_be_positive() -> None:
    with pytest.raises(UserError, match="--jobs: 0"):
        Scheduler(0, PlainDisplay(print))
