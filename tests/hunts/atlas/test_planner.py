"""The covering array (planner.py): every installable pair (triple) in a cell, seeded
with the cells already tested, conflicts left out; a new release costs about the
largest other axis."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from planted import universe_of

from repromatrix.hunts.atlas.planner import covering_cells

sizes = st.lists(st.integers(1, 6), min_size=2, max_size=4)


def covered(universe, cells, strength=2):
    found = set()
    for cell in cells:
        values = list(zip(universe.packages, cell, strict=True))
        found.update(itertools.combinations(values, strength))
    return found


def every(universe, strength=2):
    axes = [[(p, v) for v in vs] for p, vs in universe.axes.items()]
    return {
        combo
        for group in itertools.combinations(axes, strength)
        for combo in itertools.product(*group)
    }


@settings(max_examples=60, deadline=None)
@given(sizes, st.data())
def test_every_installable_pair_is_covered_and_no_conflict_planned(sizes, data) -> None:
    universe = universe_of(sizes)
    pairs = sorted(universe.pairs())
    conflicts = set(data.draw(st.lists(st.sampled_from(pairs), max_size=len(pairs) // 3)))
    cells = covering_cells(universe, [], conflicts=conflicts)
    assert len(set(cells)) == len(cells)
    valid = [
        cell
        for cell in itertools.product(*universe.axes.values())
        if not set(universe.pairs_of(cell)) & conflicts
    ]
    assert covered(universe, cells) == covered(universe, valid), "every pair a cell can hold"
    assert not covered(universe, cells) & conflicts, "a conflict is never planned"


@settings(max_examples=40, deadline=None)
@given(sizes, st.data())
def test_seeded_with_tested_cells_plans_only_what_is_missing(sizes, data) -> None:
    universe = universe_of(sizes)
    first = covering_cells(universe, [])
    kept = data.draw(st.lists(st.sampled_from(first), unique=True))
    more = covering_cells(universe, kept)
    assert not set(more) & set(kept), "a tested cell is never planned again"
    assert covered(universe, kept + more) == every(universe)
    assert covering_cells(universe, first) == [], "nothing left: nothing planned"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(2, 8), min_size=3, max_size=4))
def test_a_new_release_costs_about_the_largest_other_axis(sizes) -> None:
    universe = universe_of(sizes)
    before = covering_cells(universe, [])
    grown = universe_of([sizes[0] + 1, *sizes[1:]])
    added = covering_cells(grown, before)
    largest_other = max(sizes[1:])
    assert largest_other <= len(added) <= largest_other + 2
    assert all(cell[0] == f"1.{sizes[0]}" for cell in added[:largest_other])


def test_strength_three_covers_every_triple() -> None:
    universe = universe_of([3, 3, 4, 2])
    cells = covering_cells(universe, [], strength=3)
    assert covered(universe, cells, 3) == every(universe, 3)
    assert len(cells) < 3 * 3 * 4 * 2


def test_the_lower_bound_is_the_two_largest_axes() -> None:
    universe = universe_of([12, 10, 12, 4])
    assert universe.lower_bound() == 144
    assert len(covering_cells(universe, [])) <= 1.1 * 144
