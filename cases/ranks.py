"""Starting DDP ranks from a case, bounded: a forkserver that imports the heavy modules
once for every rank, a free local port, and the ranks' reports gathered under one
deadline (workers still alive after it are terminated, then killed). A plain module:
test_ddp_checkpoint.py and test_trl_sft_checkpointing.py share it."""

from __future__ import annotations

import contextlib
import multiprocessing.forkserver
import queue
import socket
import time
from collections.abc import Callable, Iterator, Sequence

import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def forkserver(preload: Sequence[str]) -> Iterator[object]:
    """A torch forkserver context that has imported ``preload``; stopped on exit (it
    would otherwise stay until pytest exits)."""
    import torch.multiprocessing

    context = torch.multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    try:
        yield context
    finally:
        # _stop is private (CPython 3.8+).
        stop = getattr(multiprocessing.forkserver._forkserver, "_stop", None)
        if stop is not None:
            stop()


def gather(
    context,
    target: Callable[..., None],
    args_of: Callable[[int, int, object], tuple],
    *,
    world_size: int,
    deadline_seconds: float,
) -> dict[int, dict]:
    """Start ``world_size`` processes of ``target(*args_of(rank, port, results))``; each
    puts ``(rank, report)`` on ``results``. Returns {rank: report}; a rank that gives
    none before the deadline fails the case with the ranks' exit codes."""
    results = context.Queue()
    port = free_port()
    workers = [
        context.Process(target=target, args=args_of(rank, port, results), daemon=True)
        for rank in range(world_size)
    ]
    deadline = time.monotonic() + deadline_seconds
    reports: dict[int, dict] = {}
    try:
        for worker in workers:
            worker.start()
        while len(reports) < world_size:
            try:
                rank, report = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                codes = {rank: w.exitcode for rank, w in enumerate(workers)}
                pytest.fail(
                    f"ranks {sorted(set(range(world_size)) - set(reports))} gave no result "
                    f"within {deadline_seconds} s (exit codes {codes})"
                )
            reports[rank] = report
    finally:
        for worker in workers:
            worker.join(timeout=max(0.1, deadline - time.monotonic()))
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=5)
            if worker.is_alive():
                worker.kill()
                worker.join()
        results.close()
    return reports
