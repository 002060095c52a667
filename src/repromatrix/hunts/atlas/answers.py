"""Every pair's answer from stored cells and uv's resolutions (pure): per case first
(each case has its own answer), then over every case; what the queries, the report
and each round of a run read.

Per case, a pair

- ``breaks`` (tested) where the pair is condemned and confirmed (knowledge.py), or a
  release of it is condemned alone and an isolated cell of that release held the
  pair; ``breaks`` (inferred) where the release is condemned alone but the pair was
  never tried, or the pair is condemned by one isolated cell not yet confirmed;
- ``works`` (tested) where a cell holding it passed on every run (a three-way
  failure it is part of is its note);
- ``flaky`` where the cells that hold it only failed and passed;
- ``skipped`` where the case skipped wherever it ran; else ``untested``, for
  inference.py to answer from neighbours where they agree.

Over the cases: ``breaks`` if a case breaks (a tested one shown first, a registered
one before others), then ``flaky``, ``untested``, ``works``; a case that only
skipped has no say. An inferred answer that an audit cell re-tested is ``audited``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from repromatrix.hunts.atlas.inference import infer
from repromatrix.hunts.atlas.knowledge import CaseKnowledge, Knowledge, Seen, learn, suspected
from repromatrix.hunts.atlas.rules import SEVERITY, Answer, CaseAnswer, Rule
from repromatrix.hunts.atlas.state import CellRecord, Resolution
from repromatrix.hunts.atlas.universe import Pair, Universe, shown
from repromatrix.outcomes import AnswerStatus, Evidence


def answers_of(
    universe: Universe,
    cells: Sequence[CellRecord],
    conflicts: Mapping[Pair, str],
    audited: Iterable[Pair] = (),
) -> tuple[Knowledge, dict[Pair, Answer]]:
    """What the cells prove, then what their neighbours let one infer."""
    know = learn(universe, list(cells), conflicts)
    per_case = {
        case: infer(universe, case_answers(universe, k, cells), suspected(universe, k))
        for case, k in sorted(know.cases.items())
    }
    checked = set(audited)
    out: dict[Pair, Answer] = {}
    for pair in universe.pairs():
        if pair in conflicts:
            out[pair] = Answer(
                AnswerStatus.CONFLICT, Evidence.TESTED, Rule.CONFLICT, Rule.CONFLICT.value,
                error=conflicts[pair],
            )  # fmt: skip
            continue
        found = tuple(answers[pair] for answers in per_case.values())
        if pair in checked:
            found = tuple(
                replace(a, evidence=Evidence.AUDITED) if a.evidence is Evidence.TESTED else a
                for a in found
            )
        out[pair] = overall(found)
    return know, out


def overall(found: tuple[CaseAnswer, ...]) -> Answer:
    counted = [a for a in found if a.status != AnswerStatus.SKIPPED] or list(found)
    if not counted:
        return Answer(AnswerStatus.UNTESTED)
    status = min((a.status for a in counted), key=SEVERITY.index)
    picked = [a for a in counted if a.status == status]
    if status == AnswerStatus.BREAKS:  # a tested one, then a registered bug's (a link)
        picked.sort(key=lambda a: (a.evidence is Evidence.INFERRED, not a.link, a.case))
    else:  # works holds only as firmly as its weakest case
        picked.sort(key=lambda a: (a.evidence is not Evidence.INFERRED, a.case))
    head = picked[0]
    return Answer(
        status,
        head.evidence,
        head.rule,
        head.note,
        head.cells,
        sum(a.passed for a in found),
        sum(a.runs for a in found),
        (head, *[a for a in found if a is not head]),
    )


def case_answers(
    universe: Universe, know: CaseKnowledge, records: Sequence[CellRecord]
) -> dict[Pair, CaseAnswer]:
    """One case's tested answers (``untested`` where none is proven)."""
    higher_of: dict[Pair, list[int]] = {}
    for h in know.higher:
        for pair in universe.pairs_of(tuple(v for _, v in h.values)):
            higher_of.setdefault(pair, []).append(h.index)
    out: dict[Pair, CaseAnswer] = {}
    for pair in universe.pairs():
        runs = know.holding.get(pair, [])
        passed, total = sum(r.passed for r in runs), sum(r.runs for r in runs)
        common = {"case": know.case, "passed": passed, "runs": total}
        answer = _breaking(universe, know, pair, records, common)
        if answer is None and pair in know.cleared_pairs:
            clean = tuple(r.index for r in runs if r.seen is Seen.CLEAN)
            three = tuple(higher_of.get(pair, ()))
            note = Rule.PASSED.value
            if three:
                note += f"; fails in a three-way combination (cell {three[0]})"
            answer = CaseAnswer(
                status=AnswerStatus.WORKS, evidence=Evidence.TESTED, rule=Rule.PASSED,
                note=note, cells=clean, higher=three, **common,
            )  # fmt: skip
        if answer is None and any(r.seen is Seen.FLAKY for r in runs):
            flaky = tuple(r.index for r in runs if r.seen is Seen.FLAKY)
            answer = CaseAnswer(
                status=AnswerStatus.FLAKY, evidence=Evidence.TESTED, rule=Rule.FLAKY,
                note=f"{Rule.FLAKY.value} ({passed}/{total} runs passed)", cells=flaky, **common,
            )  # fmt: skip
        if answer is None and runs and all(r.seen is Seen.SKIP for r in runs):
            answer = CaseAnswer(
                status=AnswerStatus.SKIPPED, rule=Rule.SKIPPED, note=Rule.SKIPPED.value,
                cells=tuple(r.index for r in runs), **common,
            )  # fmt: skip
        if answer is None:
            answer = CaseAnswer(
                status=AnswerStatus.UNTESTED, cells=tuple(r.index for r in runs), **common
            )
        out[pair] = answer
    return out


