"""The bounds engine with synthetic oracles (nothing installed): each shape of a wrong
range answered with its verdict and suggestion, judged beside a working set when the
newest allowed set is broken, in few cells; and what it says when it cannot tell."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from packaging.version import Version

from repromatrix.hunts.bounds.cellset import Cells, Seen
from repromatrix.hunts.bounds.engine import Floors, judge
from repromatrix.hunts.bounds.ranges import Dependency, split_releases
from repromatrix.outcomes import BoundVerdict, ProbeOutcome

V = Version
Rule = Callable[[Mapping[str, Version]], str | None]  # a set -> why it fails (None: works)


def dependency(name: str, specifier: str, releases: list[str]) -> Dependency:
    admitted, excluded = split_releases(specifier, [V(r) for r in releases])
    return Dependency(name, specifier, (f"{name}{specifier}",), admitted, excluded)


class Oracle:
    """Judges a set by ``rule``; counts and numbers the cells."""

    def __init__(self, rule: Rule, skip: Callable[[Mapping[str, Version]], bool] = lambda _: False):
        self.rule, self.skip, self.asked = rule, skip, []

    def __call__(self, versions: Mapping[str, Version], role: str) -> Seen:
        self.asked.append((dict(versions), role))
        if self.skip(versions):
            return Seen(ProbeOutcome.SKIP, "unresolvable: no", True, len(self.asked))
        why = self.rule(versions)
        outcome = ProbeOutcome.BAD if why else ProbeOutcome.GOOD
        return Seen(outcome, why or "", False, len(self.asked))


# Four dependencies of 4-6 releases: every shape of the issue at once.
SHAPES = [
    dependency("a", ">=1.0", ["1.0", "1.1", "1.2", "1.3", "1.4"]),  # floor too low (1.2)
    dependency("b", ">=2.0,<2.3", ["2.0", "2.1", "2.2", "2.3", "2.4", "2.5"]),  # cap too tight
    dependency("c", ">=3.0", ["3.0", "3.1", "3.2", "3.3", "3.4"]),  # newest breaks: no cap
    dependency("d", ">=4.0,<4.3", ["4.0", "4.1", "4.2", "4.3"]),  # right (4.3 breaks)
]


def shapes_rule(s: Mapping[str, Version]) -> str | None:
    if s["a"] < V("1.2"):
        return "a too old"
    if s["b"] >= V("2.5"):
        return "b 2.5 breaks"
    if s["c"] >= V("3.4"):
        return "c 3.4 breaks"
    if s["d"] >= V("4.3"):
        return "d 4.3 breaks"
    return None


def floors_of(dependencies: list[Dependency]) -> Floors:
    return Floors({d.name: d.admitted[0] for d in dependencies if d.admitted})


@pytest.mark.parametrize("jobs", [1, 3])
def test_every_shape_is_named_with_its_suggestion_in_about_twenty_cells(jobs: int) -> None:
    oracle = Oracle(shapes_rule)
    cells = Cells(oracle, jobs)
    judged = judge(SHAPES, cells, floors=floors_of(SHAPES))
    got = {a.dependency.name: (a.verdict, a.suggested) for a in judged.answers}
    assert got == {
        "a": (BoundVerdict.FLOOR_TOO_LOW, ">=1.2"),
        "b": (BoundVerdict.CEILING_TOO_TIGHT, ">=2.0,<2.5"),
        "c": (BoundVerdict.CEILING_MISSING, ">=3.0,<3.4"),
        "d": (BoundVerdict.OK, ">=4.0,<4.3"),
    }
    # The newest set (c 3.4) is broken: every end was judged beside one that works.
    assert judged.working == {"a": V("1.4"), "b": V("2.2"), "c": V("3.3"), "d": V("4.2")}
    a, b, c, d = judged.answers
    assert (a.floor.tested, a.floor.fails, a.floor.works) == (V("1.0"), V("1.1"), V("1.2"))
    assert (c.ceiling.tested, c.ceiling.works, c.ceiling.fails) == (V("3.4"), V("3.3"), V("3.4"))
    assert (b.ceiling.works, b.ceiling.fails) == (V("2.4"), V("2.5"))
    assert d.ceiling.reason == "4.3, the first release shut out, fails: the cap holds"
    # Each answer names cells that really show it: a floor that fails, then one that works.
    shown = {n: oracle.asked[n - 1][0] for n in a.floor.cells}
    assert any(s["a"] == V("1.0") and shapes_rule(s) for s in shown.values())
    assert any(s["a"] == V("1.2") and not shapes_rule(s) for s in shown.values())
    # Every cell run once, and few of them: the count the issue asks about.
    keys = [tuple(sorted(s.items())) for s, _ in oracle.asked]
    assert len(keys) == len(set(keys)) == cells.count
    assert cells.count <= 20


def test_a_right_range_costs_its_ends_only() -> None:
    dependencies = [
        dependency("x", ">=1.0,<2", ["0.9", "1.0", "1.5", "1.9", "2.0"]),
        dependency("y", ">=3", ["2.0", "3.0", "3.1", "3.2", "3.3"]),
    ]
    oracle = Oracle(lambda s: "x 2 breaks" if s["x"] >= V("2.0") else None)
    cells = Cells(oracle)
    judged = judge(dependencies, cells, floors=floors_of(dependencies))
    assert [a.verdict for a in judged.answers] == [BoundVerdict.OK, BoundVerdict.OK]
    # newest, all floors, each floor beside the newest, the one release x's cap shuts out
    assert cells.count == 5


def test_release_counts_do_not_grow_the_cells() -> None:
    """Ten times the releases: a few more bisect steps, not ten times the cells."""
    counts = []
    for releases in (6, 60):
        versions = [f"1.{i}" for i in range(releases)]
        dependencies = [dependency(n, ">=1.0", versions) for n in ("p", "q", "r")]
        low = V(versions[releases // 3])
        oracle = Oracle(lambda s, low=low: "p too old" if s["p"] < low else None)
        cells = Cells(oracle)
        judge(dependencies, cells, floors=floors_of(dependencies))
        counts.append(cells.count)
    assert counts[1] <= counts[0] + 6


def test_floors_that_only_fail_together() -> None:
    dependencies = [
        dependency("f", ">=1.0", ["1.0", "1.1", "1.2"]),
        dependency("g", ">=2.0", ["2.0", "2.1", "2.2"]),
        dependency("h", ">=3.0", ["3.0", "3.1"]),
    ]

    def rule(s: Mapping[str, Version]) -> str | None:
        return "f 1.0 with g 2.0" if (s["f"], s["g"]) == (V("1.0"), V("2.0")) else None

    judged = judge(dependencies, Cells(Oracle(rule)), floors=floors_of(dependencies))
    f, g, h = judged.answers
    assert (f.verdict, g.verdict, h.verdict) == (
        BoundVerdict.FLOORS_CONFLICT,
        BoundVerdict.FLOORS_CONFLICT,
        BoundVerdict.OK,
    )
    assert f.floor.together == ("g",) and g.floor.together == ("f",)
    assert f.suggested == ">=1.0", "no single range says it: the reason does"


def test_a_floor_uv_had_to_lift_is_a_conflict_of_floors() -> None:
    dependencies = [dependency("f", ">=1.0", ["1.0", "1.1"]), dependency("g", ">=2", ["2", "3"])]
    floors = Floors({"f": V("1.1"), "g": V("2")}, {"f": V("1.0")}, "g==2 depends on f>=1.1")
    judged = judge(dependencies, Cells(Oracle(lambda s: None)), floors=floors)
    assert judged.answers[0].verdict is BoundVerdict.FLOORS_CONFLICT
    assert "g==2 depends on f>=1.1" in judged.answers[0].floor.reason


def test_no_release_in_range_and_no_working_set_are_untestable_with_reasons() -> None:
    empty = Dependency("e", ">=9", ("e>=9",), reason="no release of e satisfies >=9")
    ok = dependency("o", ">=1", ["1", "2"])
    judged = judge([empty, ok], Cells(Oracle(lambda s: "always broken")))
    assert [a.verdict for a in judged.answers] == [BoundVerdict.UNTESTABLE] * 2
    assert judged.answers[0].floor.reason == "no release of e satisfies >=9"
    assert judged.answers[1].floor.reason.startswith("no set of the declared ranges")
    assert "newest: bad (always broken)" in judged.answers[1].floor.reason
    assert judged.working is None


def test_an_untestable_floor_is_said_not_guessed() -> None:
    dependencies = [dependency("u", ">=1.0", ["1.0", "1.1", "1.2"])]
    oracle = Oracle(lambda s: None, skip=lambda s: s["u"] == V("1.0"))
    judged = judge(dependencies, Cells(oracle), floors=Floors({"u": V("1.1")}))
    floor = judged.answers[0].floor
    assert floor.verdict is BoundVerdict.UNTESTABLE and "1.0 could not be tested" in floor.reason
    assert judged.answers[0].suggested == ">=1.0"


def test_a_search_through_untestable_releases_stops_and_says_so() -> None:
    versions = [f"1.{i}" for i in range(30)]
    dependencies = [dependency("s", ">=1.0", versions)]
    oracle = Oracle(
        lambda s: "too old" if s["s"] == V("1.0") else None,
        skip=lambda s: V("1.0") < s["s"] < V("1.25"),
    )
    cells = Cells(oracle)
    judged = judge(dependencies, cells, floors=Floors({"s": V("1.0")}), skip_budget=3)
    floor = judged.answers[0].floor
    assert floor.verdict is BoundVerdict.FLOOR_TOO_LOW
    assert floor.untested, "the releases it could not test are named"
    assert cells.count <= 2 + 3 + 1, "at most the skip budget of untestable cells"
