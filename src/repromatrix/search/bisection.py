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
from typing import Generic, Protocol, TypeVar

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


class Said(Protocol):
    """What the search reads of one test (probe.Observation is one): its outcome, and
    why in one line."""

    @property
    def outcome(self) -> ProbeOutcome: ...

    @property
    def detail(self) -> str: ...


@dataclass(frozen=True)
class Step(Generic[V]):
    candidate: V
    role: str  # "good end" | "bad end" | "step"
    observation: Said  # what testing it gave (probe.Observation)
    round: int = 0  # k-section: the round it was tested in (1, 2, ...); 0 when sequential


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
    rounds: int = 0  # how many rounds of tests (sequential: one test a round)


Oracle = Callable[[V], Said]
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
    seen: dict[int, Said] = {}
    steps: list[Step[V]] = []

    def test(i: int, role: str) -> Said:
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
    if _ends_mismatch(result, seen, ends):
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

    result.rounds = len(steps)
    return _concluded(result, walk, seen, lo, hi, ends)


def _ends_mismatch(
    result: SearchResult[V],
    seen: dict[int, Said],
    ends: tuple[tuple[int, str, ProbeOutcome], ...],
) -> bool:
    """Whether an end showed the other end's outcome (an untestable end is taken as
    claimed); if so the result says what each end did."""
    if all(seen[i].outcome in (claimed, ProbeOutcome.SKIP) for i, _, claimed in ends):
        return False
    result.status = Status.ENDS_MISMATCH
    result.reason = "the ends do not behave as claimed: " + "; ".join(
        f"{role} {result.walk[i]} {_said(seen[i])}" for i, role, _ in ends
    )
    return True


def _concluded(
    result: SearchResult[V],
    walk: Sequence[V],
    seen: dict[int, Said],
    lo: int,
    hi: int,
    ends: tuple[tuple[int, str, ProbeOutcome], ...],
) -> SearchResult[V]:
    """The answer once nothing untested is left between ``lo`` (last old) and
    ``hi`` (first new). It depends only on the oracle, not on the order of the
    tests: lo is the last testable candidate before the flip, hi the first at or
    after it, and what lies between was skipped. So k-section and the sequential
    search agree."""
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


# --------------------------------------------------------------------------- k-section

RoundOracle = Callable[[list[V]], list[Said]]  # tests candidates at once, in order


def most_rounds(candidates: int, jobs: int) -> int:
    """The bound k-section keeps without skips: ceil(log_{N+1} K) + 2."""
    return math.ceil(math.log(candidates, jobs + 1) - 1e-9) + 2


def rounds_left(interior: int, jobs: int) -> int:
    """Rounds k-section needs at most for ``interior`` untested candidates."""
    rounds = 0
    while interior > 0:
        interior = max(0, math.ceil((interior - jobs) / (jobs + 1)))
        rounds += 1
    return rounds


def ksection(
    walk: Sequence[V],
    run_round: RoundOracle[V],
    find: Find,
    jobs: int,
    *,
    on_step: OnStep[V] | None = None,
    on_round: Callable[[int, list[tuple[V, str]]], None] | None = None,
) -> SearchResult[V]:
    """The search of ``search`` with ``jobs`` tests at once: each round splits the
    untested stretch between the last old and the first new outcome into
    ``jobs + 1`` parts and tests the ``jobs`` candidates at the cuts. The two
    ends come first (one round when jobs >= 2). Same answer as ``search``; at
    most ``most_rounds(len(walk), jobs)`` rounds without skips.

    ``on_round(number, [(candidate, role), ...])`` is called before each round,
    ``on_step(step, most_rounds_left)`` after each test of it."""
    if len(walk) < 2:
        raise ValueError("a bisect needs two different ends")
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    old, new = find.old, find.new
    start_role, end_role = (
        ("good end", "bad end") if find is Find.FIRST_BAD else ("bad end", "good end")
    )
    seen: dict[int, Said] = {}
    steps: list[Step[V]] = []
    last = len(walk) - 1
    roles = {0: start_role, last: end_role}
    rounds = 0

    def test(
        indices: list[int],
        left_after: Callable[[], int],
        narrow: Callable[[list[int]], None] = lambda _: None,
    ) -> None:
        """One round; ``narrow`` moves the bounds before the progress is told, so
        what it announces is what the round left."""
        nonlocal rounds
        rounds += 1
        batch = [(walk[i], roles.get(i, "step")) for i in indices]
        if on_round is not None:
            on_round(rounds, batch)
        observations = run_round([walk[i] for i in indices])
        for i, observation in zip(indices, observations, strict=True):
            seen[i] = observation
        narrow(indices)
        for i in indices:
            steps.append(Step(walk[i], roles.get(i, "step"), seen[i], rounds))
            if on_step is not None:
                on_step(steps[-1], left_after())

    ends_left = lambda: rounds_left(last - 1, jobs)  # noqa: E731
    if jobs >= 2:
        test([0, last], ends_left)
    else:
        test([0], lambda: 1 + ends_left())
        test([last], ends_left)

    result = SearchResult(find=find, walk=list(walk), status=Status.FOUND, steps=steps)
    ends = ((0, start_role, old), (last, end_role, new))
    if _ends_mismatch(result, seen, ends):
        result.rounds = rounds
        return result

    lo, hi = 0, last

    def untested() -> list[int]:
        return [i for i in range(lo + 1, hi) if i not in seen]

    def narrow(picks: list[int]) -> None:
        # Monotone: the first new outcome among the cuts bounds from above, the last
        # old outcome before it from below; skips are set aside.
        nonlocal lo, hi
        news = [i for i in picks if seen[i].outcome is new and lo < i < hi]
        if news:
            hi = min(news)
        olds = [i for i in picks if seen[i].outcome is old and lo < i < hi]
        if olds:
            lo = max(olds)

    while untested():
        picks = _cuts(untested(), lo, hi, jobs)
        test(picks, lambda: rounds_left(len(untested()), jobs), narrow)

    result.rounds = rounds
    return _concluded(result, walk, seen, lo, hi, ends)


def _cuts(untested: list[int], lo: int, hi: int, jobs: int) -> list[int]:
    """Up to ``jobs`` untested candidates nearest the points that split lo..hi
    into jobs + 1 equal parts (all of them when there are no more than jobs)."""
    if len(untested) <= jobs:
        return untested
    picks: list[int] = []
    for j in range(1, jobs + 1):
        target = lo + (hi - lo) * j / (jobs + 1)
        free = [i for i in untested if i not in picks]
        picks.append(min(free, key=lambda k: (abs(k - target), k)))
    return sorted(picks)


def _said(observation: Said) -> str:
    """'was good (exit 0)' / 'could not be tested (install-error: ...)'."""
    if observation.outcome is ProbeOutcome.SKIP:
        what = "could not be tested"
    else:
        what = f"was {observation.outcome.value}"
    return f"{what} ({observation.detail})" if observation.detail else what
