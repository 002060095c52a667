"""The bisect search against synthetic oracles: no environments, only the logic."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from repromatrix.probe.observation import Observation
from repromatrix.search.bisection import (
    Find,
    ProbeOutcome,
    Status,
    most_steps_left,
    search,
    walk_between,
)

G, B, S = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP


class Oracle:
    """Answers from a fixed list of outcomes, counting the calls."""

    def __init__(self, outcomes: list[ProbeOutcome]) -> None:
        self.outcomes = outcomes
        self.calls: list[int] = []

    def __call__(self, i: int) -> Observation:
        self.calls.append(i)
        return Observation(self.outcomes[i], detail=f"exit {self.outcomes[i].value}")


def bound(n: int) -> int:
    return math.ceil(math.log2(n)) + 2


def monotone(n: int, first_bad: int) -> list[ProbeOutcome]:
    return [G] * first_bad + [B] * (n - first_bad)


def with_skips(n: int, first_bad: int, *untestable: int) -> list[ProbeOutcome]:
    """monotone(n, first_bad) with the UNTESTABLE candidates skipped."""
    outcomes = monotone(n, first_bad)
    for i in untestable:
        outcomes[i] = S
    return outcomes


def first_bad_in(outcomes: list[ProbeOutcome]):
    """The search for the first bad one of candidates 0..n-1 with these OUTCOMES."""
    return search(list(range(len(outcomes))), Oracle(outcomes), Find.FIRST_BAD)


@pytest.mark.parametrize("n", [*range(2, 40), 64, 65, 100, 129])
def test_monotone_ranges_find_the_flip_within_the_bound(n: int) -> None:
    for first_bad in range(1, n):  # the good end is good, the bad end bad
        oracle = Oracle(monotone(n, first_bad))
        result = search(list(range(n)), oracle, Find.FIRST_BAD)
        assert result.status is Status.FOUND
        assert (result.first, result.last) == (first_bad, first_bad - 1)
        assert len(oracle.calls) == len(set(oracle.calls)), "a candidate was tested twice"
        assert len(oracle.calls) <= bound(n), (n, first_bad, oracle.calls)
        assert oracle.calls[:2] == [0, n - 1], "both ends are checked first"


def test_the_bound_is_reached_not_beaten_by_luck() -> None:
    # The worst case over all flip positions uses exactly ceil(log2(N - 1)) + 2 tests.
    n = 36
    worst = 0
    for k in range(1, n):
        oracle = Oracle(monotone(n, k))
        search(list(range(n)), oracle, Find.FIRST_BAD)
        worst = max(worst, len(oracle.calls))
    assert worst == math.ceil(math.log2(n - 1)) + 2


def test_two_candidates_are_only_the_ends() -> None:
    oracle = Oracle([G, B])
    result = search(
        ["4.52.4", "4.53.0"], lambda v: oracle(["4.52.4", "4.53.0"].index(v)), Find.FIRST_BAD
    )
    assert (result.status, result.first, result.last) == (Status.FOUND, "4.53.0", "4.52.4")
    assert len(result.steps) == 2


def test_first_good_mode_finds_the_fix() -> None:
    # Broken up to index 5, fixed from 6 on: walking from the bad end.
    outcomes = [B] * 6 + [G] * 4
    oracle = Oracle(outcomes)
    result = search(list(range(10)), oracle, Find.FIRST_GOOD)
    assert (result.status, result.first, result.last) == (Status.FOUND, 6, 5)
    assert [s.role for s in result.steps[:2]] == ["bad end", "good end"]
    assert len(oracle.calls) <= bound(10)


def test_flipped_ends_walk_down_in_version() -> None:
    versions = ["4.50.0", "4.51.0", "4.52.0", "4.53.0", "4.54.0"]
    # first-bad with the good end newer: the walk goes down from the good end.
    walk = walk_between(versions, good="4.54.0", bad="4.50.0", find=Find.FIRST_BAD)
    assert walk == ["4.54.0", "4.53.0", "4.52.0", "4.51.0", "4.50.0"]
    # Good from 4.52.0 on (a fix in 4.52.0): going down, 4.51.0 is the first bad.
    truth = {"4.50.0": B, "4.51.0": B, "4.52.0": G, "4.53.0": G, "4.54.0": G}
    result = search(walk, lambda v: Observation(truth[v]), Find.FIRST_BAD)
    assert (result.first, result.last) == ("4.51.0", "4.52.0")
    # first-good with the good end older: from the bad end down, the newest good one.
    walk = walk_between(versions, good="4.50.0", bad="4.54.0", find=Find.FIRST_GOOD)
    assert walk[0] == "4.54.0" and walk[-1] == "4.50.0"
    truth = {"4.50.0": G, "4.51.0": G, "4.52.0": G, "4.53.0": B, "4.54.0": B}
    result = search(walk, lambda v: Observation(truth[v]), Find.FIRST_GOOD)
    assert (result.first, result.last) == ("4.52.0", "4.53.0")


def test_ends_that_do_not_behave_as_claimed_stop_the_search() -> None:
    oracle = Oracle([B, B, B, B, B])
    result = search(list(range(5)), oracle, Find.FIRST_BAD)
    assert result.status is Status.ENDS_MISMATCH
    assert oracle.calls == [0, 4], "both ends are tested, then nothing else"
    assert "good end 0 was bad (exit bad)" in result.reason
    assert "bad end 4 was bad" in result.reason
    assert result.first is None

    oracle = Oracle([G, G, G])  # the bad end is good
    result = search(list(range(3)), oracle, Find.FIRST_BAD)
    assert result.status is Status.ENDS_MISMATCH
    assert "bad end 2 was good" in result.reason


def test_a_skip_in_the_middle_is_stepped_around() -> None:
    outcomes = monotone(17, 11)
    outcomes[8] = S  # the first midpoint cannot be installed
    oracle = Oracle(outcomes)
    result = search(list(range(17)), oracle, Find.FIRST_BAD)
    assert (result.status, result.first, result.last) == (Status.FOUND, 11, 10)
    assert oracle.calls[2] == 8
    assert oracle.calls[3] in (7, 9), "the nearest untested neighbour is tried next"
    assert len(oracle.calls) <= bound(17) + 1  # one skip costs at most one more test


def test_skips_next_to_the_flip_give_the_set_of_possible_firsts() -> None:
    # 10 good, 11 and 12 cannot be installed, 13 bad: first bad is one of 11, 12, 13.
    result = first_bad_in(with_skips(20, 12, 11, 12))
    assert result.status is Status.INCONCLUSIVE
    assert result.could_be_first == [11, 12, 13]
    assert result.first is None
    assert "could not test 11, 12" in result.reason


def test_an_untestable_good_end_is_taken_as_claimed_but_not_as_evidence() -> None:
    result = first_bad_in(with_skips(9, 5, 0))
    assert (result.status, result.first, result.last) == (Status.FOUND, 5, 4)

    result = first_bad_in(with_skips(9, 1, 0))  # the flip is right after the untestable end
    assert result.status is Status.INCONCLUSIVE
    assert result.could_be_first == [1]
    assert "the good end 0 could not be tested" in result.reason


def test_an_untestable_bad_end() -> None:
    result = first_bad_in(with_skips(9, 3, 8))
    assert (result.status, result.first, result.last) == (Status.FOUND, 3, 2)

    outcomes = [G] * 8 + [S]  # every testable candidate is good
    result = first_bad_in(outcomes)
    assert result.status is Status.INCONCLUSIVE
    assert result.could_be_first == [8]
    assert "the bad end 8 could not be tested" in result.reason


def test_all_skipped() -> None:
    oracle = Oracle([S] * 7)
    result = search(list(range(7)), oracle, Find.FIRST_BAD)
    assert result.status is Status.INCONCLUSIVE
    assert sorted(oracle.calls) == list(range(7)), "every candidate was tried once"
    assert result.could_be_first == [1, 2, 3, 4, 5, 6]
    assert "could not be tested" in result.reason


@pytest.mark.parametrize("seed", range(300))
def test_random_skips_never_give_a_wrong_answer(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 60)
    flip = rng.randint(1, n - 1)
    truth = monotone(n, flip)
    outcomes = [S if rng.random() < 0.3 else o for o in truth]
    find = rng.choice(list(Find))
    if find is Find.FIRST_GOOD:
        truth = [G if o is B else B for o in truth]
        outcomes = [G if o is B else B if o is G else S for o in outcomes]
    oracle = Oracle(outcomes)
    result = search(list(range(n)), oracle, find)
    skips = outcomes.count(S)
    assert len(oracle.calls) == len(set(oracle.calls))
    assert len(oracle.calls) <= bound(n) + skips
    if result.status is Status.FOUND:
        assert (result.first, result.last) == (flip, flip - 1)
        assert outcomes[flip] is not S and outcomes[flip - 1] is not S
    else:
        assert result.status is Status.INCONCLUSIVE
        assert flip in result.could_be_first
        assert result.could_be_first == list(
            range(result.could_be_first[0], result.could_be_first[-1] + 1)
        )
        assert all(outcomes[i] is S for i in result.could_be_first[:-1])


def test_progress_reports_the_steps_left_at_most() -> None:
    n = 33
    seen: list[tuple[int, int]] = []
    result = search(
        list(range(n)),
        Oracle(monotone(n, 20)),
        Find.FIRST_BAD,
        on_step=lambda step, left: seen.append((step.candidate, left)),
    )
    lefts = [left for _, left in seen]
    assert lefts[0] == 1 + most_steps_left(n - 2)
    assert lefts[-1] == 0
    assert all(a >= b for a, b in itertools.pairwise(lefts)), lefts
    # Each promise holds: the steps that followed never exceed what was announced.
    for position, (_, left) in enumerate(seen):
        assert len(seen) - position - 1 <= left
    assert len(result.steps) == len(seen)


def test_a_single_candidate_is_refused() -> None:
    with pytest.raises(ValueError):
        search([1], Oracle([G]), Find.FIRST_BAD)
