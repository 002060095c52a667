"""Environment build, warm cache, same pins: repromatrix's uv builder against raw uv
(`uv venv` + `uv pip install`), nox's uv backend and nox's default backend
(virtualenv + pip), side by side in one run.

    python benchmarks/bench_environment.py [--repeat 3] [--out benchmarks/results/environment.json]

Every side installs the same pins into a new environment each time, after one
warm-up build each (so the package caches are warm). The builder's figure is a real
build (resolve + venv + sync), not a reuse; reuse of an existing cell is reported
too. Goals: a new cell at most 1.2x raw uv; reuse at most 0.3 s.
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

from repromatrix.environment import EnvRequest, EnvStore  # noqa: E402
from repromatrix.environment.indexes import IndexSettings  # noqa: E402
from repromatrix.environment.request import CELL_TOOLING  # noqa: E402
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


def _uv() -> str:
    from repromatrix.environment.uv import uv_binary

    return uv_binary()


def raw_uv_seconds(request: EnvRequest) -> float:
    """`uv venv` + `uv pip install` of the same pins: the floor a builder can reach."""
    uv = _uv()
    with tempfile.TemporaryDirectory() as folder:
        venv = Path(folder) / "venv"
        started = time.perf_counter()
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
             *request.index.uv_args(), *(f"{k}=={v}" for k, v in PINS.items()), *CELL_TOOLING],
            check=True,
        )  # fmt: skip
        return time.perf_counter() - started


NOXFILE = """
import nox
@nox.session(venv_backend="uv", reuse_venv=False)
def cell(session):
    session.install(*{pins!r})
"""


def nox_uv_seconds(request: EnvRequest) -> float:
    """nox's uv backend: a session with venv_backend="uv" that installs the pins."""
    pins = [*(f"{k}=={v}" for k, v in PINS.items()), *CELL_TOOLING, *request.index.uv_args()]
    with tempfile.TemporaryDirectory() as folder:
        noxfile = Path(folder) / "noxfile.py"
        noxfile.write_text(NOXFILE.format(pins=pins))
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "nox", "-f", str(noxfile), "-s", "cell",
             "--envdir", str(Path(folder) / "envs")],
            check=True, capture_output=True,
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
    raw_uv_seconds(request)
    builder, raw, nox_uv = [], [], []
    for _ in range(args.repeat):  # interleaved: a busy moment of the machine hits all three
        builder.append(builder_seconds(request))
        raw.append(raw_uv_seconds(request))
        nox_uv.append(nox_uv_seconds(request))
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
        "raw_uv_seconds_median": round(statistics.median(raw), 2),
        "nox_uv_seconds_median": round(statistics.median(nox_uv), 2),
        "builder_over_raw_uv": round(statistics.median(builder) / statistics.median(raw), 2),
        "builder_over_nox_uv": round(statistics.median(builder) / statistics.median(nox_uv), 2),
        "reuse_seconds_median": round(statistics.median(reuse), 3),
        "builder_seconds": [round(s, 2) for s in builder],
        "raw_uv_seconds": [round(s, 2) for s in raw],
        "nox_uv_seconds": [round(s, 2) for s in nox_uv],
        "reuse_seconds": [round(s, 3) for s in reuse],
        "nox_virtualenv_pip_seconds": [round(s, 2) for s in nox_pip],
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "goal": "speedup >= 20; builder_over_raw_uv <= 1.2; reuse_seconds_median <= 0.3",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
