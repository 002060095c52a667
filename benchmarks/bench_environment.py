"""Environment build, warm cache, same pins: repromatrix's uv builder against nox's
default backend (virtualenv + pip), side by side in one run.

    python benchmarks/bench_environment.py [--repeat 3] [--out benchmarks/results/environment.json]

Both sides install the same pins into a new environment each time, after one warm-up
build each (so both package caches are warm). The builder's figure is a real build
(resolve + venv + sync), not a reuse; reuse (the identity check alone) is reported too.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.environment.indexes import IndexSettings  # noqa: E402
from repromatrix.environment.store import CELL_TOOLING, EnvRequest, EnvStore  # noqa: E402
from repromatrix.matrix.pins import parse_pin  # noqa: E402

PINS = {"torch": "2.13.0", "transformers": "4.56.2", "peft": "0.17.1"}


def builder_seconds(request: EnvRequest) -> float:
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        EnvStore(Path(store)).build(request)
        return time.perf_counter() - started


def reuse_seconds(request: EnvRequest, store: Path) -> float:
    started = time.perf_counter()
    env = EnvStore(store).build(request)
    assert env.reused
    return time.perf_counter() - started


def nox_default_seconds() -> float:
    """What `nox.options.default_venv_backend = "virtualenv"` does: a virtualenv, then
    pip install (pip reads the user's PIP_* configuration itself)."""
    with tempfile.TemporaryDirectory() as folder:
        venv = Path(folder) / "venv"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "virtualenv", "-q", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
             *(f"{k}=={v}" for k, v in PINS.items()), *CELL_TOOLING],
            check=True,
        )  # fmt: skip
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/environment.json")
    args = parser.parse_args()
    if shutil.which("virtualenv") is None and subprocess.call(
        [sys.executable, "-m", "virtualenv", "--version"], stdout=subprocess.DEVNULL
    ):
        sys.exit("bench_environment: needs virtualenv (pip install virtualenv), nox's default")

    request = EnvRequest(
        pins=tuple(parse_pin(k, v) for k, v in PINS.items()),
        index=IndexSettings.from_environment(),
    )
    builder_seconds(request)  # warm-up: uv's cache
    nox_default_seconds()  # warm-up: pip's cache
    builder = [builder_seconds(request) for _ in range(args.repeat)]
    nox_pip = [nox_default_seconds() for _ in range(args.repeat)]
    with tempfile.TemporaryDirectory() as store:
        EnvStore(Path(store)).build(request)
        reuse = [reuse_seconds(request, Path(store)) for _ in range(args.repeat)]

    figures = {
        "pins": PINS,
        "repeat": args.repeat,
        "builder_seconds_median": round(statistics.median(builder), 2),
        "nox_virtualenv_pip_seconds_median": round(statistics.median(nox_pip), 2),
        "speedup": round(statistics.median(nox_pip) / statistics.median(builder), 1),
        "reuse_seconds_median": round(statistics.median(reuse), 2),
        "builder_seconds": [round(s, 2) for s in builder],
        "nox_virtualenv_pip_seconds": [round(s, 2) for s in nox_pip],
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "goal": "speedup >= 20",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
