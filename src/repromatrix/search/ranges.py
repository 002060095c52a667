"""The pure parts of a sweep, no probe and no file: which releases between the two
ends it tests (Releases, select), and how their outcomes read: ranges of one outcome,
the transitions between them, and whether there is at most one (monotone: what a
bisect assumes).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from packaging.version import Version
from pydantic import BaseModel

from repromatrix.outcomes import ProbeOutcome

RANGE_DASH = "–"  # en dash: "4.50.3–4.57.6"


class Releases(str, enum.Enum):
    """Which releases between the two ends are tested."""

    ALL = "all"
    LATEST_PATCH = "latest-patch"  # the newest patch of each minor series
    FIRST_AND_LAST_PATCH = "first-and-last-patch"  # the oldest and newest of each series


def select(versions: Sequence[Version], releases: Releases) -> list[Version]:
    """The releases a sweep tests, in PEP 440 order. A minor series is the first two
    parts of the release number (4.57 for 4.57.6; 2025.11 for 2025.11.3)."""
    ordered = sorted(versions)
    if releases is Releases.ALL:
        return ordered
    series: dict[tuple[int, int], list[Version]] = {}
    for version in ordered:
        series.setdefault((version.major, version.minor), []).append(version)
    chosen: set[Version] = set()
    for members in series.values():
        chosen.add(members[-1])
        if releases is Releases.FIRST_AND_LAST_PATCH:
            chosen.add(members[0])
    return sorted(chosen)


class Range(BaseModel):
    """Consecutive tested releases with one outcome."""

    first: str
    last: str
    outcome: str
    count: int

    def text(self) -> str:
        span = self.first if self.first == self.last else f"{self.first}{RANGE_DASH}{self.last}"
        return f"{span} {self.outcome}"


class Transition(BaseModel):
    """Where the outcome changes between two tested releases (skips in between
    are listed: the change is somewhere among them)."""

    before: str
    after: str
    old: str
    new: str
    between: list[str] = []  # skipped releases between before and after
    untested: int = 0  # releases between them that the selection (--releases) left out
    bisect: str = ""  # the bisect command that finds the exact release, when untested > 0

    def text(self) -> str:
        gap = f" (untestable between: {', '.join(self.between)})" if self.between else ""
        line = f"{self.old} → {self.new} between {self.before} and {self.after}{gap}"
        if self.untested:
            many = "s" if self.untested != 1 else ""
            line += f"; {self.untested} release{many} between them not tested"
        return line


Outcomes = Sequence[tuple[str, str]]  # (version, outcome) in PEP 440 order


def collapse(results: Outcomes) -> list[Range]:
    """Consecutive releases with one outcome as one range (a skip is a range too:
    it interrupts the others, since nothing is known there)."""
    ranges: list[Range] = []
    for version, outcome in results:
        if ranges and ranges[-1].outcome == outcome:
            ranges[-1] = ranges[-1].model_copy(
                update={"last": version, "count": ranges[-1].count + 1}
            )
        else:
            ranges.append(Range(first=version, last=version, outcome=outcome, count=1))
    return ranges


def transitions(results: Outcomes) -> list[Transition]:
    """Every change of outcome between two tested releases (skips in between are
    named: the change lies somewhere among them)."""
    found: list[Transition] = []
    previous: tuple[str, str] | None = None
    skipped: list[str] = []
    for version, outcome in results:
        if outcome == ProbeOutcome.SKIP.value:
            skipped.append(version)
            continue
        if previous is not None and previous[1] != outcome:
            found.append(
                Transition(
                    before=previous[0],
                    after=version,
                    old=previous[1],
                    new=outcome,
                    between=skipped,
                )
            )
        previous, skipped = (version, outcome), []
    return found


def is_monotone(found: Sequence[Transition]) -> bool:
    """At most one flip: what a bisect assumes."""
    return len(found) <= 1
