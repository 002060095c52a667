"""What the bounds engine answers, per dependency: each end of its range (``End``:
its verdict, the releases judged, shown to work and to fail, the cells that show it),
the dependency's verdict (the first of its ends' in the table's order) and the
specifier that admits exactly the releases shown to work (``suggested``). Pure."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version

from repromatrix.hunts.bounds.cellset import Seen
from repromatrix.hunts.bounds.ranges import Dependency, suggest
from repromatrix.outcomes import BOUND_TABLE, BoundVerdict, ProbeOutcome


@dataclass
class End:
    """What is known of one end of a range: its verdict, the release judged and what
    it did, the release shown to work nearest it and the one shown to fail, the
    releases the answer could not test, and the cells that show it."""

    verdict: BoundVerdict = BoundVerdict.OK
    tested: Version | None = None  # floor: the lowest admitted; ceiling: the newest admitted
    outcome: ProbeOutcome | None = None
    works: Version | None = None  # floor: lowest shown to work; ceiling: newest shown to work
    fails: Version | None = None  # floor: highest failing below it; ceiling: first failing
    excluded: Version | None = None  # ceiling: the newest release the cap shuts out, tested
    excluded_outcome: ProbeOutcome | None = None
    untested: tuple[Version, ...] = ()  # releases between the two that could not be tested
    together: tuple[str, ...] = ()  # the other dependencies it fails with
    evidence: str = ""  # tested, or inferred by which rule
    reason: str = ""
    cells: list[int] = field(default_factory=list)

    def show(self, *seen: Seen | None) -> None:
        for one in seen:
            if one is not None and one.number and one.number not in self.cells:
                self.cells.append(one.number)


@dataclass
class Answer:
    dependency: Dependency
    floor: End = field(default_factory=End)
    ceiling: End = field(default_factory=End)
    verdict: BoundVerdict = BoundVerdict.OK
    suggested: str = ""


@dataclass
class Judgement:
    answers: list[Answer]
    working: dict[str, Version] | None  # the set every end was judged beside
    working_from: str  # how it was found
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Floors:
    """The all-floors set as uv's lowest-direct resolution gave it (None: it could not
    resolve), the floors it had to lift (name -> declared floor), and uv's words."""

    versions: dict[str, Version] | None
    lifted: dict[str, Version] = field(default_factory=dict)
    reason: str = ""


def verdict_of(answer: Answer) -> BoundVerdict:
    """The first of its ends' verdicts in the table's order of precedence."""
    words = {answer.floor.verdict, answer.ceiling.verdict}
    return next(row.verdict for row in BOUND_TABLE if row.verdict in words)


def suggested(answer: Answer) -> str:
    """The specifier that admits exactly the releases shown to work at both ends."""
    floor, ceiling = answer.floor, answer.ceiling
    lower = floor.works if floor.verdict is BoundVerdict.FLOOR_TOO_LOW else None
    upper: tuple[str, Version] | None = None
    if ceiling.verdict is BoundVerdict.CEILING_MISSING and ceiling.fails is not None:
        upper = ("<", ceiling.fails)
    elif ceiling.verdict is BoundVerdict.CEILING_TOO_TIGHT and ceiling.works is not None:
        upper = ("<", ceiling.fails) if ceiling.fails is not None else ("<=", ceiling.works)
    return suggest(answer.dependency.specifier, lower=lower, upper=upper)
