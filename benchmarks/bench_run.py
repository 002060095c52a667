"""One combination's run, wall time against its floor.

    python benchmarks/bench_run.py [--combination tf4.56-peft0.17] [--out ...]

floor = one import of torch + transformers + peft in the cell (measured there, warm)
        + the sum of the cases' own time (pytest's setup + call + teardown durations).
wall  = `repromatrix run --combination ID --reruns 0`, end to end, environment reused.
The overhead (wall / floor) is what the harness costs: resolving and checking the
environment, starting pytest, collecting, supervising, writing results.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.environment import EnvRequest, EnvStore  # noqa: E402
from repromatrix.environment.indexes import IndexSettings  # noqa: E402
from repromatrix.matrix import load_matrix  # noqa: E402
from repromatrix.matrix.cell import CellSpec  # noqa: E402

IMPORT = (
    "import time; t = time.perf_counter(); import torch, transformers, peft; "
    "print(time.perf_counter() - t)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--combination", default="tf4.56-peft0.17")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/run.json")
    args = parser.parse_args()

    combo = load_matrix(ROOT / "matrix.yaml").find(args.combination)
    cell = CellSpec.of(combo)
    env = EnvStore().build(
        EnvRequest.for_cell(cell, IndexSettings.from_environment().for_cell(cell))
    )
    subprocess.run([str(env.python), "-c", IMPORT], check=True, capture_output=True)  # warm
    imports = [
        float(
            subprocess.run(
                [str(env.python), "-c", IMPORT], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(args.repeat)
    ]

    walls, case_sums, counts = [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as results:
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "repromatrix", "run", "--combination", combo.id,
                 "--reruns", "0", "--results", results],
                cwd=ROOT, check=False, capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            )  # fmt: skip
            walls.append(time.perf_counter() - started)
            data = json.loads((Path(results) / "combinations" / f"{combo.id}.json").read_text())
            case_sums.append(sum(c["seconds"] for c in data["cases"]))
            counts.append(len(data["cases"]))

    floor = statistics.median(imports) + statistics.median(case_sums)
    figures = {
        "combination": combo.id,
        "cases": counts[0],
        "import_seconds_median": round(statistics.median(imports), 2),
        "cases_seconds_median": round(statistics.median(case_sums), 2),
        "floor_seconds": round(floor, 2),
        "wall_seconds_median": round(statistics.median(walls), 2),
        "overhead_ratio": round(statistics.median(walls) / floor, 2),
        "wall_seconds": [round(w, 2) for w in walls],
        "goal": "overhead_ratio <= 1.3",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
