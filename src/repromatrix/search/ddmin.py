"""The search of a culprit hunt: which of the changes between a good and a bad lock
turn good into bad. Delta debugging (Zeller and Hildebrandt's ddmin).

Pure logic, like bisection.py: it is handed the names of the changed packages and an
oracle that tests one *mix* (the good lock with a set of changes applied); it knows
nothing of environments, so it is tested with synthetic oracles.

1. Both ends first: no change applied must be good, all of them bad; otherwise it
   stops and says which end did what.
2. ddmin: split the current failing set in n parts; a part that fails becomes the
   current set (n = 2); else a complement that fails does (n - 1); else n doubles,
   until n is the size of the set. With one culprit and no skips that is at most
   two tests per halving: 2 * ceil(log2(changes)) + 2 tests in all.
3. A mix the resolver refuses (unresolvable: the pins conflict) tests nothing. The
   resolver's message names the packages in conflict; the changed ones it names
   are moved along with the part and the mix is tried again (a part that requires
   a newer dependency takes it along); what was learned ("X needs Y", from the
   message's "X depends on Y") is applied to later mixes before they are tried.
   Unresolvable attempts do not run a cell and are not counted as runs. A mix
   still unresolvable, or skipped (exit 125, a skipped case), is untestable: ddmin
   goes on as if it had passed, which only keeps the current set larger.
4. The answer is the smallest failing set found (1-minimal: no part of it fails
   alone). Its culprits are the changes asked for in the smallest request that gave
   it; the rest were moved along because the resolver asked for them.

``jobs`` > 1 tests the parts of one round at the same time (threads: each test is
another process); the first failing part in order wins, as without jobs.
"""

from __future__ import annotations

import enum
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from repromatrix.names import canonicalize_name


class Outcome(str, enum.Enum):
    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"  # untestable: exit 125, a skipped case, an install that failed
    UNRESOLVABLE = "unresolvable"  # the resolver refused the pins: nothing ran


@dataclass(frozen=True)
class Trial:
    """What testing one mix gave."""

    outcome: Outcome
    detail: str = ""  # one line; for UNRESOLVABLE the resolver's message
    seconds: float = 0.0
    extra: dict = field(default_factory=dict, compare=False)


Oracle = Callable[[frozenset[str]], Trial]


@dataclass(frozen=True)
class Attempt:
    """One set tried: what was asked for, what was applied, what it gave."""

    number: int
    role: str  # "good lock" | "bad lock" | "subset" | "complement"
    requested: frozenset[str]
    applied: frozenset[str]
    trial: Trial
    ran: bool  # a cell ran (False: unresolvable, or the same mix was tested before)
    moved_along: tuple[str, ...] = ()  # added to the request because the resolver named them


class Status(str, enum.Enum):
    FOUND = "found"
    INCONCLUSIVE = "inconclusive"  # untestable mixes hide which changes matter
    ENDS_MISMATCH = "ends-mismatch"  # the good lock fails or the bad lock passes


@dataclass
class DdminResult:
    status: Status
    minimal: tuple[str, ...]  # the smallest failing set of changes found
    culprits: tuple[str, ...]  # of those, the ones asked for (not only moved along)
    moved_along: dict[str, str]  # package -> why it came along
    attempts: list[Attempt]
    reason: str = ""

    @property
    def runs(self) -> int:
        return sum(1 for a in self.attempts if a.ran)


def most_runs(changes: int) -> int:
    """Cell runs at most with one culprit, no skips and no conflicts: the two ends,
    then two tests per halving."""
    return 2 + (2 * math.ceil(math.log2(changes)) if changes > 1 else 0)


