"""The atlas's universe: the releases of each axis, oldest first, and the pins held
beside (releases.py lists them from the user's indexes).

A cell is one version per axis; a pair is two axes' versions. Both are plain tuples,
and this module imports nothing, so that the planner, the localisation and the
queries stay pure and fast.

An optional axis (``trl: {versions: ">=0.22", optional: true}``) holds ``ABSENT``
first, before its oldest release: a cell with it installs no such package, and its
pairs answer the users who do not install it. ``ABSENT`` is no PEP 440 version, so it
never names a release.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

Value = tuple[str, str]  # (package, version)
Pair = tuple[Value, Value]  # in axis order
Cell = tuple[str, ...]  # one version per axis, in axis order

ABSENT = "absent"  # an optional axis's package not installed


@dataclass(frozen=True)
class Universe:
    """Ordered axes (package -> versions, oldest first; ``ABSENT`` first where the
    axis is optional) and the held pins."""

    axes: Mapping[str, tuple[str, ...]]
    held: Mapping[str, str] = field(default_factory=dict)

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(self.axes)

    def position(self, package: str, version: str) -> int:
        return self.axes[package].index(version)

    def releases(self, package: str) -> tuple[str, ...]:
        """The axis's releases, without ``ABSENT``: what neighbours are taken along."""
        return tuple(v for v in self.axes[package] if v != ABSENT)

    def pins(self, cell: Cell) -> dict[str, str]:
        return dict(zip(self.packages, cell, strict=True))

    def values(self, cell: Cell) -> list[Value]:
        return list(zip(self.packages, cell, strict=True))

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
        yield from itertools.combinations(self.values(cell), 2)

    def lower_bound(self) -> int:
        """The fewest cells that can hold every pair: the two largest axes' product."""
        sizes = sorted((len(v) for v in self.axes.values()), reverse=True)
        return sizes[0] * sizes[1] if len(sizes) > 1 else sizes[0]

    def key(self, one: Value, other: Value) -> Pair:
        return pair_key(one, other, self.packages)


def pair_key(one: Value, other: Value, order: tuple[str, ...]) -> Pair:
    """A pair with its two values in axis order (so that lookups agree)."""
    return (one, other) if order.index(one[0]) < order.index(other[0]) else (other, one)


def shown(values: tuple[Value, ...] | list[Value]) -> str:
    """``transformers 4.56.2 + trl absent`` for a person."""
    return " + ".join(f"{p} {v}" for p, v in values)
