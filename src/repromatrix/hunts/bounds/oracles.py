"""What every step of the bounds engine shares (``Context``: the cells, the answers it
fills, its notes) and the oracles its searches are handed over the cells: one
dependency moved beside a set (``along``, for bisection), a mix of two sets (``mix``,
for ddmin); and what a finished search says of its candidates. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from packaging.version import Version

from repromatrix.hunts.bounds.answers import Answer, End
from repromatrix.hunts.bounds.cellset import Cells, Seen, Versions
from repromatrix.hunts.bounds.ranges import Dependency
from repromatrix.outcomes import ProbeOutcome
from repromatrix.search import ddmin as dd
from repromatrix.search.bisection import SearchResult

GOOD, BAD, SKIP = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP
SKIP_BUDGET = 3  # untestable releases one search tries before it says so


@dataclass
class Context:
    answers: dict[str, Answer]
    testable: list[Dependency]
    cells: Cells
    skip_budget: int = SKIP_BUDGET
    say: Callable[[str], None] = lambda _line: None
    notes: list[str] = field(default_factory=list)

    def along(self, beside: Versions, name: str, role: str) -> Callable[[Version], Seen]:
        """A search's oracle: ``name`` at a release, the others as in ``beside``;
        after ``skip_budget`` untestable releases it stops asking."""
        skipped = 0

        def probe(version: Version) -> Seen:
            nonlocal skipped
            if skipped >= self.skip_budget:
                return Seen(SKIP, f"not tried: {skipped} releases could not be tested")
            seen = self.cells({**beside, name: version}, role)
            skipped += seen.outcome is SKIP
            return seen

        return probe

    def mix(self, reference: Versions, target: Versions) -> dd.Oracle:
        """ddmin's oracle: the reference set with ``applied`` moved to ``target``."""

        def oracle(applied: frozenset[str]) -> dd.Trial:
            mixed = {**reference, **{n: target[n] for n in applied}}
            seen = self.cells(mixed, "mix (ddmin)")
            if seen.unresolvable:
                return dd.Trial(dd.Outcome.UNRESOLVABLE, seen.detail)
            return dd.Trial(dd.Outcome(seen.outcome.value), seen.detail)

        return oracle


def shown_by(end: End, result: SearchResult) -> None:
    end.show(*(step.observation for step in result.steps))


def said_of(result: SearchResult, candidate: Version) -> ProbeOutcome | None:
    """What the search's test of ``candidate`` said (None: not tested)."""
    return next((s.observation.outcome for s in result.steps if s.candidate == candidate), None)


def best(result: SearchResult, outcome: ProbeOutcome, pick) -> Version | None:
    found = [s.candidate for s in result.steps if s.observation.outcome is outcome]
    return pick(found) if found else None


def text(versions: Mapping[str, Version]) -> str:
    return ", ".join(f"{n}=={v}" for n, v in sorted(versions.items()))