def mentioned(text: str, names: Sequence[str]) -> set[str]:
    """The package names of ``names`` that a resolver message mentions
    (``huggingface-hub``, ``huggingface_hub``, ``Huggingface.Hub`` alike)."""
    # Operators are not in the pattern: "transformers==4.52.4" gives "transformers".
    words = {canonicalize_name(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*", text)}
    return {name for name in names if name in words}


_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*?)"
_DEPENDS = re.compile(_NAME + r"(?:[<>=!~][^ ]*)? depends on " + _NAME + r"[<>=!~{ ,]")


def depends_on(text: str) -> set[tuple[str, str]]:
    """(package, requirement) pairs a resolver message states ("Because
    transformers>=5.23.0 depends on safetensors>=0.8.0 ...")."""
    return {(canonicalize_name(a), canonicalize_name(b)) for a, b in _DEPENDS.findall(text)}


def ddmin(
    changes: Sequence[str],
    oracle: Oracle,
    *,
    requires: Mapping[str, Iterable[str]] | None = None,
    jobs: int = 1,
    adapt_rounds: int = 8,
    on_attempt: Callable[[Attempt], None] | None = None,
) -> DdminResult:
    """The smallest set of ``changes`` that fails, by delta debugging.

    ``requires`` (package -> what it requires, e.g. from the bad lock's ``# via``
    annotations) and what the resolver said decide, within the answer, which changes
    are culprits and which only came along as their requirements."""
    everything = tuple(changes)
    attempts: list[Attempt] = []
    known: dict[frozenset[str], Trial] = {}
    lock = threading.Lock()

    def record(attempt: Attempt) -> None:
        with lock:
            attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)

    def number() -> int:
        with lock:
            return len(attempts) + 1

    learned: dict[str, set[str]] = {}  # applied X needs Y applied too (the resolver said)

    def closed(applied: frozenset[str], within: frozenset[str]) -> frozenset[str]:
        """``applied`` with what earlier refusals showed it needs (within the set)."""
        out, todo = set(applied), list(applied)
        while todo:
            for needed in learned.get(todo.pop(), ()):
                if needed in within and needed not in out:
                    out.add(needed)
                    todo.append(needed)
        return frozenset(out)

    def learn(detail: str, applied: frozenset[str], more: set[str]) -> None:
        with lock:
            for one, other in depends_on(detail):
                for trigger, needed in ((one, other), (other, one)):
                    if trigger in applied and needed in more:
                        learned.setdefault(trigger, set()).add(needed)

    def test(requested: frozenset[str], within: frozenset[str], role: str) -> Attempt:
        """Test a mix; adapt an unresolvable one by moving along what the resolver
        names (within the current set), and remember it for the next mixes."""
        applied = closed(requested, within)
        moved = tuple(sorted(applied - requested))
        for _ in range(adapt_rounds + 1):
            with lock:
                cached = known.get(applied)
            trial = cached or oracle(applied)
            if cached is None:
                with lock:
                    known[applied] = trial
            if trial.outcome is not Outcome.UNRESOLVABLE:
                attempt = Attempt(number(), role, requested, applied, trial, cached is None, moved)
                record(attempt)
                return attempt
            more = mentioned(trial.detail, sorted(within - applied))
            record(Attempt(number(), role, requested, applied, trial, False, moved))
            if not more:
                break
            learn(trial.detail, applied, more)
            grown = closed(applied | more, within)
            applied, moved = grown, (*moved, *sorted(grown - applied))
        skip = Trial(Outcome.SKIP, f"unresolvable: {trial.detail}", 0.0)
        return Attempt(len(attempts), role, requested, applied, skip, False, moved)

    def result(status: Status, current: tuple[str, ...], reason: str) -> DdminResult:
        culprits, along = _explain(current, attempts, requires or {})
        return DdminResult(status, current, culprits, along, attempts, reason)

    good_end = test(frozenset(), frozenset(), "good lock")
    if good_end.trial.outcome is not Outcome.GOOD:
        return result(
            Status.ENDS_MISMATCH if good_end.trial.outcome is Outcome.BAD else Status.INCONCLUSIVE,
            (),
            f"the good lock is {good_end.trial.outcome.value} ({good_end.trial.detail})",
        )
    all_set = frozenset(everything)
    bad_end = test(all_set, all_set, "bad lock")
    if bad_end.trial.outcome is not Outcome.BAD:
        return result(
            Status.ENDS_MISMATCH if bad_end.trial.outcome is Outcome.GOOD else Status.INCONCLUSIVE,
            (),
            f"the bad lock is {bad_end.trial.outcome.value} ({bad_end.trial.detail})",
        )

    current = everything
    n = 2
    untestable_since_reduction = 0
    pool = ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        while len(current) >= 2:
            within = frozenset(current)
            parts = _split(current, n)
            rounds = [("subset", [frozenset(p) for p in parts])]
            if n > 2:  # with two parts the complements are the parts
                rounds.append(("complement", [within - frozenset(p) for p in parts]))
            reduced = None
            for role, sets in rounds:
                for attempt in _tested(sets, within, role, test, pool, jobs):
                    if attempt.trial.outcome is Outcome.SKIP:
                        untestable_since_reduction += 1
                    if attempt.trial.outcome is Outcome.BAD and attempt.applied != within:
                        reduced = (attempt.applied, role)
                        break
                if reduced:
                    break
            if reduced:
                applied, role = reduced
                current = tuple(c for c in current if c in applied)
                n = 2 if role == "subset" else max(n - 1, 2)
                untestable_since_reduction = 0
                continue
            if n >= len(current):
                break
            n = min(len(current), 2 * n)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    if untestable_since_reduction:
        return result(
            Status.INCONCLUSIVE,
            current,
            f"{untestable_since_reduction} smaller mix(es) were untestable: the culprit is "
            f"among {', '.join(current)}",
        )
    return result(Status.FOUND, current, "")


