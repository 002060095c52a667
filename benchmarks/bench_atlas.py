"""The compatibility atlas's planner, localisation and queries on synthetic universes.

    PYTHONPATH=src python benchmarks/bench_atlas.py [--seeds 20] [--repeat 5]

Nothing is installed or run: cells are judged by planted faults (a version broken
alone or a pair broken, per case), as tests/hunts/atlas does. Measures, side by side
in one run:

- cells tested (covering array + localisation) against the pairwise lower bound (the
  product of the two largest axes) on 9 x 7 x 8 and 12 x 10 x 12 x 4 universes with
  two to four planted faults; goal <= 1.3x;
- the planner's time for 12 x 10 x 12 x 4 releases (strength 2, and 3 for scale);
  goal < 2 s;
- ``atlas query PKG==VER OTHER`` on a stored atlas of that size: in process, and as a
  command (a fresh interpreter, as a user types it); goal < 0.2 s.

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

from repromatrix.hunts.atlas.engine import advance  # noqa: E402
from repromatrix.hunts.atlas.planner import covering_cells  # noqa: E402
from repromatrix.hunts.atlas.query import query  # noqa: E402
from repromatrix.hunts.atlas.state import (  # noqa: E402
    AtlasState,
    CellRecord,
    Failure,
    write_state,
)
from repromatrix.hunts.atlas.universe import Universe  # noqa: E402
from repromatrix.hunts.atlas.view import load_view  # noqa: E402

GOAL_RATIO = 1.3
GOAL_PLANNER = 2.0
GOAL_QUERY = 0.2
SIZES = {"9x7x8": (9, 7, 8), "12x10x12x4": (12, 10, 12, 4)}


def universe_of(sizes: tuple[int, ...]) -> Universe:
    return Universe({f"pkg{i}": tuple(f"1.{v}" for v in range(n)) for i, n in enumerate(sizes)})


def planted(universe: Universe, rnd: random.Random) -> dict[str, list[frozenset]]:
    """Two to four faults over two cases; each version in at most one fault per case
    (the fault model, hunts/atlas/knowledge.py)."""
    values = [(p, v) for p, vs in universe.axes.items() for v in vs]
    pairs = sorted(universe.pairs())
    faults: dict[str, list[frozenset]] = {"a.py::t": [], "b.py::t": []}
    for _ in range(rnd.randint(2, 4)):
        case = rnd.choice(sorted(faults))
        fault = frozenset({rnd.choice(values)} if rnd.random() < 0.3 else rnd.choice(pairs))
        if not any(fault & other for other in faults[case]):
            faults[case].append(fault)
    return faults


def oracle(universe: Universe, faults: dict[str, list[frozenset]]):
    def run(planned):
        out = []
        for cell, why in planned:
            pins = universe.pins(cell)
            values = set(pins.items())
            cases = {
                c: "failed" if any(f <= values for f in fs) else "passed"
                for c, fs in faults.items()
            }
            failures = [Failure(c) for c, s in cases.items() if s == "failed"]
            outcome = "breaks" if failures else "works"
            out.append(CellRecord(pins, outcome, cases, failures, why))
        return out

    return run


def cells_against_bound(seeds: int) -> dict[str, dict]:
    out = {}
    for name, sizes in SIZES.items():
        universe = universe_of(sizes)
        ratios, wrong_inferred, rounds = [], 0, []
        for seed in range(seeds):
            faults = planted(universe, random.Random(seed))
            done = advance(universe, [], {}, oracle(universe, faults), budget=100_000)
            ratios.append(done.planned / universe.lower_bound())
            rounds.append(done.rounds)
            for pair, answer in done.answers.items():
                truth = any(f <= set(pair) for fs in faults.values() for f in fs)
                wrong_inferred += (
                    answer.evidence == "inferred" and (answer.status == "breaks") != truth
                )
        out[name] = {
            "lower_bound": universe.lower_bound(),
            "ratio_mean": round(statistics.mean(ratios), 3),
            "ratio_max": round(max(ratios), 3),
            "rounds_max": max(rounds),
            "wrong_inferred_answers": wrong_inferred,
            "seeds": seeds,
        }
    return out


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
    faults = planted(universe, random.Random(0))
    done = advance(universe, [], {}, oracle(universe, faults), budget=100_000)
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
        "planner_seconds_12x10x12x4": planner_seconds(args.repeat),
        "query_seconds": query_seconds(args.repeat),
        "goals": {"ratio": GOAL_RATIO, "planner_s": GOAL_PLANNER, "query_s": GOAL_QUERY},
    }
    out = ROOT / "benchmarks" / "results" / "atlas.json"
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
