"""k-section (--jobs N) against synthetic oracles: the same answer as the sequential
search, in at most ceil(log_{N+1} K) + 2 rounds when nothing is skipped."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.probe.observation import Observation
from repromatrix.search.bisection import (
    Find,
    ProbeOutcome,
    Status,
    ksection,
    most_rounds,
    rounds_left,
    search,
)

G, B, S = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP


class RoundOracle:
    """Answers a round from a fixed list of outcomes, keeping each round's candidates."""

    def __init__(self, outcomes: list[ProbeOutcome], jobs: int) -> None:
        self.outcomes = outcomes
        self.jobs = jobs
        self.rounds: list[list[int]] = []

    def __call__(self, batch: list[int]) -> list[Observation]:
        assert 1 <= len(batch) <= max(2, self.jobs), batch
        self.rounds.append(batch)
        return [Observation(self.outcomes[i]) for i in batch]


def sequential(outcomes: list[ProbeOutcome], find: Find):
    return search(list(range(len(outcomes))), lambda i: Observation(outcomes[i]), find)


def same_answer(one, other) -> bool:
    return (one.status, one.first, one.last, one.could_be_first, one.reason) == (
        other.status,
        other.first,
        other.last,
        other.could_be_first,
        other.reason,
    )


@pytest.mark.parametrize("jobs", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("n", [*range(2, 30), 64, 100, 129])
def test_monotone_ranges_within_the_round_bound(n: int, jobs: int) -> None:
    for first_bad in range(1, n):
        outcomes = [G] * first_bad + [B] * (n - first_bad)
        oracle = RoundOracle(outcomes, jobs)
        result = ksection(list(range(n)), oracle, Find.FIRST_BAD, jobs)
        assert result.status is Status.FOUND
        assert (result.first, result.last) == (first_bad, first_bad - 1)
        tested = [i for batch in oracle.rounds for i in batch]
        assert len(tested) == len(set(tested)), "a candidate was tested twice"
        assert len(oracle.rounds) == result.rounds
        assert result.rounds <= most_rounds(n, jobs), (n, jobs, first_bad, oracle.rounds)
        assert sorted(oracle.rounds[0][:2]) == [0, n - 1] or oracle.rounds[:2] == [[0], [n - 1]]


def test_more_jobs_need_fewer_rounds() -> None:
    n, worst = 60, {}
    for jobs in (1, 2, 4):
        worst[jobs] = max(
            ksection(
                list(range(n)), RoundOracle([G] * k + [B] * (n - k), jobs), Find.FIRST_BAD, jobs
            ).rounds
            for k in range(1, n)
        )
    assert worst[1] > worst[2] > worst[4]
    assert worst[2] <= math.ceil(math.log(n, 3)) + 2


outcome_lists = st.integers(min_value=2, max_value=80).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.integers(min_value=1, max_value=n - 1),
        st.lists(st.booleans(), min_size=n, max_size=n),  # which candidates are skipped
    )
)


@settings(max_examples=400, deadline=None)
@given(case=outcome_lists, jobs=st.integers(min_value=1, max_value=6), up=st.booleans())
def test_same_answer_as_sequential_with_skips(case, jobs: int, up: bool) -> None:
    n, flip, skipped = case
    find = Find.FIRST_BAD if up else Find.FIRST_GOOD
    old, new = find.old, find.new
    outcomes = [S if skip else (old if i < flip else new) for i, skip in enumerate(skipped)]
    expected = sequential(outcomes, find)
    got = ksection(list(range(n)), RoundOracle(outcomes, jobs), find, jobs)
    assert same_answer(got, expected), (outcomes, jobs, got, expected)
    if not any(skipped):
        assert got.rounds <= most_rounds(n, jobs)


@settings(max_examples=200, deadline=None)
@given(
    outcomes=st.lists(st.sampled_from([G, B, S]), min_size=2, max_size=40),
    jobs=st.integers(min_value=1, max_value=5),
)
def test_ends_mismatch_and_arbitrary_oracles_agree_on_the_status(outcomes, jobs) -> None:
    # Any oracle (not monotone): the ends are judged the same way; a found flip is a
    # real one (old just before new, nothing untested between).
    expected = sequential(outcomes, Find.FIRST_BAD)
    got = ksection(list(range(len(outcomes))), RoundOracle(outcomes, jobs), Find.FIRST_BAD, jobs)
    if expected.status is Status.ENDS_MISMATCH:
        assert got.status is Status.ENDS_MISMATCH and got.reason == expected.reason
    if got.status is Status.FOUND:
        assert outcomes[got.first] in (B, S) and outcomes[got.last] in (G, S)
        assert got.first == got.last + 1


def test_jobs_one_tests_what_the_sequential_search_tests() -> None:
    outcomes = [G] * 11 + [B] * 9
    calls: list[int] = []
    search(list(range(20)), lambda i: calls.append(i) or Observation(outcomes[i]), Find.FIRST_BAD)
    oracle = RoundOracle(outcomes, 1)
    ksection(list(range(20)), oracle, Find.FIRST_BAD, 1)
    assert [i for batch in oracle.rounds for i in batch] == calls


def answers(outcomes: list[ProbeOutcome]):
    return lambda i: Observation(outcomes[i])


def progress(run, *args) -> list[tuple[int, int]]:
    """(candidate, steps left at most) as a search's on_step reports them."""
    seen: list[tuple[int, int]] = []
    run(*args, on_step=lambda step, left: seen.append((step.candidate, left)))
    return seen


@pytest.mark.parametrize("n", [3, 9, 42, 100])
def test_progress_of_one_job_is_the_sequential_searchs(n: int) -> None:
    # What the command line prints after each step ("at most 6 more steps") counts
    # the stretch the step left, not the one it was picked from: transformers
    # 4.44.0 .. 4.56.2 (42 candidates) said "at most 6 more" after its third step.
    walk = list(range(n))
    for first_bad in range(1, n):
        outcomes = [G] * first_bad + [B] * (n - first_bad)
        expected = progress(search, walk, answers(outcomes), Find.FIRST_BAD)
        got = progress(ksection, walk, RoundOracle(outcomes, 1), Find.FIRST_BAD, 1)
        assert got == expected, first_bad


@pytest.mark.parametrize("jobs", [2, 3])
def test_progress_counts_the_stretch_each_round_left(jobs: int) -> None:
    n = 60
    for first_bad in range(1, n):
        outcomes = [G] * first_bad + [B] * (n - first_bad)
        oracle = RoundOracle(outcomes, jobs)
        announced = dict(progress(ksection, list(range(n)), oracle, Find.FIRST_BAD, jobs))
        tested: set[int] = set()
        for batch in oracle.rounds:
            tested.update(batch)
            lo = max(i for i in tested if outcomes[i] is G)
            hi = min(i for i in tested if outcomes[i] is B)
            left = sum(1 for i in range(lo + 1, hi) if i not in tested)
            assert {announced[i] for i in batch} == {rounds_left(left, jobs)}, batch
