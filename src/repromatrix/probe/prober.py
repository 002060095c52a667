"""The prober a hunt is handed: what makes one probe (``Prober``: a Trial in, an
Observation out), and the real one (``CellProber``: the environment store and
check.py). rounds.py wraps any prober to make probes at once. A hunt knows none of
this: tests hand it a prober of their own (cargo-bisect-rustc's least_satisfying is
handed its predicate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from repromatrix.environment import EnvStore
from repromatrix.probe.check import check
from repromatrix.probe.observation import Observation
from repromatrix.probe.spec import Trial


class Prober(Protocol):
    """Makes one probe: the trial's cell built, its probe run, what it said."""

    def __call__(self, trial: Trial) -> Observation: ...


@dataclass(frozen=True)
class CellProber:
    """The real prober: each trial's cell from the environment store (``env_dir``;
    default $REPROMATRIX_ENV_DIR or the user's cache), built within
    ``install_timeout`` seconds, and its probe run in it (check.py). ``log`` gets the
    build's lines (which cell, reused or built, its as-of day)."""

    env_dir: Path | None = None
    install_timeout: float = 1800.0
    log: Callable[[str], None] | None = None

    def __call__(self, trial: Trial) -> Observation:
        return check(
            trial, store=EnvStore(self.env_dir), install_timeout=self.install_timeout, log=self.log
        )
