"""Universes with planted faults and the oracle that runs their cells (no pipeline):
a case fails in a cell that holds one of its faults, a version alone or a pair."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.state import CellRecord, Failure
from repromatrix.hunts.atlas.universe import Pair, Universe, Value

Fault = frozenset[Value]


def universe_of(sizes: Sequence[int]) -> Universe:
    return Universe({f"pkg{i}": tuple(f"1.{v}" for v in range(n)) for i, n in enumerate(sizes)})


@dataclass
class Oracle:
    universe: Universe
    faults: Mapping[str, Sequence[Fault]]  # case -> what makes it fail
    conflicts: frozenset[Pair] = frozenset()
    ran: int = 0

    def __call__(self, planned: Sequence[Planned]) -> list[CellRecord]:
        out = []
        for cell, why in planned:
            self.ran += 1
            pins = self.universe.pins(cell)
            if any(set(p) <= set(pins.items()) for p in self.conflicts):
                out.append(CellRecord(pins=pins, outcome="conflict", reason=why))
                continue
            values = set(pins.items())
            cases = {
                case: "failed" if any(f <= values for f in faults) else "passed"
                for case, faults in self.faults.items()
            }
            failures = [
                Failure(case=c, error=f"{c} failed") for c, s in cases.items() if s != "passed"
            ]
            outcome = "breaks" if failures else "works"
            out.append(
                CellRecord(pins=pins, outcome=outcome, cases=cases, failures=failures, reason=why)
            )
        return out

    def truth(self, pair: Pair) -> str:
        if pair in self.conflicts:
            return "conflict"
        inside = set(pair)
        broken = any(f <= inside for faults in self.faults.values() for f in faults)
        return "breaks" if broken else "works"

    def holdable(self) -> set[Pair]:
        """The pairs that some cell without a conflict holds (the others no run can
        test: they stay untested)."""
        found: set[Pair] = set()
        for cell in itertools.product(*self.universe.axes.values()):
            pairs = set(self.universe.pairs_of(cell))
            if not pairs & self.conflicts:
                found |= pairs
        return found

    def unforced(self) -> bool:
        """No version is left by conflicts with a single partner on another axis (a
        partner it could then never be told from)."""
        for a, b in itertools.permutations(self.universe.packages, 2):
            for x in self.universe.axes[a]:
                free = [
                    y
                    for y in self.universe.axes[b]
                    if not {((a, x), (b, y)), ((b, y), (a, x))} & self.conflicts
                ]
                if len(free) < min(2, len(self.universe.axes[b])):
                    return False
        return True

    def decidable(self) -> bool:
        """Whether tests can tell every answer: a pair without a fault of its own has a
        cell around it that holds no fault (else every cell with it fails, and no
        test anywhere could tell it from a broken one)."""
        every = [f for faults in self.faults.values() for f in faults]
        cells = [
            set(self.universe.pins(cell).items())
            for cell in itertools.product(*self.universe.axes.values())
            if not any(set(p) <= set(self.universe.pins(cell).items()) for p in self.conflicts)
        ]
        for pair in self.universe.pairs():
            if pair in self.conflicts or self.truth(pair) == "breaks":
                continue
            if not any(set(pair) <= c and not any(f <= c for f in every) for c in cells):
                return False
        return True
