"""A nightly combination job's overhead before its first cell runs a case, warm caches.

    PYTHONPATH=src python benchmarks/bench_job_overhead.py [--combination tf4.56-peft0.17]

What nightly-combination.yml does before the first case, step by step, in a fresh
folder each time, as an ephemeral runner whose caches sit on a volume would:

1. checkout: ``git clone --depth 1`` of this repository (actions/checkout fetches one
   commit; here from the local clone, not over the network);
2. install: the workflow's "Install repromatrix" step, ``uv venv`` + ``uv pip install``
   of a repromatrix wheel (as ``repromatrix==X.Y`` from an index), uv's cache warm;
3. start to first cell: ``repromatrix run --tier smoke --combination ID`` from its start
   to the moment its first cell starts its cases (the records stamp it writes then):
   the harness's start, matrix.yaml and cases/ read, the cell found in a warm
   REPROMATRIX_ENV_DIR (no resolve, no install), the run's one collect_env.

The run is then stopped (SIGINT, as a cancelled job). The first, untimed round warms
the caches (it builds the cell if the store lacks it). Median of --repeat; figures
to benchmarks/results/job_overhead.json.

Not measured here: a container image's pull (no Docker on the development machine;
`docker pull` of a cached image is a manifest check, a cold pull of a CUDA image is
minutes, once per node) and GitHub's own queueing and runner start.
Goal: <= 60 s before the first cell, with warm caches.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 60.0


def _uv() -> str:
    return shutil.which("uv") or str(Path(sys.executable).parent / "uv")


def build_wheel(folder: Path) -> Path:
    subprocess.run(
        [_uv(), "build", "--wheel", "--quiet", "--out-dir", str(folder), str(ROOT)],
        check=True,
    )
    return next(folder.glob("repromatrix-*.whl"))


def one_job(root: Path, wheel: Path, combination: str, env_dir: Path) -> dict[str, float]:
    timings: dict[str, float] = {}
    clock = time.monotonic()
    repo = root / "repo"
    subprocess.run(
        ["git", "clone", "--quiet", "--depth", "1", f"file://{ROOT}", str(repo)], check=True
    )
    timings["checkout"] = time.monotonic() - clock

    clock = time.monotonic()
    venv = repo / ".venv"
    subprocess.run([_uv(), "venv", "--quiet", "--python", "python3", str(venv)], check=True)
    subprocess.run(
        [_uv(), "pip", "install", "--quiet", "--python", str(venv), str(wheel)], check=True
    )
    timings["install"] = time.monotonic() - clock

    clock = time.monotonic()
    results = repo / "results" / combination
    stamp = results / "records" / f"{combination}.identity"
    env = {**os.environ, "REPROMATRIX_ENV_DIR": str(env_dir)}
    command = [str(venv / "bin" / "repromatrix"), "run", "--tier", "smoke"]
    run = subprocess.Popen(
        [*command, "--combination", combination, "--results", str(results)],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while not stamp.exists():
            if run.poll() is not None:
                raise RuntimeError(f"repromatrix run ended ({run.returncode}) before a cell")
            time.sleep(0.05)
        timings["start to first cell"] = time.monotonic() - clock
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    timings["total"] = sum(timings.values())
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--combination", default="tf4.56-peft0.17")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--env-dir",
        type=Path,
        default=Path(
            os.environ.get("REPROMATRIX_ENV_DIR") or Path.home() / ".cache" / "repromatrix" / "envs"
        ),
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "job_overhead.json"
    )
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        wheel = build_wheel(Path(folder) / "dist")
        for attempt in range(args.repeat + 1):  # the first round warms the caches
            timings = one_job(Path(folder) / f"job{attempt}", wheel, args.combination, args.env_dir)
            if attempt:
                runs.append(timings)
    medians = {key: round(statistics.median(r[key] for r in runs), 2) for key in runs[0]}
    figures = {
        "combination": args.combination,
        "repeat": args.repeat,
        "seconds": medians,
        "runs": [{k: round(v, 2) for k, v in r.items()} for r in runs],
        "goal_seconds": GOAL_SECONDS,
        "within_goal": medians["total"] <= GOAL_SECONDS,
        "not_measured": "a container image's pull; GitHub's queueing and runner start",
        "host": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": round(os.getloadavg()[0], 2),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0 if figures["within_goal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
