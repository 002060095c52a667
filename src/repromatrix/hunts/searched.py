"""What every search over one package's releases takes (bisect, sweep): the package,
the probe, the cell the package's candidates are installed into, where the candidates
come from, and how many are probed at once; and what its plan holds."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from packaging.version import Version

from repromatrix.environment import IndexSettings
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin
from repromatrix.probe.candidates import Listing
from repromatrix.probe.spec import Probe

S = TypeVar("S", bound="Searched")


@dataclass(kw_only=True)
class Searched:
    package: str
    probe: Probe
    # The other pins, Python, indexes, overrides, variables (--pin over --cell), and
    # time travel (environment/as_of.py): PACKAGE (each candidate with the stack of
    # its upload day; the command line's default), a DATE, or None for today's stack;
    # its stack is what travels beside the default stack (the matrix's packages).
    cell: CellSpec = field(default_factory=CellSpec)
    pre: bool = False  # pre-releases are candidates too
    wheelhouse: Path | None = None  # candidates and installs from this folder alone
    index: IndexSettings | None = None  # given: these; else the user's (the cell's over them)
    jobs: int = 1  # candidates probed at once

    @property
    def pins(self) -> tuple[Pin, ...]:
        return self.cell.pins

    @property
    def as_of(self) -> str | None:
        return self.cell.as_of

    def today(self: S) -> S:
        """The same search with today's stack (``--as-of none``): what a report offers
        where the date cap kept candidates from installing."""
        return replace(self, cell=replace(self.cell, as_of=None))


@dataclass(kw_only=True)
class SearchedPlan:
    """A checked search over one package's releases, ready to run."""

    package: str
    listing: Listing  # every release the indexes list
    candidates: list[Version]  # those searched, PEP 440 order
    index: IndexSettings  # where they are listed and installed from
    probe: Probe  # validated: absolute paths, a case its file defines
    folder: Path  # the report folder
    command: str = ""  # the command that reruns it
