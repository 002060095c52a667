"""Answers inferred from neighbours, pure, one case at a time.

Outcomes mostly flip once along an axis (a release breaks something, a later one
fixes it). So an open pair (x, y) whose nearest answered neighbours on both sides of
one axis are tested and agree (x- and x+ with the same y, or y- and y+ with the same
x: both work, or both break with one cause) takes their answer, marked ``inferred``
with that rule; never across a conflict or a disagreement, never from an inferred
answer, never along "absent" (not a release), and never for a pair that may cause a
failure nothing explains yet. The audit (audit.py) re-tests inferred answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import replace

from repromatrix.hunts.atlas.rules import CaseAnswer, Rule
from repromatrix.hunts.atlas.universe import ABSENT, Pair, Universe
from repromatrix.outcomes import AnswerStatus, Evidence

AGREEING = (AnswerStatus.WORKS, AnswerStatus.BREAKS)
FIRM = (Evidence.TESTED, Evidence.AUDITED)


def infer(
    universe: Universe, answers: Mapping[Pair, CaseAnswer], suspects: Set[Pair] = frozenset()
) -> dict[Pair, CaseAnswer]:
    """``answers`` (one case's) with each open pair inferred where its neighbours
    allow; never a ``suspect``."""
    out = dict(answers)
    for pair, answer in answers.items():
        if answer.status != AnswerStatus.UNTESTED or pair in suspects:
            continue
        for moving in (0, 1):
            found = _between(universe, answers, pair, moving)
            if found is not None:
                out[pair] = found
                break
    return out


def _between(
    universe: Universe, answers: Mapping[Pair, CaseAnswer], pair: Pair, moving: int
) -> CaseAnswer | None:
    (package, version) = pair[moving]
    if version == ABSENT:
        return None
    fixed = pair[1 - moving]
    versions = universe.releases(package)
    at = versions.index(version)

    def answered_at(i: int) -> tuple[str, CaseAnswer] | None:
        other = (package, versions[i])
        found = answers.get((other, fixed) if moving == 0 else (fixed, other))
        if found is None or found.status in (AnswerStatus.UNTESTED, AnswerStatus.SKIPPED):
            return None
        return versions[i], found

    below = next((a for i in range(at - 1, -1, -1) if (a := answered_at(i)) is not None), None)
    above = next(
        (a for i in range(at + 1, len(versions)) if (a := answered_at(i)) is not None), None
    )
    if below is None or above is None:
        return None
    (low, under), (high, over) = below, above
    if under.evidence not in FIRM or over.evidence not in FIRM:
        return None
    if under.status != over.status or under.status not in AGREEING:
        return None
    if under.status == AnswerStatus.BREAKS and under.cause != over.cause:
        return None
    note = Rule.NEIGHBOURS.value.format(
        package=package, low=low, high=high, other=f"{fixed[0]} {fixed[1]}"
    )
    return replace(
        under,
        evidence=Evidence.INFERRED,
        rule=Rule.NEIGHBOURS,
        note=note,
        cells=under.cells + over.cells,
        passed=answers[pair].passed,
        runs=answers[pair].runs,
        alone=None,
        higher=(),
    )
