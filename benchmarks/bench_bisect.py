"""Benchmark: a real bisect over about 35 transformers releases on CPU, with
--jobs 1 and --jobs 2 side by side.

    python benchmarks/bench_bisect.py [--runs 2] [--jobs 1 2] [--env-dir DIR]

Bisects transformers 4.50.0 (bad) .. 5.3.0 (good), 36 releases, with torch==2.13.0
pinned and examples/bisect/checkpointing_gradients.py as the oracle (a real change:
gradient_checkpointing_enable() stopped defaulting to reentrant checkpointing in
5.0.0). Expected answer: first good 5.0.0, last bad 4.57.6.

Each run does the bisect once per --jobs value, one after the other (k-section
with N candidates a round; jobs 1 is the sequential search). Wall time, steps,
rounds and per-step seconds (and whether each step's environment was reused) go
to benchmarks/results/bisect.json, with the ratio of each jobs value to jobs 1.
Goals, warm: under 4 minutes; --jobs 2 at most 0.75 of --jobs 1. The first run on
a machine builds the environments (uv cache), so run with --runs 2 and read the
second run for the warm figures.
Needs PyPI and torch 2.13.0 through the user's pip configuration (PIP_FIND_LINKS).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.hunts.bisect.run import BISECT, BisectOptions  # noqa: E402
from repromatrix.hunts.hunt import run_hunt  # noqa: E402
from repromatrix.matrix.cell import CellSpec  # noqa: E402
from repromatrix.matrix.pins import parse_pin_option  # noqa: E402
from repromatrix.probe.prober import CellProber  # noqa: E402
from repromatrix.probe.spec import Probe  # noqa: E402
from repromatrix.results import write_json_atomic  # noqa: E402
from repromatrix.search.bisection import Find  # noqa: E402

PACKAGE, BAD, GOOD = "transformers", "4.50.0", "5.3.0"
EXPECTED = ("5.0.0", "4.57.6")  # first good, last bad
GOAL_SECONDS = 240.0
GOAL_JOBS2_RATIO = 0.75
SCRIPT = ROOT / "examples" / "bisect" / "checkpointing_gradients.py"
RESULTS = ROOT / "benchmarks" / "results" / "bisect.json"


def one_run(env_dir: Path | None, out: Path, jobs: int = 1) -> dict:
    options = BisectOptions(
        package=PACKAGE,
        good=GOOD,
        bad=BAD,
        find=Find.FIRST_GOOD,
        probe=Probe(script=SCRIPT),
        cell=CellSpec(pins=(parse_pin_option("torch==2.13.0"),)),
        out=out / f"jobs{jobs}",
        jobs=jobs,
    )
    started = time.monotonic()
    record, code = run_hunt(BISECT, options, CellProber(env_dir=env_dir))
    wall = time.monotonic() - started
    return {
        "jobs": jobs,
        "wall_seconds": round(wall, 1),
        "steps": len(record.steps),
        "rounds": record.rounds,
        "candidates": len(record.candidates),
        "exit": code,
        "answer": [record.first_good, record.last_bad],
        "correct": (record.first_good, record.last_bad) == EXPECTED,
        "warm": all(step.reused for step in record.steps),
        "under_goal": wall < GOAL_SECONDS,
        "per_step": [
            {
                "version": s.version,
                "round": s.round,
                "outcome": s.outcome,
                "seconds": s.seconds,
                "environment_seconds": s.build_seconds,
                "environment_reused": s.reused,
            }
            for s in record.steps
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs in a row (default: 1)")
    parser.add_argument("--env-dir", type=Path, help="environment store (default: the user's)")
    parser.add_argument(
        "--jobs", type=int, nargs="+", default=[1, 2], help="jobs values (default: 1 2)"
    )
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-bisect-") as folder:
        for number in range(1, args.runs + 1):
            for jobs in args.jobs:
                print(f"run {number}/{args.runs}, --jobs {jobs}", file=sys.stderr)
                runs.append({"run": number, **one_run(args.env_dir, Path(folder), jobs)})
    last = [r for r in runs if r["run"] == args.runs]
    base = next((r["wall_seconds"] for r in last if r["jobs"] == 1), None)
    ratios = {
        f"jobs{r['jobs']}_over_jobs1": round(r["wall_seconds"] / base, 2)
        for r in last
        if base and r["jobs"] != 1
    }
    document = {
        "benchmark": "bisect",
        "what": f"{PACKAGE} {BAD} (bad) .. {GOOD} (good), find first-good, torch==2.13.0, "
        f"script {SCRIPT.relative_to(ROOT)}",
        "goal_seconds_warm": GOAL_SECONDS,
        "goal_jobs2_over_jobs1": GOAL_JOBS2_RATIO,
        "ratios_last_run": ratios,
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "runs": runs,
    }
    write_json_atomic(RESULTS, document)
    for run in runs:
        print(
            f"run {run['run']} --jobs {run['jobs']}: {run['wall_seconds']:.0f}s, "
            f"{run['steps']} steps in {run['rounds']} rounds over {run['candidates']} "
            f"candidates, warm={run['warm']}, correct={run['correct']}"
        )
    print(f"ratios (last run): {ratios}")
    return 0 if all(r["correct"] for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
