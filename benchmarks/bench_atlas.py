"""The compatibility atlas's planner, localisation and queries on synthetic universes,
and the cost of the committed atlas of this repository (reports/atlas-cpu).

    PYTHONPATH=src python benchmarks/bench_atlas.py [--seeds 20] [--repeat 5]

Nothing is installed or run: cells are judged by planted faults, as tests/hunts/atlas
does: per case a release broken alone, pairs (of any two axes), a release that works
with exactly one partner, a non-monotone band, a three-way failure; each fault its
own signature, or one per case (``shared``). Measures, side by side in one run:

- cells tested (covering array + localisation + audit) against the pairwise lower
  bound (the product of the two largest axes) and against the goal, 1.3 times the
  bound plus three cells per broken pair; every answer against the planted truth
  (tested answers must never be wrong);
- the same for reports/atlas-cpu: its cells per run and its lower bound;
- the planner's time for 12 x 10 x 12 x 4 releases (strength 2, and 3 for scale);
  goal < 2 s;
- ``atlas query PKG==VER OTHER`` on a stored atlas of that size: in process, and as a
  command (a fresh interpreter, as a user types it); goal < 0.2 s over a bare start.

Writes benchmarks/results/atlas.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.hunts.atlas.engine import Budget, advance  # noqa: E402
from repromatrix.hunts.atlas.planner import covering_cells  # noqa: E402
from repromatrix.hunts.atlas.query import query  # noqa: E402
from repromatrix.hunts.atlas.state import (  # noqa: E402
    AtlasState,
    CaseRecord,
    CellRecord,
    write_state,
)
from repromatrix.hunts.atlas.universe import Universe  # noqa: E402
from repromatrix.hunts.atlas.view import load_view  # noqa: E402
from repromatrix.outcomes import AnswerStatus, CellOutcome, Evidence  # noqa: E402

GOAL_RATIO = 1.3
GOAL_PER_BROKEN = 3
GOAL_PLANNER = 2.0
GOAL_QUERY = 0.2
SIZES = {"9x7x8": (9, 7, 8), "12x10x12x4": (12, 10, 12, 4), "5x5x5 dense": (5, 5, 5)}


def universe_of(sizes: tuple[int, ...]) -> Universe:
    return Universe({f"pkg{i}": tuple(f"1.{v}" for v in range(n)) for i, n in enumerate(sizes)})


def planted(universe: Universe, rnd: random.Random, dense: bool) -> dict[str, list[frozenset]]:
    """Faults over two cases; each release in at most one fault of a case. ``dense``:
    every shape at once (a release alone, a pair of non-adjacent axes, a release
    with one working partner, a band, a triple)."""
    axes = universe.packages
    values = [(p, v) for p, vs in universe.axes.items() for v in vs]
    pairs = sorted(universe.pairs())
    faults: dict[str, list[frozenset]] = {"a.py::t": [], "b.py::t": []}

    def add(case: str, fault: frozenset) -> None:
        if not any(fault & other for other in faults[case]):
            faults[case].append(fault)

    if not dense:
        for _ in range(rnd.randint(2, 4)):
            case = rnd.choice(sorted(faults))
            add(case, frozenset({rnd.choice(values)} if rnd.random() < 0.3 else rnd.choice(pairs)))
        return faults
    x = (axes[0], rnd.choice(universe.axes[axes[0]]))
    keep = rnd.choice(universe.axes[axes[1]])
    for v in universe.axes[axes[1]]:  # x works beside exactly one release of axes[1]
        if v != keep:
            faults["a.py::t"].append(frozenset({x, (axes[1], v)}))
    far = (axes[0], rnd.choice([v for v in universe.axes[axes[0]] if v != x[1]]))
    add("b.py::t", frozenset({far, (axes[-1], rnd.choice(universe.axes[axes[-1]]))}))
    y = (axes[1], rnd.choice(universe.axes[axes[1]]))
    for i, v in enumerate(universe.axes[axes[-1]]):  # a band: every other release
        if i % 2:
            add("b.py::t", frozenset({y, (axes[-1], v)}))
    add("a.py::t", frozenset({rnd.choice(values)}))
    add("b.py::t", frozenset((p, rnd.choice(universe.axes[p])) for p in axes[:3]))
    return faults


def oracle(universe: Universe, faults: dict[str, list[frozenset]], shared: bool):
    def run(planned):
        out = []
        for item in planned:
            pins = universe.pins(item.cell)
            values = set(pins.items())
            cases = {}
            for case, found in faults.items():
                hit = next((f for f in found if f <= values), None)
                key = (f"one-{case}" if shared else repr(sorted(hit))) if hit else ""
                cases[case] = (
                    CaseRecord("failed", runs=3, signature=key[:60], cause=key[:60])
                    if hit
                    else CaseRecord("passed", passed=1)
                )
            failing = any(c.status == "failed" for c in cases.values())
            outcome = CellOutcome.BREAKS if failing else CellOutcome.WORKS
            out.append(CellRecord(pins, outcome, cases, item.why))
        return out

    return run


def truth(faults: dict[str, list[frozenset]], pair, case: str) -> str:
    return AnswerStatus.BREAKS if any(f <= set(pair) for f in faults[case]) else AnswerStatus.WORKS


def cells_against_bound(seeds: int) -> dict[str, dict]:
    out = {}
    for name, sizes in SIZES.items():
        universe = universe_of(sizes)
        dense = "dense" in name
        ratios, goal_ratios, rounds = [], [], []
        wrong = {Evidence.TESTED: 0, Evidence.INFERRED: 0}
        for seed in range(seeds):
            faults = planted(universe, random.Random(seed), dense)
            done = advance(
                universe,
                [],
                {},
                oracle(universe, faults, seed % 2 == 1),
                budget=Budget(100_000, 0.1),
            )
            broken = sum(
                1 for p in universe.pairs() if any(truth(faults, p, c) == "breaks" for c in faults)
            )
            ratios.append(done.planned / universe.lower_bound())
            goal_ratios.append(
                done.planned / (GOAL_RATIO * universe.lower_bound() + GOAL_PER_BROKEN * broken)
            )
            rounds.append(done.rounds)
            for pair, answer in done.answers.items():
                for case in answer.cases:
                    if case.status != truth(faults, pair, case.case):
                        how = (
                            Evidence.INFERRED
                            if case.evidence == Evidence.INFERRED
                            else Evidence.TESTED
                        )
                        wrong[how] += 1
        out[name] = {
            "lower_bound": universe.lower_bound(),
            "ratio_mean": round(statistics.mean(ratios), 3),
            "ratio_max": round(max(ratios), 3),
            "of_goal_mean": round(statistics.mean(goal_ratios), 3),
            "of_goal_max": round(max(goal_ratios), 3),
            "over_goal": sum(1 for r in goal_ratios if r > 1),
            "rounds_max": max(rounds),
            "wrong_tested_answers": wrong[Evidence.TESTED],
            "wrong_inferred_answers": wrong[Evidence.INFERRED],
            "seeds": seeds,
        }
    return out


def committed_atlas() -> dict:
    """reports/atlas-cpu: its cells per run against its lower bound, its answers."""
    folder = ROOT / "reports" / "atlas-cpu"
    if not (folder / "atlas.json").exists():
        return {}
    view = load_view(folder)
    by: dict[str, int] = {}
    for answer in view.answers.values():
        key = f"{answer.status}" + (f" ({answer.evidence})" if answer.evidence else "")
        by[key] = by.get(key, 0) + 1
    return {
        "lower_bound": view.universe.lower_bound(),
        "cells": len(view.state.cells),
        "runs": [r.cells for r in view.state.runs],
        "ratio": round(len(view.state.cells) / view.universe.lower_bound(), 3),
        "answers": dict(sorted(by.items())),
        "cell_seconds": round(sum(c.seconds for c in view.state.cells)),
    }


def planner_seconds(repeat: int) -> dict[str, float]:
    universe = universe_of(SIZES["12x10x12x4"])
    timings = {}
    for strength in (2, 3):
        best = float("inf")
        for _ in range(repeat if strength == 2 else 1):
            started = time.perf_counter()
            cells = covering_cells(universe, [], strength=strength)
            best = min(best, time.perf_counter() - started)
        timings[f"strength{strength}"] = round(best, 3)
        timings[f"strength{strength}_cells"] = len(cells)
    return timings


def query_seconds(repeat: int) -> dict[str, float]:
    """A stored atlas of 12 x 10 x 12 x 4 with every cell of a covering array."""
    universe = universe_of(SIZES["12x10x12x4"])
    faults = planted(universe, random.Random(0), dense=False)
    done = advance(universe, [], {}, oracle(universe, faults, False), budget=Budget(100_000))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        state = AtlasState(axes={p: list(v) for p, v in universe.axes.items()}, cells=done.cells)
        write_state(folder, state)
        inside = []
        for _ in range(repeat):
            started = time.perf_counter()
            query(load_view(folder), "pkg0==1.3", "pkg2")
            inside.append(time.perf_counter() - started)
        command = [sys.executable, "-m", "repromatrix", "atlas", "query", "pkg0==1.3", "pkg2",
                   "--json", "--out", str(folder)]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        outside = []
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env)
            outside.append(time.perf_counter() - started)
        bare = []
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - started)
    return {
        "cells": len(done.cells),
        "in_process": round(min(inside), 4),
        "command": round(min(outside), 3),
        "bare_interpreter": round(min(bare), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    figures = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "load_average": round(os.getloadavg()[0], 1),
        "cells_against_lower_bound": cells_against_bound(args.seeds),
        "reports_atlas_cpu": committed_atlas(),
        "planner_seconds_12x10x12x4": planner_seconds(args.repeat),
        "query_seconds": query_seconds(args.repeat),
        "goals": {
            "cells": f"{GOAL_RATIO} x lower bound + {GOAL_PER_BROKEN} per broken pair",
            "planner_s": GOAL_PLANNER,
            "query_s": GOAL_QUERY,
        },
    }
    out = ROOT / "benchmarks" / "results" / "atlas.json"
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