def _breaking(
    universe: Universe,
    know: CaseKnowledge,
    pair: Pair,
    records: Sequence[CellRecord],
    common: dict,
) -> CaseAnswer | None:
    """The pair's breaking answer for this case, tested before inferred."""
    found: list[CaseAnswer] = []
    for cause, condemned in know.pairs.items():
        if pair not in condemned:
            continue
        judged = condemned[pair]
        cells = tuple(dict.fromkeys(i for i in (judged.first, judged.second) if i is not None))
        confirmed = judged.second is not None
        rule = Rule.PAIR if confirmed else Rule.PENDING
        found.append(
            CaseAnswer(
                status=AnswerStatus.BREAKS,
                evidence=Evidence.TESTED if confirmed else Evidence.INFERRED,
                rule=rule, note=rule.value, cause=cause, cells=cells, **common,
            )
        )  # fmt: skip
    for cause, releases in know.alone.items():
        for value in pair:
            if value not in releases:
                continue
            isolated = know.isolated[(cause, value)]
            tried = tuple(r.index for r in isolated if set(pair) <= set(universe.values(r.cell)))
            note = Rule.ALONE.value.format(release=shown([value]), cells=len(releases[value]))
            found.append(
                CaseAnswer(
                    status=AnswerStatus.BREAKS,
                    evidence=Evidence.TESTED if tried else Evidence.INFERRED,
                    rule=Rule.ALONE, note=note, cause=cause,
                    cells=tried or releases[value], alone=value, **common,
                )
            )  # fmt: skip
    if not found:
        return None
    # tested first; a release failing on its own before a pair (the page shows it once)
    found.sort(key=lambda a: (a.evidence is not Evidence.TESTED, a.alone is None))
    return with_cause(found[0], records)


def with_cause(answer: CaseAnswer, records: Sequence[CellRecord]) -> CaseAnswer:
    """The answer with its cause's words (signature line, error, link) taken from the
    first cell it names, which failed with that cause."""
    if not answer.cells:
        return answer
    found = records[answer.cells[0]].cases.get(answer.case)
    if found is None:
        return answer
    return replace(answer, cause_line=found.cause, error=found.error, link=found.link)


def conflicts_of(universe: Universe, resolutions: Iterable[Resolution]) -> dict[Pair, str]:
    """The universe's pairs that uv cannot install together, with its reason."""
    order = universe.packages
    out: dict[Pair, str] = {}
    for resolution in resolutions:
        if not resolution.conflict or len(resolution.pins) != 2:
            continue
        (a, x), (b, y) = sorted(
            resolution.pins.items(),
            key=lambda item: order.index(item[0]) if item[0] in order else len(order),
        )
        if a in universe.axes and b in universe.axes:
            out[((a, x), (b, y))] = resolution.conflict
    return out
