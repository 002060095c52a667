"""What is asked of the environment store, and what it gives back.

EnvRequest: the pins, the base interpreter, the indexes, the cell's variables and
uv overrides, the runner's tooling, and time travel (as_of.py). Environment: a
built cell, its interpreter and every distribution it sees, and the process
environment to run in it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.source_tree import (
    SourceTree,
    builds_in_place,
    pin_sources,
    project_root,
    stage_source,
)
from repromatrix.environment.uv import Interpreter
from repromatrix.matrix.pins import Pin, PinKind

if TYPE_CHECKING:  # the matrix's models (pydantic) only where a combination is built
    from repromatrix.environment.as_of import TimeTravel
    from repromatrix.matrix.cell import CellSpec

# What a cell gets besides its pins: the runner drives pytest inside it. A script
# probe's cell goes without (probe/check.py): it runs with the cell's Python alone.
CELL_TOOLING = ("pytest>=8", "pytest-xdist>=3.5")


@dataclass(frozen=True)
class EnvRequest:
    pins: tuple[Pin, ...]
    python: str | None = None
    index: IndexSettings = field(default_factory=IndexSettings)
    exclude_newer: str | None = None
    overrides: tuple[str, ...] = ()  # uv --override: replace what any package requires
    env: tuple[tuple[str, str], ...] = ()
    tooling: tuple[str, ...] = CELL_TOOLING
    # Time travel (as_of.py): a date or a pinned package; the stack it applies to.
    as_of: str | None = None
    stack: tuple[str, ...] = ()
    # Packages built from a folder (path pins): what their source is now. Filled by
    # with_sources (EnvStore.build), part of the identity: an edit rebuilds the cell.
    sources: tuple[SourceTree, ...] = ()

    # Folder pins built from their copy in the store (staged): uv's build of a copy,
    # named by its digest, never goes stale, so these need no --refresh-package.
    staged: tuple[str, ...] = ()

    def with_sources(self) -> EnvRequest:
        """The request with the source of each package it builds from a folder
        (source_tree.pin_sources)."""
        return replace(self, sources=pin_sources(self.pins))

    def staged_in(self, store: Path) -> EnvRequest:
        """The request as uv builds it: each folder pin pointed at a copy of its
        project's source in ``store`` (source_tree.stage_source), so a build leaves
        no build/ or *.egg-info in the user's tree; a project whose version comes from
        git is built where it is. Its identity stays the request's (``sources``)."""
        trees = {tree.package: tree for tree in self.sources}
        pins, staged = [], []
        for pin in self.pins:
            tree = trees.get(pin.package)
            if (
                pin.kind is PinKind.PATH
                and tree is not None
                and pin.location.is_dir()
                and not builds_in_place(project_root(pin.location))
            ):
                folder = stage_source(store, tree, pin.location, beside=pin.base)
                pin = replace(pin, spec=".", base=str(folder))
                staged.append(pin.package)
            pins.append(pin)
        return replace(self, pins=tuple(pins), staged=tuple(staged))

    def source_args(self) -> list[str]:
        """uv's flags for the packages built from a folder in place: uv keys its cached
        build of a folder on pyproject.toml / setup.py alone, so an edited module would
        be served from the old wheel."""
        return [
            arg
            for tree in self.sources
            if tree.package not in self.staged
            for arg in ("--refresh-package", tree.package)
        ]

    @classmethod
    def for_cell(
        cls, cell: CellSpec, index: IndexSettings, tooling: tuple[str, ...] = CELL_TOOLING
    ) -> EnvRequest:
        """The one road from a cell to the store: ``cell`` (matrix.cell: from a
        combination or a command line), ``index`` where its packages come from (the
        cell's own indexes over the user's: IndexSettings.for_cell), ``tooling`` what
        runs in it besides its pins (a script probe needs none)."""
        return cls(
            pins=cell.pins,
            python=cell.python,
            index=index,
            exclude_newer=cell.exclude_newer,
            overrides=cell.overrides,
            env=cell.env,
            tooling=tooling,
            as_of=cell.as_of,
            stack=cell.stack if cell.as_of else (),  # what a cutoff moves; nothing without one
        )


@dataclass
class Environment:
    root: Path
    identity: str
    python: Path
    resolved: dict[str, str]  # every distribution the cell sees -> version
    system: dict[str, str]  # those linked from the base interpreter
    reused: bool
    seconds: float
    interpreter: Interpreter
    time_travel: TimeTravel | None = None
    sources: tuple[SourceTree, ...] = ()  # packages built from a folder, as they were

    def subprocess_env(self, extra: Mapping[str, str] = ()) -> dict[str, str]:
        """The cell's process environment: the user's, minus anything that would
        leak the harness's own packages into the cell."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
            and not k.startswith("NOX_")
        }
        venv = self.python.parent.parent
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{self.python.parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(dict(extra))
        return env
