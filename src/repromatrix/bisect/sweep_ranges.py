"""The pure parts of a sweep, no probe and no file: which releases between the two
ends it tests (Releases, select), and how their outcomes read: ranges of one outcome,
the transitions between them, and whether there is at most one (monotone: what a
bisect assumes).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from packaging.version import Version

from repromatrix.bisect.search import ProbeOutcome
from repromatrix.bisect.sweep_report import Range, Transition


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
