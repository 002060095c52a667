"""Answers inferred from neighbours, pure.

Outcomes mostly flip once along an axis (a release breaks something, a later one
fixes it). So an open pair (x, y) whose nearest tested neighbours on both sides of
one axis agree (x- and x+ with the same y, or y- and y+ with the same x) takes their
answer, marked ``inferred``; never across a conflict or a disagreement, never from
an inferred answer. A share of each run's budget re-tests inferred answers (the
audit) and the atlas reports how often they held.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from repromatrix.hunts.atlas.knowledge import Answer
from repromatrix.hunts.atlas.universe import Pair, Universe


def infer(
    universe: Universe, answers: Mapping[Pair, Answer], suspects: Set[Pair] = frozenset()
) -> dict[Pair, Answer]:
    """``answers`` with each open pair inferred where its neighbours allow; never a
    ``suspect`` (a pair that may cause a failure nothing explains yet)."""
    out = dict(answers)
    for pair, answer in answers.items():
        if answer.status != "untested" or pair in suspects:
            continue
        for moving in (0, 1):
            found = _between(universe, answers, pair, moving)
            if found is not None:
                out[pair] = found
                break
    return out


def _between(
    universe: Universe, answers: Mapping[Pair, Answer], pair: Pair, moving: int
) -> Answer | None:
    (package, version) = pair[moving]
    fixed = pair[1 - moving]
    versions = universe.axes[package]
    at = versions.index(version)

    def tested_at(i: int) -> tuple[str, Answer] | None:
        other = (package, versions[i])
        key = (other, fixed) if moving == 0 else (fixed, other)
        found = answers.get(key)
        if found is None or found.status == "untested":
            return None
        return versions[i], found

    below = next((a for i in range(at - 1, -1, -1) if (a := tested_at(i)) is not None), None)
    above = next((a for i in range(at + 1, len(versions)) if (a := tested_at(i)) is not None), None)
    if below is None or above is None:
        return None
    (low, under), (high, over) = below, above
    if under.evidence != "tested" or over.evidence != "tested":
        return None
    if under.status != over.status or under.status not in ("works", "breaks"):
        return None
    if under.status == "breaks" and under.case != over.case:
        return None
    return Answer(
        under.status,
        "inferred",
        case=under.case,
        error=under.error,
        link=under.link,
        cells=under.cells + over.cells,
        note=f"{package} {low} and {high} on either side agree (with {fixed[0]} {fixed[1]})",
    )
