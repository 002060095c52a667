"""Work over a whole matrix's results at once: merging, judging, rendering 2,000
combinations builds and drops hundreds of thousands of objects (models, their dicts
and lists), none of them in a reference cycle.

Python's cyclic collector runs after every few hundred allocations and, as the heap
grows, walks every live object again: a quarter of the gathering's CPU time at 2,000
combinations × 10 cases (benchmarks/bench_reports.py), reclaiming nothing. Reference
counting still frees every object as before; the collector is paused only for the
call, as Mercurial's ``util.nogc`` does around its large builds.
"""

from __future__ import annotations

import functools
import gc
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
