"""The cells of a bounds hunt as the engine sees them: a set of the tested
dependencies' versions in, what its probe said out (``Seen``), each set probed once
(``Cells``: a cache shared by every search, several at a time with ``jobs``).

Pure: the oracle that really builds and probes a cell is handed in (run.py's, over
the prober), so the engine is tested with synthetic ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from packaging.version import Version

from repromatrix.outcomes import ProbeOutcome

Versions = Mapping[str, Version]  # dependency -> the release a cell holds
Key = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Seen:
    """What one cell said: good, bad or skip, why in one line, and whether uv refused
    the set (``unresolvable``: nothing ran; a skip), and its number in the record."""

    outcome: ProbeOutcome
    detail: str = ""
    unresolvable: bool = False
    number: int = 0  # the cell's number (0: not run, e.g. a search's spent skip budget)


Oracle = Callable[[Versions, str], Seen]  # (the set, its role) -> what the cell said


def key(versions: Versions) -> Key:
    return tuple(sorted((name, str(v)) for name, v in versions.items()))


class Cells:
    """Every set probed once: a second ask of the same set (by any search, in any
    thread) gets the first answer; ``jobs`` sets of a batch at once."""

    def __init__(
        self, oracle: Oracle, jobs: int = 1, on_cancel: Callable[[], None] = lambda: None
    ) -> None:
        self.oracle = oracle
        self.jobs = max(1, jobs)
        self.on_cancel = on_cancel  # stops the probes of other threads (procs.cancel_all)
        self._lock = threading.Lock()
        self._asked: dict[Key, Future[Seen]] = {}

    def __call__(self, versions: Versions, role: str) -> Seen:
        wanted = key(versions)
        with self._lock:
            future = self._asked.get(wanted)
            mine = future is None
            if mine:
                future = self._asked[wanted] = Future()
        assert future is not None
        if mine:
            try:
                future.set_result(self.oracle(dict(versions), role))
            except BaseException as err:
                future.set_exception(err)
                raise
        return future.result()

    def known(self, versions: Versions) -> Seen | None:
        """The answer already given for this set, if any (never runs a cell)."""
        with self._lock:
            future = self._asked.get(key(versions))
        return future.result() if future is not None and future.done() else None

    @property
    def count(self) -> int:
        """Cells run (a set the resolver refused counts: uv was asked)."""
        with self._lock:
            return sum(
                1
                for f in self._asked.values()
                if f.done() and not f.exception() and f.result().number
            )

    def batch(self, asked: Iterable[tuple[Versions, str]]) -> list[Seen]:
        """Each (set, role) probed, ``jobs`` at a time; answers in order."""
        return self.each([lambda v=v, r=r: self(v, r) for v, r in asked])

    def each(self, tasks: list[Callable[[], object]]) -> list:
        """Run ``tasks`` (searches that ask cells), ``jobs`` at a time; results in order."""
        if self.jobs == 1 or len(tasks) <= 1:
            return [task() for task in tasks]
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="bounds")
        try:
            futures = [pool.submit(task) for task in tasks]
            done = [f.result() for f in futures]
        except BaseException:
            self.on_cancel()  # the other threads' probes stop; those not started never do
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return done
