"""What the atlas says in a few lines (pure): where answers change along an axis,
how often audited inferences held, what it costs against the lower bound."""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

from repromatrix.hunts.atlas.view import View


@dataclass(frozen=True)
class Change:
    """Along ``package``, from ``before`` to ``after``, the answer with the other
    axis's versions in ``partners`` went from ``old`` to ``new``."""

    package: str
    before: str
    after: str
    old: str
    new: str
    other: str
    partners: tuple[str, ...]
    case: str = ""

    def text(self) -> str:
        with_ = f"{self.other} {_span(self.partners)}"
        why = f" ({self.case})" if self.case else ""
        return (
            f"{self.package} {self.before} -> {self.after}: {self.old} -> {self.new} "
            f"with {with_}{why}"
        )


def transitions(view: View) -> list[Change]:
    """Every change of answer between neighbouring releases of one axis (answered
    on both sides, conflicts aside), grouped over the other axis's versions."""
    universe = view.universe
    grouped: dict[tuple, list[str]] = defaultdict(list)
    for a, b in itertools.permutations(universe.packages, 2):
        for y in universe.axes[b]:
            previous = None
            for x in universe.axes[a]:
                answer = view.answer((a, x), (b, y))
                if answer.status not in ("works", "breaks"):
                    continue
                if previous is not None and previous[1].status != answer.status:
                    case = answer.case or previous[1].case
                    key = (a, previous[0], x, previous[1].status, answer.status, b, case)
                    grouped[key].append(y)
                previous = (x, answer)
    changes = [
        Change(a, before, after, old, new, b, tuple(partners), case)
        for (a, before, after, old, new, b, case), partners in grouped.items()
    ]
    return sorted(
        changes, key=lambda c: (c.package, c.other, universe.position(c.package, c.after))
    )


def audit_accuracy(view: View) -> tuple[int, int]:
    """(held, audited) over every audit the atlas has run."""
    audits = view.state.audits
    return sum(1 for a in audits if a.inferred == a.found), len(audits)


def _span(versions: tuple[str, ...]) -> str:
    if len(versions) <= 3:
        return ", ".join(versions)
    return f"{versions[0]} … {versions[-1]} ({len(versions)} releases)"
