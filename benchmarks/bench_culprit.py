"""Benchmark: a real culprit hunt between two locks far apart, on CPU.

    python benchmarks/bench_culprit.py [--runs 1] [--env-dir DIR]

The locks are examples/culprit/lock-2025-06-01.txt and lock-2026-11-23.txt:
``uv pip compile`` of torch==2.13.0+cpu, transformers, peft and accelerate with
``--exclude-newer 2025-06-01`` and as of 2026-11-23 (41 packages differ: 20 in
version, 21 added or removed). The probe, examples/culprit/tf_classes.py, imports
``TFAutoModel``, which transformers 5.0 removed with TensorFlow support. Expected:
the culprit is transformers, first bad release 5.0.0 (last good 4.57.6).

Records the cell runs of the search (and the bound 2*ceil(log2(changes)) + 2 it is
held to with one culprit and no conflicts), the resolver-only attempts, the release
bisect's steps and the wall time in benchmarks/results/culprit.json.
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

from repromatrix.hunts.culprit.locks import read_lock  # noqa: E402
from repromatrix.hunts.culprit.run import CULPRIT, CulpritOptions  # noqa: E402
from repromatrix.hunts.hunt import run_hunt  # noqa: E402
from repromatrix.probe.prober import CellProber  # noqa: E402
from repromatrix.probe.spec import Probe  # noqa: E402
from repromatrix.results import write_json_atomic  # noqa: E402

EXAMPLES = ROOT / "examples" / "culprit"
GOOD, BAD = EXAMPLES / "lock-2025-06-01.txt", EXAMPLES / "lock-2026-11-23.txt"
SCRIPT = EXAMPLES / "tf_classes.py"
EXPECTED = ("transformers", "4.52.4", "5.0.0")
RESULTS = ROOT / "benchmarks" / "results" / "culprit.json"


def one_run(env_dir: Path | None, out: Path) -> dict:
    options = CulpritOptions(
        good=read_lock(GOOD),
        bad=read_lock(BAD),
        probe=Probe(script=SCRIPT),
        out=out,
    )
    started = time.monotonic()
    record, code = run_hunt(CULPRIT, options, CellProber(env_dir=env_dir))
    wall = time.monotonic() - started
    culprits = [(c["package"], c["good"], c["bad"]) for c in record.culprits]
    return {
        "wall_seconds": round(wall, 1),
        "exit": code,
        "verdict": record.verdict,
        "changed": len(record.changed),
        "changed_versions": sum(1 for c in record.changed if c["kind"] == "changed"),
        "cell_runs": record.runs,
        "bound_one_culprit": record.most_runs,
        "attempts": len(record.steps),
        "unresolvable_attempts": sum(1 for s in record.steps if s.outcome == "unresolvable"),
        "minimal": record.minimal,
        "culprits": record.culprits,
        "release_bisect": record.release_bisect,
        "correct": culprits == [EXPECTED],
        "seconds_in_cells": round(sum(s.seconds for s in record.steps if s.ran), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs in a row (default: 1)")
    parser.add_argument("--env-dir", type=Path, help="environment store (default: the user's)")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-culprit-") as folder:
        for number in range(1, args.runs + 1):
            print(f"run {number}/{args.runs}", file=sys.stderr)
            runs.append(one_run(args.env_dir, Path(folder)))
    document = {
        "benchmark": "culprit",
        "what": f"{GOOD.name} (good) .. {BAD.name} (bad), script {SCRIPT.relative_to(ROOT)}",
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
            f"{run['wall_seconds']:.0f}s, {run['cell_runs']} cell runs (bound "
            f"{run['bound_one_culprit']}) + {(run['release_bisect'] or {}).get('steps', 0)} "
            f"release-bisect steps, correct={run['correct']}: {run['verdict']}"
        )
    return 0 if all(r["correct"] for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
