"""Localisation and inference on generated universes with planted faults (per case,
versions broken alone and pairs, each version in at most one fault): after a run
every pair is works, breaks or conflict, each tested answer is the planted truth
(inferred ones are audited); cells stay near the lower bound."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from planted import Oracle, universe_of

from repromatrix.hunts.atlas.engine import advance
from repromatrix.hunts.atlas.state import CellRecord


@st.composite
def planted(draw, max_axes=4, max_size=6):
    sizes = draw(st.lists(st.integers(2, max_size), min_size=2, max_size=max_axes))
    universe = universe_of(sizes)
    values = [(p, v) for p, vs in universe.axes.items() for v in vs]
    pairs = sorted(universe.pairs())
    faults: dict[str, list[frozenset]] = {}
    for case in ("case_a.py::test_a", "case_b.py::test_b"):
        alone = draw(st.lists(st.sampled_from(values), max_size=2))
        two = draw(st.lists(st.sampled_from(pairs), max_size=3))
        # The fault model (knowledge.py): per case, a version fails alone or with one
        # partner; a version in two faults of one case would look broken alone.
        chosen: list[frozenset] = []
        for fault in [frozenset({v}) for v in alone] + [frozenset(p) for p in two]:
            if not any(fault & other for other in chosen):
                chosen.append(fault)
        faults[case] = chosen
    conflicts = frozenset(draw(st.lists(st.sampled_from(pairs), max_size=2)))
    return Oracle(universe, faults, conflicts)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted())
def test_every_pair_comes_out_as_planted(oracle: Oracle) -> None:
    assume(oracle.decidable() and oracle.unforced())
    universe = oracle.universe
    conflicts = {pair: "no solution" for pair in oracle.conflicts}
    outcome = advance(universe, [], conflicts, oracle, budget=10_000)
    holdable = oracle.holdable()
    assert all(a.status != "untested" for p, a in outcome.answers.items() if p in holdable), (
        "every pair a cell can hold is answered"
    )
    wrong = {
        pair: (answer, oracle.truth(pair))
        for pair, answer in outcome.answers.items()
        if answer.status != oracle.truth(pair) and (pair in holdable or pair in conflicts)
    }
    # What the cells show is the truth. An inferred answer may miss a pair broken in
    # the middle of an axis whose cells all failed for another reason (inference
    # assumes one flip per axis): the audit measures how often (test_inference.py).
    assert all(answer.evidence == "inferred" for answer, _ in wrong.values()), wrong
    for pair, answer in outcome.answers.items():
        if answer.status == "breaks" and answer.evidence == "tested":
            shown = [outcome.cells[i] for i in answer.cells]
            assert all(answer.case in c.cases and c.cases[answer.case] == "failed" for c in shown)
            assert all(set(pair) <= set(c.pins.items()) for c in shown)


@settings(max_examples=60, deadline=None)
@given(planted(max_axes=3, max_size=5))
def test_a_second_run_tests_nothing_whose_answer_stands(oracle: Oracle) -> None:
    universe = oracle.universe
    conflicts = {pair: "no solution" for pair in oracle.conflicts}
    first = advance(universe, [], conflicts, oracle, budget=10_000)
    ran = oracle.ran
    again = advance(universe, first.cells, conflicts, oracle, budget=10_000)
    assert oracle.ran == ran and again.planned == 0
    assert again.answers == first.answers


def test_a_failing_cell_alone_condemns_nobody() -> None:
    universe = universe_of([3, 3, 3])
    cell = CellRecord(
        pins={"pkg0": "1.1", "pkg1": "1.1", "pkg2": "1.1"},
        outcome="breaks",
        cases={"t.py::t": "failed"},
    )
    from repromatrix.hunts.atlas.answers import answers_of

    _, answers = answers_of(universe, [cell], {})
    assert {a.status for a in answers.values()} == {"untested"}


def test_a_two_way_break_is_localised_with_few_extra_cells() -> None:
    universe = universe_of([9, 7, 8])
    pair = (("pkg0", "1.4"), ("pkg2", "1.6"))
    oracle = Oracle(universe, {"t.py::t": [frozenset(pair)], "t.py::u": []})
    outcome = advance(universe, [], {}, oracle, budget=10_000)
    broken = {p for p, a in outcome.answers.items() if a.status == "breaks"}
    assert broken == {pair}
    assert outcome.answers[pair].evidence == "tested"
    assert outcome.planned <= 1.3 * universe.lower_bound()


def test_a_version_broken_alone_breaks_every_pair_of_it() -> None:
    universe = universe_of([9, 7, 8])
    bad = ("pkg0", "1.5")
    oracle = Oracle(universe, {"t.py::t": [frozenset({bad})]})
    outcome = advance(universe, [], {}, oracle, budget=10_000)
    broken = {p for p, a in outcome.answers.items() if a.status == "breaks"}
    assert broken == {p for p in universe.pairs() if bad in p}
    assert outcome.planned <= 1.3 * universe.lower_bound()


def test_the_budget_is_the_most_cells_a_run_tests() -> None:
    universe = universe_of([6, 5, 6])
    oracle = Oracle(universe, {"t.py::t": [frozenset({("pkg0", "1.2")})]})
    outcome = advance(universe, [], {}, oracle, budget=10)
    assert oracle.ran == outcome.planned == 10
