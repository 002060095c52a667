"""The atlas's universe: the releases of each axis, in PEP 440 order, as the user's
indexes list them (bisect's candidates.py reads the indexes, the sweep's
``latest-patch`` / ``all`` selection picks among them), and the pins held beside.

A cell is one version per axis; a pair is two axes' versions. Both are plain tuples
so that the planner, the localisation and the queries stay pure and fast.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from repromatrix.bisect.candidates import Listing, list_releases
from repromatrix.bisect.sweep_ranges import Releases, select
from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.matrix.atlas import AtlasSettings

Value = tuple[str, str]  # (package, version)
Pair = tuple[Value, Value]  # in axis order
Cell = tuple[str, ...]  # one version per axis, in axis order


@dataclass(frozen=True)
class Universe:
    """Ordered axes (package -> versions, oldest first) and the held pins."""

    axes: Mapping[str, tuple[str, ...]]
    held: Mapping[str, str] = field(default_factory=dict)

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(self.axes)

    def position(self, package: str, version: str) -> int:
        return self.axes[package].index(version)

    def pins(self, cell: Cell) -> dict[str, str]:
        return dict(zip(self.packages, cell, strict=True))

    def cell(self, pins: Mapping[str, str]) -> Cell | None:
        """The cell of stored pins; None when a version left the universe."""
        try:
            values = tuple(pins[p] for p in self.packages)
        except KeyError:
            return None
        ok = all(v in self.axes[p] for p, v in zip(self.packages, values, strict=True))
        return values if ok else None

    def pairs(self) -> Iterator[Pair]:
        """Every pair of two axes' versions: what strength 2 covers."""
        for a, b in itertools.combinations(self.packages, 2):
            for x in self.axes[a]:
                for y in self.axes[b]:
                    yield ((a, x), (b, y))

    def pairs_of(self, cell: Cell) -> Iterator[Pair]:
        values = list(zip(self.packages, cell, strict=True))
        yield from itertools.combinations(values, 2)

    def lower_bound(self) -> int:
        """The fewest cells that can hold every pair: the two largest axes' product."""
        sizes = sorted((len(v) for v in self.axes.values()), reverse=True)
        return sizes[0] * sizes[1] if len(sizes) > 1 else sizes[0]


def pair_key(one: Value, other: Value, order: tuple[str, ...]) -> Pair:
    """A pair with its two values in axis order (so that lookups agree)."""
    return (one, other) if order.index(one[0]) < order.index(other[0]) else (other, one)


Lister = Callable[[str, IndexSettings], Listing]


def list_universe(
    settings: AtlasSettings, index: IndexSettings, *, lister: Lister = list_releases
) -> Universe:
    """Each axis's releases inside its specifier (no yanked release, no pre-release),
    then ``latest-patch`` or ``all``; UserError for an axis left empty."""
    axes: dict[str, tuple[str, ...]] = {}
    for package, spec in settings.axes.items():
        listing = lister(package, index)
        wanted = SpecifierSet(spec)
        versions = [
            v
            for v in listing.versions()
            if not listing.releases[v].yanked and not v.is_prerelease and v in wanted
        ]
        chosen = select(versions, Releases(settings.releases))
        if not chosen:
            shown = spec or "any version"
            raise UserError(f"atlas.axes.{package}: {shown!r}: no release of {package} matches")
        axes[package] = tuple(str(v) for v in chosen)
    return Universe(axes=axes, held=settings.held())


def by_version(versions: list[str]) -> list[str]:
    return sorted(versions, key=Version)
