"""Localisation and inference on generated universes with planted faults (per case,
releases broken alone, pairs, triples; each with its own signature or one shared by
the case): after a run every pair a cell can hold is answered as planted; a tested
answer is never wrong; cells stay near the lower bound."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from planted import Oracle, universe_of

from repromatrix.hunts.atlas.answers import answers_of
from repromatrix.hunts.atlas.engine import Budget, advance
from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.rules import Rule
from repromatrix.hunts.atlas.state import CaseRecord, CellRecord
from repromatrix.outcomes import AnswerStatus, CellOutcome, Evidence

CASES = ("case_a.py::test_a", "case_b.py::test_b")
BIG = Budget(10_000, 0.1)


@st.composite
def planted(draw, max_axes=4, max_size=6):
    sizes = draw(st.lists(st.integers(2, max_size), min_size=2, max_size=max_axes))
    universe = universe_of(sizes)
    values = [(p, v) for p, vs in universe.axes.items() for v in vs]
    pairs = sorted(universe.pairs())
    faults: dict[str, list[frozenset]] = {}
    for case in CASES:
        alone = draw(st.lists(st.sampled_from(values), max_size=2))
        two = draw(st.lists(st.sampled_from(pairs), max_size=3))
        chosen: list[frozenset] = []
        for fault in [frozenset({v}) for v in alone] + [frozenset(p) for p in two]:
            if not any(fault & other for other in chosen):
                chosen.append(fault)
        faults[case] = chosen
    shared = draw(st.booleans())  # one signature for every fault of a case
    signatures = {f: f"one-{c}" for c, fs in faults.items() for f in fs} if shared else {}
    conflicts = frozenset(draw(st.lists(st.sampled_from(pairs), max_size=2)))
    return Oracle(universe, faults, conflicts, signatures=signatures)


def wrong_answers(oracle: Oracle, outcome) -> list:
    holdable = oracle.holdable()
    out = []
    for pair, answer in outcome.answers.items():
        if pair not in holdable and answer.status != AnswerStatus.CONFLICT:
            continue
        for case in answer.cases:
            if case.status != oracle.truth(pair, case.case):
                out.append((pair, case.case, case.status, case.evidence, case.rule))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted())
def test_every_pair_comes_out_as_planted(oracle: Oracle) -> None:
    assume(oracle.decidable())
    universe = oracle.universe
    conflicts = {pair: "no solution" for pair in oracle.conflicts}
    outcome = advance(universe, [], conflicts, oracle, budget=BIG)
    assert wrong_answers(oracle, outcome) == []
    for answer in outcome.answers.values():
        for case in answer.cases:
            if case.status == AnswerStatus.BREAKS and case.evidence == Evidence.TESTED:
                shown = [outcome.cells[i] for i in case.cells]
                assert all(c.cases[case.case].status == "failed" for c in shown)
                assert all(c.cases[case.case].signature == case.cause for c in shown)


@settings(max_examples=40, deadline=None)
@given(planted(max_axes=3, max_size=5))
def test_a_second_run_tests_nothing_whose_answer_stands(oracle: Oracle) -> None:
    universe = oracle.universe
    conflicts = {pair: "no solution" for pair in oracle.conflicts}
    first = advance(universe, [], conflicts, oracle, budget=Budget(10_000))
    ran = oracle.ran
    again = advance(universe, first.cells, conflicts, oracle, budget=Budget(10_000))
    assert oracle.ran == ran and again.planned == 0
    assert again.answers == first.answers


def test_a_failing_cell_alone_condemns_nobody() -> None:
    universe = universe_of([3, 3, 3])
    cell = CellRecord(
        pins={"pkg0": "1.1", "pkg1": "1.1", "pkg2": "1.1"},
        outcome=CellOutcome.BREAKS,
        cases={"t.py::t": CaseRecord("failed", runs=3, signature="abc")},
    )
    _, answers = answers_of(universe, [cell], {})
    assert {a.status for a in answers.values()} == {AnswerStatus.UNTESTED}


def test_a_two_way_break_is_confirmed_with_other_partners() -> None:
    universe = universe_of([9, 7, 8])
    pair = (("pkg0", "1.4"), ("pkg2", "1.6"))
    oracle = Oracle(universe, {"t.py::t": [frozenset(pair)], "t.py::u": []})
    outcome = advance(universe, [], {}, oracle, budget=BIG)
    broken = {p for p, a in outcome.answers.items() if a.status == AnswerStatus.BREAKS}
    assert broken == {pair}
    answer = outcome.answers[pair]
    assert (answer.evidence, answer.rule) == (Evidence.TESTED, Rule.PAIR)
    first, second = (universe.cell(outcome.cells[i].pins) for i in answer.cells)
    assert first[1] != second[1], "the second cell has another pkg1"
    assert outcome.planned <= 1.3 * universe.lower_bound() + 3


def test_a_release_broken_alone_is_tested_only_where_tried() -> None:
    universe = universe_of([9, 7, 8])
    bad = ("pkg0", "1.5")
    oracle = Oracle(universe, {"t.py::t": [frozenset({bad})]})
    outcome = advance(universe, [], {}, oracle, budget=Budget(10_000))
    broken = {p for p, a in outcome.answers.items() if a.status == AnswerStatus.BREAKS}
    assert broken == {p for p in universe.pairs() if bad in p}
    for pair in broken:
        answer = outcome.answers[pair]
        assert answer.alone == bad and answer.rule is Rule.ALONE
        assert "pkg0 1.5 fails with every partner tried" in answer.note
        tried = [
            outcome.cells[i]
            for i in answer.cells
            if set(pair) <= set(outcome.cells[i].pins.items())
        ]
        assert (answer.evidence == Evidence.TESTED) == bool(tried)
    assert outcome.planned <= 1.3 * universe.lower_bound() + 3 * len(broken)


def test_untried_pairs_of_a_release_broken_alone_are_inferred() -> None:
    """Before localisation tries them, a release judged alone answers its other pairs
    by that rule, inferred, never tested."""
    universe = universe_of([3, 4, 4])
    bad = ("pkg0", "1.1")
    cells = []
    for b, c in (
        ("1.0", "1.0"),
        ("1.1", "1.1"),
        ("1.2", "1.2"),
        ("1.3", "1.3"),
        ("1.0", "1.1"),
        ("1.1", "1.0"),
    ):
        for a in ("1.0", "1.2"):
            cells.append(CellRecord({"pkg0": a, "pkg1": b, "pkg2": c}, CellOutcome.WORKS,
                                    {"t": CaseRecord("passed", passed=1)}))  # fmt: skip
    for b, c in (("1.0", "1.1"), ("1.1", "1.0")):
        cells.append(CellRecord({"pkg0": "1.1", "pkg1": b, "pkg2": c}, CellOutcome.BREAKS,
                                {"t": CaseRecord("failed", runs=3, signature="s")}))  # fmt: skip
    _, answers = answers_of(universe, cells, {})
    tried = answers[(bad, ("pkg1", "1.0"))]
    untried = answers[(bad, ("pkg1", "1.3"))]
    assert (tried.status, tried.evidence) == (AnswerStatus.BREAKS, Evidence.TESTED)
    assert (untried.status, untried.evidence) == (AnswerStatus.BREAKS, Evidence.INFERRED)
    assert untried.note == "pkg0 1.1 fails with every partner tried (2 cells)"


def test_a_release_that_works_with_exactly_one_partner() -> None:
    universe = universe_of([5, 6, 5])
    x = ("pkg0", "1.2")
    faults = [frozenset({x, ("pkg1", v)}) for v in universe.axes["pkg1"] if v != "1.3"]
    oracle = Oracle(universe, {"t": faults}, signatures={f: "same" for f in faults})
    outcome = advance(universe, [], {}, oracle, budget=BIG)
    assert wrong_answers(oracle, outcome) == []
    assert outcome.answers[(x, ("pkg1", "1.3"))].status == AnswerStatus.WORKS


def test_a_three_way_failure_is_reported_and_its_pairs_work() -> None:
    universe = universe_of([4, 4, 4])
    triple = frozenset({("pkg0", "1.1"), ("pkg1", "1.2"), ("pkg2", "1.3")})
    oracle = Oracle(universe, {"t": [triple]})
    cells = [
        CellRecord(universe.pins(("1.1", "1.2", "1.3")), CellOutcome.BREAKS,
                   {"t": CaseRecord("failed", runs=3, signature="tri")}),
    ]  # fmt: skip
    outcome = advance(universe, cells, {}, oracle, budget=BIG)
    know = outcome.knowledge.cases["t"]
    assert [set(h.values) for h in know.higher] == [set(triple)]
    for pair in [(a, b) for a in triple for b in triple if a[0] < b[0]]:
        answer = outcome.answers[pair]
        assert answer.status == AnswerStatus.WORKS and "three-way" in answer.note


def test_a_failure_of_another_cause_neither_clears_nor_condemns() -> None:
    universe = universe_of([3, 3, 3])
    one = CellRecord(universe.pins(("1.0", "1.0", "1.0")), CellOutcome.BREAKS,
                     {"t": CaseRecord("failed", runs=3, signature="first")})  # fmt: skip
    other = CellRecord(universe.pins(("1.0", "1.1", "1.1")), CellOutcome.BREAKS,
                       {"t": CaseRecord("failed", runs=3, signature="second")})  # fmt: skip
    know, _ = answers_of(universe, [one, other], {})
    case = know.cases["t"]
    assert not case.cleared_values and set(case.failing) == {"first", "second"}
    assert not case.alone and not case.pairs


def test_flaky_is_rerun_and_never_works() -> None:
    universe = universe_of([3, 3])
    flaky = frozenset({("pkg0", "1.1")})
    oracle = Oracle(universe, {"t": []}, flaky={"t": [flaky]})
    outcome = advance(universe, [], {}, oracle, budget=BIG)
    reruns = [c for c in outcome.cells if c.reason.startswith("rerun:")]
    assert reruns, "a cell that failed and passed is run again"
    answer = outcome.answers[(("pkg0", "1.1"), ("pkg1", "1.0"))]
    assert answer.runs > answer.passed or answer.status == AnswerStatus.WORKS
    assert all(
        a.status != AnswerStatus.FLAKY or a.passed < a.runs for a in outcome.answers.values()
    )


def test_only_flaky_evidence_is_flaky_with_run_counts() -> None:
    universe = universe_of([2, 2])
    cells = [
        CellRecord(universe.pins(("1.0", "1.0")), CellOutcome.FLAKY,
                   {"t": CaseRecord("flaky", runs=2, passed=1)}),
    ]  # fmt: skip
    _, answers = answers_of(universe, cells, {})
    answer = answers[(("pkg0", "1.0"), ("pkg1", "1.0"))]
    assert (answer.status, answer.passed, answer.runs) == (AnswerStatus.FLAKY, 1, 2)


def test_the_budget_is_the_most_cells_a_run_tests() -> None:
    universe = universe_of([6, 5, 6])
    oracle = Oracle(universe, {"t.py::t": [frozenset({("pkg0", "1.2")})]})
    outcome = advance(universe, [], {}, oracle, budget=Budget(10))
    assert oracle.ran == outcome.planned == 10


def test_the_audit_retests_an_inferred_answer_and_says_how_it_came_out() -> None:
    """A night short of cells: the audit's share re-tests the weakest inferred answer
    (here one that the planted band makes wrong), and says so by kind."""
    universe = universe_of([5, 2])
    band = frozenset({("pkg0", "1.2"), ("pkg1", "1.0")})
    oracle = Oracle(universe, {"t": [band]})
    ends = [Planned(cell, "seed") for cell in (("1.0", "1.0"), ("1.4", "1.0"), ("1.0", "1.1"))]
    cells = oracle(ends)
    outcome = advance(universe, cells, {}, oracle, budget=Budget(1, 1.0))
    [audited] = [c for c in outcome.cells if c.reason.startswith("audit:")]
    assert "inferred works (neighbours)" in audited.reason
    [audit] = outcome.audits
    assert (audit.kind, audit.inferred) == ("NEIGHBOURS", "works")
    assert audit.found in ("works", "breaks")
    answer = outcome.answers[universe.key(*universe.pins(universe.cell(audited.pins)).items())]
    assert answer.evidence in (Evidence.AUDITED, Evidence.TESTED)
