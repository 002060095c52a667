"""Universes with planted faults and the oracle that runs their cells (no pipeline):
a case fails in a cell that holds one of its faults (a release alone, a pair, a
triple), with that fault's signature; a flaky fault fails the first run only."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.state import CaseRecord, CellRecord
from repromatrix.hunts.atlas.universe import Pair, Universe, Value
from repromatrix.outcomes import AnswerStatus, CellOutcome

Fault = frozenset[Value]

# A matrix.yaml of the stack, without its atlas: block (the tests add theirs).
STACK = """
schema: 1
packages: [torch, transformers, peft, trl]
defaults: {torch: "2.13.0"}
tiers:
  smoke:
    - {id: one, transformers: "4.56.2"}
"""


def universe_of(sizes: Sequence[int]) -> Universe:
    return Universe({f"pkg{i}": tuple(f"1.{v}" for v in range(n)) for i, n in enumerate(sizes)})


def signature(fault: Fault) -> str:
    return "sig-" + "-".join(sorted(f"{p}={v}" for p, v in fault))


@dataclass
class Oracle:
    universe: Universe
    faults: Mapping[str, Sequence[Fault]]  # case -> what makes it fail
    conflicts: frozenset[Pair] = frozenset()
    flaky: Mapping[str, Sequence[Fault]] = field(default_factory=dict)
    signatures: Mapping[Fault, str] = field(default_factory=dict)  # shared ones
    ran: int = 0
    flaked: set = field(default_factory=set)

    def __call__(self, planned: Sequence[Planned]) -> list[CellRecord]:
        out = []
        for item in planned:
            cell, why = item.cell, item.why
            self.ran += 1
            pins = self.universe.pins(cell)
            if any(set(p) <= set(pins.items()) for p in self.conflicts):
                out.append(CellRecord(pins=pins, outcome=CellOutcome.CONFLICT, reason=why))
                continue
            values = set(pins.items())
            cases = {}
            for case in sorted(set(self.faults) | set(self.flaky)):
                hit = next((f for f in self.faults.get(case, ()) if f <= values), None)
                flaky = any(f <= values for f in self.flaky.get(case, ()))
                if hit is not None:
                    key = self.signatures.get(hit, signature(hit))
                    cases[case] = CaseRecord(
                        "failed", runs=3, passed=0, signature=key, cause=key,
                        error=f"{case} failed: {key}",
                    )  # fmt: skip
                elif flaky and (case, cell) not in self.flaked:
                    self.flaked.add((case, cell))
                    cases[case] = CaseRecord("flaky", runs=2, passed=1)
                else:
                    cases[case] = CaseRecord("passed", runs=1, passed=1)
            failing = any(c.status == "failed" for c in cases.values())
            flaky = any(c.status == "flaky" for c in cases.values())
            outcome = (
                CellOutcome.BREAKS if failing else CellOutcome.FLAKY if flaky else CellOutcome.WORKS
            )
            out.append(CellRecord(pins=pins, outcome=outcome, cases=cases, reason=why))
        return out

    def truth(self, pair: Pair, case: str | None = None) -> str:
        if pair in self.conflicts:
            return AnswerStatus.CONFLICT
        inside = set(pair)
        faults = [f for c, fs in self.faults.items() if case in (None, c) for f in fs]
        return AnswerStatus.BREAKS if any(f <= inside for f in faults) else AnswerStatus.WORKS

    def holdable(self) -> set[Pair]:
        """The pairs that some cell without a conflict holds (the others no run can
        test: they stay untested)."""
        found: set[Pair] = set()
        for cell in itertools.product(*self.universe.axes.values()):
            pairs = set(self.universe.pairs_of(cell))
            if not pairs & self.conflicts:
                found |= pairs
        return found

    def decidable(self) -> bool:
        """Whether tests can tell every answer: a pair without a fault of its own has a
        cell around it that holds no fault of each case (else every cell with it
        fails, and no test anywhere could tell it from a broken one)."""
        cells = [
            set(self.universe.pins(cell).items())
            for cell in itertools.product(*self.universe.axes.values())
            if not any(set(p) <= set(self.universe.pins(cell).items()) for p in self.conflicts)
        ]
        for case, faults in self.faults.items():
            for pair in self.universe.pairs():
                if pair in self.conflicts:
                    continue
                if self.truth(pair, case) == AnswerStatus.BREAKS:
                    # ... and a broken pair a cell where its fault is the case's only one
                    # (else another fault, of the same signature, hides it everywhere)
                    own = [f for f in faults if f <= set(pair)]
                    if not any(
                        set(pair) <= c and all(f in own for f in faults if f <= c) for c in cells
                    ):
                        return False
                    continue
                if not any(set(pair) <= c and not any(f <= c for f in faults) for c in cells):
                    return False
        return True
