"""Inference (inference.py), one case at a time: an open pair takes the answer of its
nearest answered neighbours only where those on both sides of one axis are tested
and agree, never along "absent", never for a suspect."""

from __future__ import annotations

from repromatrix.hunts.atlas.inference import infer
from repromatrix.hunts.atlas.rules import CaseAnswer, Rule
from repromatrix.hunts.atlas.universe import ABSENT, Universe
from repromatrix.outcomes import AnswerStatus, Evidence

U = Universe({"a": (ABSENT, "1", "2", "3", "4"), "b": ("1", "2")})
WORKS = CaseAnswer("t", AnswerStatus.WORKS, Evidence.TESTED, Rule.PASSED, cells=(0,))
BREAKS = CaseAnswer("t", AnswerStatus.BREAKS, Evidence.TESTED, Rule.PAIR, cause="k", cells=(1,))
OTHER = CaseAnswer("t", AnswerStatus.BREAKS, Evidence.TESTED, Rule.PAIR, cause="j", cells=(2,))
OPEN = CaseAnswer("t", AnswerStatus.UNTESTED)


def answers(**given: CaseAnswer) -> dict:
    out = {}
    for x in U.axes["a"]:
        for y in U.axes["b"]:
            out[(("a", x), ("b", y))] = given.get(f"a{x}b{y}", OPEN)
    return out


def test_between_agreeing_neighbours_the_answer_is_inferred() -> None:
    found = infer(U, answers(a1b1=WORKS, a4b1=WORKS))
    middle = found[(("a", "2"), ("b", "1"))]
    assert (middle.status, middle.evidence, middle.rule) == (
        AnswerStatus.WORKS,
        Evidence.INFERRED,
        Rule.NEIGHBOURS,
    )
    assert middle.note == "a 1 and 4 on either side agree (with b 1)"
    assert found[(("a", "1"), ("b", "2"))].status == AnswerStatus.UNTESTED, "one side only"


def test_disagreeing_or_one_sided_neighbours_infer_nothing() -> None:
    found = infer(U, answers(a1b1=WORKS, a4b1=BREAKS))
    assert found[(("a", "2"), ("b", "1"))].status == AnswerStatus.UNTESTED
    found = infer(U, answers(a2b1=BREAKS, a4b1=BREAKS))
    assert found[(("a", "3"), ("b", "1"))].status == AnswerStatus.BREAKS
    assert found[(("a", "1"), ("b", "1"))].status == AnswerStatus.UNTESTED, "outside the ends"


def test_breaks_of_two_causes_infer_nothing() -> None:
    found = infer(U, answers(a2b1=BREAKS, a4b1=OTHER))
    assert found[(("a", "3"), ("b", "1"))].status == AnswerStatus.UNTESTED


def test_absent_is_no_neighbour_and_never_inferred() -> None:
    found = infer(U, answers(a1b1=WORKS, a4b1=WORKS))
    assert found[(("a", ABSENT), ("b", "1"))].status == AnswerStatus.UNTESTED


def test_a_suspect_is_never_inferred() -> None:
    pair = (("a", "2"), ("b", "1"))
    found = infer(U, answers(a1b1=WORKS, a4b1=WORKS), {pair})
    assert found[pair].status == AnswerStatus.UNTESTED


def test_inferred_answers_never_seed_inference() -> None:
    inferred = CaseAnswer("t", AnswerStatus.WORKS, Evidence.INFERRED, Rule.NEIGHBOURS)
    found = infer(U, answers(a1b1=WORKS, a3b1=inferred, a4b1=BREAKS))
    assert found[(("a", "2"), ("b", "1"))].status == AnswerStatus.UNTESTED
