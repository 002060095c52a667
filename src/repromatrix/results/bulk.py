"""Work over a whole matrix's results at once: merging, judging, rendering 2,000
combinations builds and drops hundreds of thousands of objects (models, their dicts
and lists), none of them in a reference cycle.

Python's cyclic collector runs after every few hundred allocations and, as the heap
grows, walks every live object again: a quarter of the gathering's CPU time at 2,000
combinations × 10 cases (benchmarks/bench_reports.py), reclaiming nothing. Reference
counting still frees every object as before; the collector is paused only for the
call, as Mercurial's ``util.nogc`` does around its large builds.

Work that splits into independent halves over one built structure (the four reports
of a judged matrix) runs side by side in two processes: a forked child sees the
structure as it is, nothing pickled to it (side_by_side).
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
import sys
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def without_cycle_collection(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` with the cyclic collector paused while it runs (and resumed after,
    unless a caller had paused it already)."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():  # nested, or paused by the caller: theirs to resume
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return paused


def side_by_side(here: Callable[[], R], there: Callable[[], object]) -> R:
    """``there`` in a forked child while ``here`` runs in this process; ``here``'s value
    once both are done. For independent work over one large, already built structure
    (the reports of a judged matrix): the child sees this process's memory as it is,
    nothing is pickled to it, and the second core works.

    A failure in the child is raised here, as it was raised there (pickled back through
    a pipe; one that cannot be pickled, as a RuntimeError naming it), after ``here`` is
    done; one here is raised after the child has ended. Off Linux (no fork on Windows;
    on macOS a forked child may crash in system libraries), with one core, or with
    another thread running (a lock it held when forked would never be released in the
    child), both run here, one after the other."""
    if not _may_fork():
        there()
        return here()
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child: never returns into the caller's code
        os.close(read_end)
        status = 0
        try:
            there()
        except BaseException as error:  # every one goes to the parent
            status = 1
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(_pickled(error))
        finally:
            os._exit(status)  # no atexit hooks, no flush of buffers the parent owns
    os.close(write_end)
    try:
        value = here()
    finally:
        with os.fdopen(read_end, "rb") as pipe:
            sent = pipe.read()  # until the child ends
        _pid, status = os.waitpid(child, 0)
    if sent:
        raise pickle.loads(sent)  # our own child's exception
    if status != 0:
        raise RuntimeError(f"the forked half of the work ended with wait status {status}")
    return value


def _may_fork() -> bool:
    linux = sys.platform.startswith("linux")
    return linux and (os.cpu_count() or 1) > 1 and threading.active_count() == 1


def _pickled(error: BaseException) -> bytes:
    """``error`` as the parent can rebuild it; one whose class pickle cannot find, or
    whose constructor its own arguments do not fit, as a RuntimeError naming it."""
    try:
        sent = pickle.dumps(error)
        pickle.loads(sent)  # what this process has just written: does it rebuild?
        return sent
    except Exception:
        return pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))
