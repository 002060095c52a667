"""The search of a bisect: where along an ordered list of candidates an outcome flips.

Pure logic: the search is handed the candidates and an oracle (a function that
tests one candidate); it knows nothing of environments, so it is tested with a
synthetic oracle.

The *walk* goes from the end that shows the old behaviour to the end that shows
the new one: for ``first-bad`` from the good end to the bad end, for ``first-good``
from the bad end to the good end. Usually the walk goes up in version (a
regression; a fix), but either order works: ``--find first-good --bad 5.3
--good 4.50`` walks down from 5.3 and finds the newest good release.

The search assumes the outcome flips once along the walk and finds the first
candidate with the new outcome:

1. both ends are tested first; an end that shows the other end's outcome stops
   the search (what each end did is reported). An end that cannot be tested is
   taken as claimed, but never as evidence (see 3);
2. binary search between the last candidate known to show the old outcome and
   the first known to show the new one; a skipped candidate (install error,
   exit 125, skipped case) is set aside and the untested candidate nearest the
   middle is tried instead;
3. the answer is found when the two sides of the flip were both tested and
   nothing skipped lies between them; otherwise the candidates that could be the
   first one are reported ("first bad is one of 4.53.0, 4.53.1").

Without skips this takes at most ``ceil(log2(N - 1)) + 2`` tests for N candidates.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from repromatrix.outcomes import ProbeOutcome

V = TypeVar("V")


class Find(str, enum.Enum):
    FIRST_BAD = "first-bad"
    FIRST_GOOD = "first-good"

    @property
    def old(self) -> ProbeOutcome:
        """The outcome at the start of the walk."""
        return ProbeOutcome.GOOD if self is Find.FIRST_BAD else ProbeOutcome.BAD

    @property
    def new(self) -> ProbeOutcome:
        """The outcome the search looks for the first occurrence of."""
        return ProbeOutcome.BAD if self is Find.FIRST_BAD else ProbeOutcome.GOOD


@dataclass(frozen=True)
class Observation:
    """What testing one candidate gave."""

    outcome: ProbeOutcome
    detail: str = ""  # one line: "exit 1: <error>", "install-error: ...", a case's message
    seconds: float = 0.0
    extra: dict = field(default_factory=dict, compare=False)  # for reports


@dataclass(frozen=True)
class Step(Generic[V]):
    candidate: V
    role: str  # "good end" | "bad end" | "step"
    observation: Observation


class Status(str, enum.Enum):
    FOUND = "found"
    INCONCLUSIVE = "inconclusive"  # skips (or untestable ends) hide where it flips
    ENDS_MISMATCH = "ends-mismatch"  # an end did not behave as claimed


@dataclass
class SearchResult(Generic[V]):
    find: Find
    walk: list[V]
    status: Status
    steps: list[Step[V]]
    first: V | None = None  # the first candidate with the new outcome
    last: V | None = None  # the candidate just before it on the walk (old outcome)
    could_be_first: list[V] = field(default_factory=list)  # when inconclusive
    reason: str = ""  # why it is not found, in words


Oracle = Callable[[V], Observation]
OnStep = Callable[[Step[V], int], None]  # (the step, how many more steps at most)


def walk_between(candidates: Sequence[V], good: V, bad: V, find: Find) -> list[V]:
    """The candidates in walking order: from the old-outcome end to the new one.
    ``candidates`` are in ascending version order and hold both ends."""
    ordered = list(candidates)
    start, end = (good, bad) if find is Find.FIRST_BAD else (bad, good)
    i, j = ordered.index(start), ordered.index(end)
    return ordered[i : j + 1] if i <= j else ordered[j : i + 1][::-1]


def most_steps_left(interior: int) -> int:
    """How many tests a binary search over ``interior`` untested candidates needs at most."""
    return math.ceil(math.log2(interior + 1)) if interior > 0 else 0


def search(
    walk: Sequence[V],
    oracle: Oracle[V],
    find: Find,
    *,
    on_step: OnStep[V] | None = None,
    on_start: Callable[[V, str, int], None] | None = None,
) -> SearchResult[V]:
    """Find where the outcome flips along ``walk`` (at least two candidates).

    ``on_start(candidate, role, step_number)`` is called before each test,
    ``on_step(step, most_left)`` after it."""
    if len(walk) < 2:
        raise ValueError("a bisect needs two different ends")
    old, new = find.old, find.new
    start_role, end_role = (
        ("good end", "bad end")
        if find is Find.FIRST_BAD
        else (
            "bad end",
            "good end",
        )
    )
    seen: dict[int, Observation] = {}
    steps: list[Step[V]] = []

    def test(i: int, role: str) -> Observation:
        if on_start is not None:
            on_start(walk[i], role, len(steps) + 1)
        seen[i] = oracle(walk[i])
        steps.append(Step(walk[i], role, seen[i]))
        return seen[i]

    def report(most_left: int) -> None:
        if on_step is not None:
            on_step(steps[-1], most_left)

    last = len(walk) - 1
    interior = last - 1
    test(0, start_role)
    report(1 + most_steps_left(interior))
    test(last, end_role)
    report(most_steps_left(interior))

    result = SearchResult(find=find, walk=list(walk), status=Status.FOUND, steps=steps)
    ends = ((0, start_role, old), (last, end_role, new))
    if any(seen[i].outcome not in (claimed, ProbeOutcome.SKIP) for i, _, claimed in ends):
        result.status = Status.ENDS_MISMATCH
        result.reason = "the ends do not behave as claimed: " + "; ".join(
            f"{role} {walk[i]} {_said(seen[i])}" for i, role, _ in ends
        )
        return result

    # lo: the last candidate with the old outcome, hi: the first with the new one;
    # at first the ends (an untestable end is taken as claimed, never as evidence).
    lo, hi = 0, last

    def untested_between() -> list[int]:
        return [i for i in range(lo + 1, hi) if i not in seen]

    while untested_between():
        middle = (lo + hi) / 2
        i = min(untested_between(), key=lambda k: (abs(k - middle), k))
        outcome = test(i, "step").outcome
        if outcome is old:
            lo = i  # monotone: whatever was skipped before it had the old outcome too
        elif outcome is new:
            hi = i
        # SKIP: set aside; the next pick is the untested candidate nearest the middle.
        report(most_steps_left(len(untested_between())))

    skipped = [i for i in range(lo + 1, hi) if seen[i].outcome is ProbeOutcome.SKIP]
    untestable_ends = [
        (i, role) for i, role, _ in ends if i in (lo, hi) and seen[i].outcome is ProbeOutcome.SKIP
    ]
    if not skipped and not untestable_ends:
        result.first, result.last = walk[hi], walk[lo]
        return result

    result.status = Status.INCONCLUSIVE
    result.could_be_first = [walk[i] for i in [*skipped, hi]]
    reasons = [f"the {role} {walk[i]} could not be tested" for i, role in untestable_ends]
    if skipped:
        reasons.append("could not test " + ", ".join(str(walk[i]) for i in skipped))
    result.reason = "; ".join(reasons)
    return result


def _said(observation: Observation) -> str:
    """'was good (exit 0)' / 'could not be tested (install-error: ...)'."""
    if observation.outcome is ProbeOutcome.SKIP:
        what = "could not be tested"
    else:
        what = f"was {observation.outcome.value}"
    return f"{what} ({observation.detail})" if observation.detail else what