def _tested(
    sets: list[frozenset[str]],
    within: frozenset[str],
    role: str,
    test: Callable[[frozenset[str], frozenset[str], str], Attempt],
    pool: ThreadPoolExecutor | None,
    width: int,
):
    """The attempts for ``sets`` in order; with a pool, ``jobs`` at a time."""
    if pool is None:
        for s in sets:
            yield test(s, within, role)
        return
    for start in range(0, len(sets), width):
        batch = [pool.submit(test, s, within, role) for s in sets[start : start + width]]
        yield from (future.result() for future in batch)


def _split(items: tuple[str, ...], n: int) -> list[tuple[str, ...]]:
    """``n`` consecutive parts of nearly equal size (the larger first)."""
    size, extra = divmod(len(items), n)
    parts, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        parts.append(items[start:end])
        start = end
    return [p for p in parts if p]


def _explain(
    minimal: tuple[str, ...], attempts: list[Attempt], requires: Mapping[str, Iterable[str]]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """Of the minimal set, the culprits and why each other member came along.

    The tests decide first: when the failing mixes of exactly these changes that moved
    some along (the resolver refused them without) all asked for the same few, those
    are the culprits and the rest came along. A dependency the resolver states says
    only that two changes go together, not which one breaks: on the seed stack,
    "unsloth==2025.11.3 depends on unsloth-zoo>=2025.11.4" is why unsloth had to move
    back with unsloth_zoo, and unsloth moved alone passed. Without such a mix, the
    culprits are the changes no other member requires; when every member is required
    by another (or none is), all of them: the tests cannot tell them apart."""
    members = set(minimal)
    failing = [
        a
        for a in attempts
        if a.trial.outcome is Outcome.BAD and set(a.applied) == members and a.moved_along
    ]
    asked = set().union(*(a.requested for a in failing)) if failing else set()
    if asked and asked < members:  # else every request gave the same set: no telling
        return tuple(p for p in minimal if p in asked), {
            p: f"moved along: the resolver refused {', '.join(sorted(asked))} without it"
            for p in minimal
            if p not in asked
        }
    why: dict[str, str] = {}
    for package in minimal:
        for needed in requires.get(package, ()):
            if needed in members and needed != package:
                why.setdefault(needed, f"{package} requires it (the bad lock says so)")
    for attempt in attempts:
        if attempt.trial.outcome is Outcome.UNRESOLVABLE:
            for package, needed in sorted(depends_on(attempt.trial.detail)):
                if package in members and needed in members and needed != package:
                    why.setdefault(needed, f"{package} requires it (the resolver said so)")
    culprits = tuple(p for p in minimal if p not in why)
    if not culprits:
        return minimal, {}
    return culprits, {p: why[p] for p in minimal if p in why}
