"""Inference (inference.py): an open pair takes the answer of its nearest tested
neighbours only where those on both sides of one axis agree."""

from __future__ import annotations

from repromatrix.hunts.atlas.inference import infer
from repromatrix.hunts.atlas.knowledge import Answer
from repromatrix.hunts.atlas.universe import Universe

U = Universe({"a": ("1", "2", "3", "4"), "b": ("1", "2")})
WORKS = Answer("works", "tested", cells=(0,))
BREAKS = Answer("breaks", "tested", case="t.py::t", cells=(1,))
OPEN = Answer("untested")


def answers(**given: Answer) -> dict:
    out = {}
    for x in U.axes["a"]:
        for y in U.axes["b"]:
            out[(("a", x), ("b", y))] = given.get(f"a{x}b{y}", OPEN)
    return out


def test_between_agreeing_neighbours_the_answer_is_inferred() -> None:
    found = infer(U, answers(a1b1=WORKS, a4b1=WORKS))
    middle = found[(("a", "2"), ("b", "1"))]
    assert (middle.status, middle.evidence) == ("works", "inferred")
    assert "a 1 and 4 on either side agree" in middle.note
    assert found[(("a", "1"), ("b", "2"))].status == "untested", "no neighbour on one side"


def test_disagreeing_or_one_sided_neighbours_infer_nothing() -> None:
    found = infer(U, answers(a1b1=WORKS, a4b1=BREAKS))
    assert found[(("a", "2"), ("b", "1"))].status == "untested"
    found = infer(U, answers(a2b1=BREAKS, a4b1=BREAKS))
    assert found[(("a", "3"), ("b", "1"))].status == "breaks"
    assert found[(("a", "1"), ("b", "1"))].status == "untested", "outside the two ends"


def test_a_suspect_is_never_inferred() -> None:
    pair = (("a", "2"), ("b", "1"))
    assert infer(U, answers(a1b1=WORKS, a4b1=WORKS), {pair})[pair].status == "untested"


def test_inferred_answers_never_seed_inference() -> None:
    found = infer(U, answers(a1b1=WORKS, a3b1=Answer("works", "inferred"), a4b1=BREAKS))
    assert found[(("a", "2"), ("b", "1"))].status == "untested"
