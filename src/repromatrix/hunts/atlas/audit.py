"""The audit, pure: cells that re-test inferred answers, and how they came out.

Every kind of inferred answer is audited (a rule of knowledge.py's or inference.py's:
neighbours agree, a release fails alone, a pair failed once), the weakest first:
those that fewest cells support. A round audits ``share`` of the inferred answers
(at least one of each kind there is), within the cells the budget left for it
(engine.plan_round). An audit's result is the answer its case has once the audit
cell ran: the same status (held) or another; by kind in the summary.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from repromatrix.hunts.atlas.knowledge import Knowledge
from repromatrix.hunts.atlas.localise import Planned, complete
from repromatrix.hunts.atlas.rules import Answer
from repromatrix.hunts.atlas.state import Audit
from repromatrix.hunts.atlas.universe import Cell, Pair, shown
from repromatrix.outcomes import AnswerStatus, Evidence


@dataclass(frozen=True)
class Inferred:
    pair: Pair
    case: str
    kind: str  # the rule's name
    status: AnswerStatus
    support: int  # cells behind it


def inferred_answers(answers: Mapping[Pair, Answer]) -> list[Inferred]:
    found = []
    for pair, answer in answers.items():
        for case in answer.cases:
            if case.evidence is Evidence.INFERRED and case.rule is not None:
                found.append(
                    Inferred(pair, case.case, case.rule.name, case.status, len(case.cells))
                )
    return found


def audit_wanted(answers: Mapping[Pair, Answer], share: float) -> int:
    """How many audit cells the inferred answers call for: ``share`` of them, one of
    each kind at least (0 with nothing inferred)."""
    candidates = inferred_answers(answers)
    if share <= 0 or not candidates:
        return 0
    kinds = {item.kind for item in candidates}
    return max(len(kinds), math.ceil(share * len(candidates)))


def audit_cells(
    know: Knowledge,
    answers: Mapping[Pair, Answer],
    *,
    share: float,
    limit: int,
    taken: set[Cell],
) -> list[Planned]:
    """At most ``limit`` cells, each holding an inferred answer's pair beside versions
    known to work for its case."""
    candidates = inferred_answers(answers)
    if limit <= 0 or share <= 0 or not candidates:
        return []
    by_kind: dict[str, list[Inferred]] = {}
    for item in sorted(candidates, key=lambda i: (i.support, i.pair, i.case)):
        by_kind.setdefault(item.kind, []).append(item)
    want = min(limit, audit_wanted(answers, share))
    queues = [list(items) for _, items in sorted(by_kind.items())]
    planned: list[Planned] = []
    seen_pairs: set[Pair] = set()
    while len(planned) < want and any(queues):
        for queue in queues:
            while queue and len(planned) < want:
                item = queue.pop(0)
                if item.pair in seen_pairs:
                    continue
                cell = complete(know, item.pair, taken=taken, case=know.cases.get(item.case))
                if cell is None:
                    continue
                taken.add(cell)
                seen_pairs.add(item.pair)
                why = f"audit: inferred {item.status} ({item.kind.lower()}) {shown(item.pair)}"
                planned.append(Planned(cell, why, (item.pair, item.case, item.kind, item.status)))
                break
    return planned


def audit_results(planned: Iterable[Planned], answers: Mapping[Pair, Answer]) -> list[Audit]:
    """How each audited answer came out once its cell ran."""
    out = []
    for item in planned:
        if item.audit is None:
            continue
        pair, case, kind, inferred = item.audit
        after = next((c for c in answers[pair].cases if c.case == case), None)
        firm = after is not None and after.evidence in (Evidence.TESTED, Evidence.AUDITED)
        found = after.status if firm and after is not None else AnswerStatus.UNTESTED
        out.append(
            Audit(pins=dict(pair), inferred=str(inferred), found=str(found), kind=kind, case=case)
        )
    return out


def planned_audit(item: Planned) -> Audit | None:
    """A planned audit as a nightly's plan keeps it (found: not yet)."""
    if item.audit is None:
        return None
    pair, case, kind, inferred = item.audit
    return Audit(
        pins=dict(pair), inferred=str(inferred), found=AnswerStatus.UNTESTED, kind=kind, case=case
    )
