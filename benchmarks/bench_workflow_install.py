"""Per-job overhead of the workflows: the "Install repromatrix" step, old (venv + pip)
against new (uv, its cache kept between jobs), side by side in one run.

    python benchmarks/bench_workflow_install.py [--repeat 3] [--out FILE]

Each job runs the step's exact commands, the workflows' one install action
(.github/actions/install-repromatrix/install.sh, new) and as they were before (old,
below), with bash -e in a fresh copy of the checkout (what actions/checkout gives a
job) and a fresh RUNNER_TEMP, against the machine's warm caches (pip's and uv's
default folders, as a self-hosted runner keeps them; one untimed warm-up job each
first). Sources: `.` (the checkout:
a package build every job, as in repromatrix's own repository) and a wheel (standing
for `repromatrix==X.Y` from an index: nothing to build). Old and new alternate, so a
busy machine slows both alike. Also: four jobs at once (a matrix's jobs on one host),
and the new step on a runner without uv (the step pip-installs uv first).
Goal: at most 3 s a job.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACTION = ".github/actions/install-repromatrix/install.sh"
# The step before uv (commit 46e9c52): a venv of the runner's python3, pip into it.
OLD_STEP = 'python3 -m venv .venv && .venv/bin/pip install --quiet "$REPROMATRIX_SOURCE"'


def new_step() -> str:
    """The action's step, as every workflow's install runs it (from the checkout)."""
    assert (ROOT / ACTION).is_file(), ACTION
    return f'SOURCE="$REPROMATRIX_SOURCE" GITHUB_PATH= bash {ACTION}'


def checkout(into: Path) -> Path:
    """The committed tree, as actions/checkout gives it to a job."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def path_without_uv() -> str:
    return os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "uv").exists()
    )


def path_with_uv(bin_dir: Path) -> str:
    from uv import find_uv_bin

    bin_dir.mkdir(parents=True, exist_ok=True)
    if not (bin_dir / "uv").exists():
        (bin_dir / "uv").symlink_to(find_uv_bin())
    return f"{bin_dir}{os.pathsep}{path_without_uv()}"


def job(script: str, source: str, path: str, scratch: Path) -> float:
    """One job's install step: seconds, from a fresh checkout."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    tree = checkout(folder / "work")
    (folder / "temp").mkdir()
    env = {**os.environ, "PATH": path, "RUNNER_TEMP": str(folder / "temp")}
    env["REPROMATRIX_SOURCE"] = source
    started = time.perf_counter()
    subprocess.run(["bash", "-e", "-c", script], cwd=tree, env=env, check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(folder, ignore_errors=True)
    return round(seconds, 2)


def concurrent(script: str, source: str, path: str, scratch: Path, jobs: int) -> float:
    """The slowest of ``jobs`` install steps started at once."""
    with ThreadPoolExecutor(jobs) as pool:
        return max(pool.map(lambda _: job(script, source, path, scratch), range(jobs)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "workflow_install.json"
    )
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-install-"))
    with_uv = path_with_uv(scratch / "runner-bin")
    without_uv = path_without_uv()
    wheel_dir = scratch / "wheel"
    subprocess.run(
        [sys.executable, "-m", "uv", "build", "--wheel", "-q", "-o", str(wheel_dir), str(ROOT)],
        check=True,
    )
    wheel = str(next(wheel_dir.glob("*.whl")))
    steps = {"old": (OLD_STEP, without_uv), "new": (new_step(), with_uv)}
    sides = {f"{name}_{label}": (script, path, source)
             for name, (script, path) in steps.items()
             for label, source in (("source", "."), ("wheel", wheel))}  # fmt: skip
    sides["new_without_uv_wheel"] = (new_step(), without_uv, wheel)
    for script, path, source in sides.values():  # warm-up: pip's and uv's caches
        job(script, source, path, scratch)
    figures: dict[str, list[float]] = {name: [] for name in sides}
    four: dict[str, list[float]] = {"old_source": [], "new_source": []}
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        for name, (script, path, source) in sides.items():
            figures[name].append(job(script, source, path, scratch))
            print(f"{name}: {figures[name][-1]} s", flush=True)
        for name in four:
            script, path, source = sides[name]
            four[name].append(concurrent(script, source, path, scratch, jobs=4))
            print(f"{name}, 4 at once: {four[name][-1]} s", flush=True)
    result = {
        "what": "the workflows' Install repromatrix step, one job (fresh checkout, warm caches)",
        "cores": os.cpu_count(),
        "load_average_at_start": round(load, 1),
        "python": sys.version.split()[0],
        "repeat": args.repeat,
        "old_step": OLD_STEP,
        "new_step": new_step(),
        **{f"{name}_seconds_median": statistics.median(v) for name, v in figures.items()},
        **{f"{name}_4_at_once_seconds_median": statistics.median(v) for name, v in four.items()},
        "seconds": figures,
        "four_at_once_seconds": four,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps({k: v for k, v in result.items() if k.endswith("median")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
