"""What the atlas says in a few facts (pure), read by summary.md, the page and the
console: the breaks grouped by cause, the releases that fail on their own, three-way
failures, where answers change along an axis, how the audits came out by kind, what
the cells cost.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from repromatrix.hunts.atlas.rules import CaseAnswer
from repromatrix.hunts.atlas.universe import Pair, Value, shown
from repromatrix.hunts.atlas.view import View, repro_of
from repromatrix.outcomes import AnswerStatus


@dataclass
class Cause:
    """One failure cause (a case and its failure's signature) and the breaks it makes."""

    case: str
    key: str
    line: str  # the signature as one line
    error: str
    link: str
    pairs: list[Pair] = field(default_factory=list)  # pairs it breaks (the case's answer)
    alone: list[Value] = field(default_factory=list)  # releases it fails on their own
    cells: set[int] = field(default_factory=set)
    repro: str = ""

    def first(self, view: View) -> Pair:
        return min(self.pairs, key=lambda p: [view.universe.position(*v) for v in p])

    def text(self, view: View) -> str:
        what = f"{len(self.pairs)} pair breaks"
        if self.alone:
            what += " (" + ", ".join(f"{p} {v} fails on its own" for p, v in self.alone) + ")"
        else:
            what += f", first {shown(self.first(view))}"
        return f"{self.case}: {brief(self.line or self.error)} — {what}; {len(self.cells)} cells"


def causes(view: View) -> list[Cause]:
    """Every cause of a ``breaks`` answer, the most pairs first."""
    found: dict[tuple[str, str], Cause] = {}
    for pair, answer in view.answers.items():
        for case in answer.cases:
            if case.status != AnswerStatus.BREAKS:
                continue
            key = (case.case, case.cause)
            cause = found.get(key)
            if cause is None:
                repro = repro_of(view, case.cells[0], case.case) if case.cells else ""
                cause = Cause(
                    case.case, case.cause, case.cause_line, case.error, case.link, repro=repro
                )
                found[key] = cause
            cause.pairs.append(pair)
            cause.cells.update(case.cells)
            if case.alone is not None and case.alone not in cause.alone:
                cause.alone.append(case.alone)
    return sorted(found.values(), key=lambda c: (-len(c.pairs), c.case, c.key))


def alone(view: View) -> dict[Value, list[CaseAnswer]]:
    """The releases that fail on their own: each with one answer per cause."""
    out: dict[Value, list[CaseAnswer]] = defaultdict(list)
    for answer in view.answers.values():
        for case in answer.cases:
            if case.alone is None or case.status != AnswerStatus.BREAKS:
                continue
            if not any((c.case, c.cause) == (case.case, case.cause) for c in out[case.alone]):
                out[case.alone].append(case)
    return dict(out)


@dataclass(frozen=True)
class ThreeWay:
    case: str
    cause: str
    index: int
    values: tuple[Value, ...]

    def text(self) -> str:
        together = f"{shown(self.values)} fail together ({self.case}; cell {self.index})"
        return together + "; every pair of them works"


def three_way(view: View) -> list[ThreeWay]:
    out = []
    for case in view.knowledge.cases.values():
        for h in case.higher:
            line = view.cells[h.index].cases.get(h.case)
            out.append(ThreeWay(h.case, line.cause if line else "", h.index, h.values))
    return out


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
    on both sides, conflicts aside), grouped over the other axis's versions; a
    release that fails on its own is said once (``alone``), not here."""
    universe = view.universe
    solo = set(alone(view))
    grouped: dict[tuple, list[str]] = defaultdict(list)
    for a, b in itertools.permutations(universe.packages, 2):
        for y in universe.axes[b]:
            if (b, y) in solo:
                continue
            previous = None
            for x in universe.releases(a):
                answer = view.answer((a, x), (b, y))
                if answer.status not in (AnswerStatus.WORKS, AnswerStatus.BREAKS) or (a, x) in solo:
                    previous = None if (a, x) in solo else previous
                    continue
                if previous is not None and previous[1].status != answer.status:
                    broken = answer if answer.status == AnswerStatus.BREAKS else previous[1]
                    case = broken.case
                    key = (a, previous[0], x, str(previous[1].status), str(answer.status), b, case)
                    grouped[key].append(y)
                previous = (x, answer)
    changes = [
        Change(a, before, after, old, new, b, tuple(partners), case)
        for (a, before, after, old, new, b, case), partners in grouped.items()
    ]
    return sorted(
        changes, key=lambda c: (c.package, c.other, universe.position(c.package, c.after))
    )


def audits_by_kind(view: View) -> dict[str, tuple[int, int]]:
    """kind -> (held, audited) over every audit the atlas has run."""
    out: dict[str, list[int]] = {}
    for audit in view.state.audits:
        if audit.found == AnswerStatus.UNTESTED:
            continue  # its cell could not tell (it failed of another cause)
        held = out.setdefault(audit.kind.lower() or "neighbours", [0, 0])
        held[0] += audit.inferred == audit.found
        held[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def counts(view: View) -> dict[str, dict[str, int]]:
    """Answers by status and, within each, by evidence."""
    out: dict[str, dict[str, int]] = {}
    for answer in view.answers.values():
        by = out.setdefault(str(answer.status), {})
        how = str(answer.evidence) if answer.evidence else "-"
        by[how] = by.get(how, 0) + 1
    return out


def counts_line(view: View) -> str:
    parts = []
    for status in AnswerStatus:
        by = counts(view).get(str(status))
        if not by:
            continue
        total = sum(by.values())
        detail = ", ".join(
            f"{n} {e}"
            for e, n in sorted(by.items())
            if e != "-" and status != AnswerStatus.CONFLICT
        )
        parts.append(f"{total} {status}" + (f" ({detail})" if detail else ""))
    return "; ".join(parts)


def cell_seconds(view: View) -> tuple[float, int]:
    """Total cell time over every cell the atlas ever ran (every continued run), and
    the runs."""
    return sum(c.seconds for c in view.state.cells), len(view.state.runs)


def counted(n: int, word: str) -> str:
    """``1 cause``, ``3 causes``: a count a person reads."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def brief(text: str, limit: int = 120) -> str:
    """A cause in a list a person reads (the full one is in answers.csv and the JSON)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _span(versions: tuple[str, ...]) -> str:
    if len(versions) <= 3:
        return ", ".join(versions)
    return f"{versions[0]} … {versions[-1]} ({len(versions)} releases)"
