"""Several combinations at once on one host (``repromatrix run --jobs N``).

A combination spends its time waiting on child processes (uv resolving and
installing, pytest in the cell), so the unit of work runs in a thread; the
children it starts do the computing. The main thread only schedules, shows
progress and calls ``on_done``, one finished job at a time: whatever it writes
(results.json) is written by one thread, in the order jobs finish.

- Output: a job's lines are held in its :class:`Lane` and printed as one block
  when it finishes, so two combinations never interleave. With one job at a
  time nothing can interleave, and lines are printed as they come.
- GPUs: the host's GPUs are split into ``min(jobs, GPUs)`` groups; a job that
  needs a GPU waits for a free group and sees only it (CUDA_VISIBLE_DEVICES),
  so two concurrent combinations never share a device. Jobs that need none run
  beside them.
- Interrupts: only the main thread sees Ctrl-C (and SIGTERM / SIGHUP, which
  procs.stop_signals turns into the same). It cancels every child process
  (procs.cancel_all), the threads give up without recording anything, and the
  interrupt goes on up; what finished before stays (``--resume`` continues).
- A closed output (``run | head``, procs.output_closed): the jobs running finish
  and are recorded, no other starts, and the run ends as interrupted.
"""

from __future__ import annotations

import os
import re
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from repromatrix import procs
from repromatrix.console import plain_console
from repromatrix.errors import UserError

T = TypeVar("T")
R = TypeVar("R")

WAIT_SECONDS = 0.2  # how often the main thread wakes to refresh the display


@dataclass(frozen=True)
class Job(Generic[T]):
    name: str  # shown while it runs (a combination id)
    item: T
    needs_gpu: bool = False


@dataclass
class Lane:
    """Where one running job writes its output, and the GPUs it may use."""

    name: str
    devices: str | None = None  # CUDA_VISIBLE_DEVICES for this job, None: leave as is
    stream: Callable[[str], None] | None = None  # print at once (one job at a time)
    lines: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        if self.stream is not None:
            self.stream(line)
        else:
            self.lines.append(line)


class Display(Protocol):
    def start(self, total: int) -> None: ...
    def began(self, name: str) -> None: ...
    def line(self, text: str) -> None: ...
    def ended(self, name: str) -> None: ...
    def close(self) -> None: ...


class PlainDisplay:
    """Lines only (a caller that collects them, a log): no live area."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self._lock = threading.Lock()

    def start(self, total: int) -> None:
        pass

    def began(self, name: str) -> None:
        pass

    def line(self, text: str) -> None:
        with self._lock:
            self.say(text)

    def ended(self, name: str) -> None:
        pass

    def close(self) -> None:
        pass


class RichDisplay:
    """One bar for the whole run (done/total, elapsed) and one row per running
    combination (its name, its own elapsed time); finished blocks print above.
    On a terminal it redraws; in a CI log rich prints the lines and a final state."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or plain_console()
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.rows: dict[str, TaskID] = {}
        self.overall: TaskID | None = None

    def start(self, total: int) -> None:
        self.overall = self.progress.add_task("combinations", total=total)
        self.progress.start()

    def began(self, name: str) -> None:
        self.rows[name] = self.progress.add_task(f"  {name}", total=None)

    def line(self, text: str) -> None:
        self.progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def ended(self, name: str) -> None:
        row = self.rows.pop(name, None)
        if row is not None:
            self.progress.remove_task(row)
        if self.overall is not None:
            self.progress.advance(self.overall)

    def close(self) -> None:
        self.progress.stop()


def gpu_ids(listed: Sequence[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The GPUs this process may hand out: CUDA_VISIBLE_DEVICES when the host
    already narrowed it, else the indexes nvidia-smi listed ("GPU 0: ...")."""
    environ = os.environ if environ is None else environ
    narrowed = environ.get("CUDA_VISIBLE_DEVICES")
    if narrowed:
        return [d.strip() for d in narrowed.split(",") if d.strip()]
    ids = []
    for position, line in enumerate(listed):
        found = re.match(r"GPU (\d+):", line)
        ids.append(found.group(1) if found else str(position))
    return ids


def gpu_groups(jobs: int, ids: Sequence[str]) -> list[str]:
    """Split the GPUs into at most ``jobs`` disjoint groups, as CUDA_VISIBLE_DEVICES
    values: 4 GPUs, 2 jobs -> ["0,2", "1,3"]; 2 GPUs, 4 jobs -> ["0", "1"]."""
    count = min(jobs, len(ids))
    return [",".join(ids[i::count]) for i in range(count)]


class Scheduler:
    def __init__(
        self,
        jobs: int,
        display: Display,
        *,
        gpu_groups: Sequence[str] = (),
    ) -> None:
        if jobs < 1:
            raise UserError(f"--jobs: {jobs} is not a number of jobs (1 or more)")
        self.jobs = jobs
        self.display = display
        self.free_gpus = deque(gpu_groups)
        self.has_gpus = bool(gpu_groups)

    def run(
        self,
        jobs: Sequence[Job[T]],
        work: Callable[[T, Lane], R],
        on_done: Callable[[Job[T], R], None],
    ) -> None:
        """Run every job, at most ``self.jobs`` at once; ``on_done`` runs in this
        thread as each finishes. The first error (or Ctrl-C) cancels the rest and
        is raised once the running threads have stopped."""
        procs.reset_cancelled()
        pending: deque[Job[T]] = deque(jobs)
        running: dict[Future[R], tuple[Job[T], Lane]] = {}
        self.display.start(len(jobs))
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="combination")
        left_out = False
        try:
            while pending or running:
                if pending and procs.stop_wanted():
                    pending.clear()  # nobody reads the output any more: start nothing new
                    left_out = True
                self._start_what_fits(pending, running, pool, work)
                finished, _ = wait(list(running), timeout=WAIT_SECONDS, return_when=FIRST_COMPLETED)
                for future in finished:
                    job, lane = running.pop(future)
                    if lane.devices is not None and job.needs_gpu:
                        self.free_gpus.append(lane.devices)
                    result = future.result()  # a job's error stops the run
                    for text in lane.lines:
                        self.display.line(text)
                    self.display.ended(job.name)
                    on_done(job, result)
        except BaseException:
            procs.cancel_all()
            for future in running:
                # The threads end quickly: their children are dead and they raise
                # Cancelled; nothing they held is recorded.
                future.exception()
            raise
        finally:
            pool.shutdown(wait=True)
            self.display.close()
        stop = procs.stop_wanted()
        if left_out and stop is not None:
            raise stop  # as an interrupt: what finished is recorded, --resume does the rest

    def _start_what_fits(
        self,
        pending: deque[Job[T]],
        running: dict[Future[R], tuple[Job[T], Lane]],
        pool: ThreadPoolExecutor,
        work: Callable[[T, Lane], R],
    ) -> None:
        stream = self.display.line if self.jobs == 1 else None
        waiting: deque[Job[T]] = deque()
        while pending and len(running) < self.jobs:
            job = pending.popleft()
            devices = None
            if job.needs_gpu and self.has_gpus:
                if not self.free_gpus:
                    waiting.append(job)  # a CPU job behind it may still start
                    continue
                devices = self.free_gpus.popleft()
            lane = Lane(name=job.name, devices=devices, stream=stream)
            self.display.began(job.name)
            running[pool.submit(work, job.item, lane)] = (job, lane)
        pending.extendleft(reversed(waiting))
