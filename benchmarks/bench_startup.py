"""Start-up: what the command costs before it does anything, side by side in one run.

    python benchmarks/bench_startup.py [--runs 15] [--pin six==1.16.0]
                                       [--out benchmarks/results/startup.json]

Two comparisons, each timed whole-process from outside (start to exit, wall clock),
the sides run in turn (A B C A B C ...) so that a machine whose speed drifts moves
every side alike; the figure is the median:

1. ``--help``: ``repromatrix --help`` against ``nox --help`` and ``uv --help``, and
   ``python -c pass`` (the interpreter's own start, the floor of any Python command).
   The repromatrix and nox console scripts are started as they start themselves
   (``from repromatrix.cli import main; main()``, ``from nox.__main__ import main``),
   with this interpreter.

2. ``check``'s overhead with an existing cell: a cell of the pins is built once (not
   timed); then, same script (``ok.py``: exit 0), same cell:

   - A: ``repromatrix check --script ok.py --pin PIN``: parse, find the cell by its
     request (reused, nothing resolved), run the script with the cell's interpreter,
     print the verdict;
   - B: ``uv run --no-project --python <cell>/bin/python ok.py``: raw uv running the
     same script in the same environment (uv's own start and interpreter discovery);
   - C: ``<cell>/bin/python ok.py``: the script alone, the floor.

   A - B is what repromatrix adds over raw uv doing the same; A - C over nothing.

3. ``check`` from nothing (the issue's own measure: a cell from nothing to a verdict),
   uv's cache warm:

   - A: ``repromatrix check --script ok.py --pin PIN ...``;
   - B: raw uv doing the same: ``uv venv``, ``uv pip install PIN ...`` into it (with
     the same index flags repromatrix passes on from the user's PIP_* settings), then
     the venv's ``python ok.py``, in one shell.

   Three ways, like for like:

   - ``new_cell``: the one small pin, A with an empty store, B in a new folder, each
     run (the first cell a user ever builds; uv asks each new venv's interpreter);
   - ``stack_cell``: the same with ``--stack`` (default torch + transformers + peft,
     about 0.7 s of raw uv: the scale of the issue's own figures, 1.05 s vs 0.70 s);
   - ``next_cell``: the small pin in a store that has built cells before (the cell
     removed between runs, its staging slot kept: a bisect's next candidate), B
     rebuilding one folder (both sides find uv's answer for their interpreter cached).

Each side's CPU seconds (user + system of the process and its children) are
recorded beside the wall seconds: on a machine shared with other jobs (the load
average is recorded) the wall clock includes waiting for a core, the CPU time less so.

Bytecode is compiled first (``compileall``, as a wheel install does), so the
figures are not the cost of compiling sources. The pins come from the user's index
(PyPI by default); ``--pin`` takes another small package.
Goals: ``--help`` at most 0.12 s; A - B at most 0.1 s; at the issue's scale
(``stack_cell``) A / B at most 1.1.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


def _uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


def console(module: str, function: str = "main") -> list[str]:
    """A console script of this interpreter, as pip writes it."""
    return [
        sys.executable,
        "-c",
        f"import sys; from {module} import {function}; sys.exit({function}())",
    ]


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds, and CPU seconds (user + system) of the command and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode(errors='replace')}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def side_by_side(
    sides: dict[str, list[str]], runs: int, env: dict[str, str], cwd: Path
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds of each side, ``runs`` times, the sides in turn."""
    for command in sides.values():  # one warm-up each: page cache, uv's cache
        timed(command, env, cwd)
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(runs):
        for name, command in sides.items():
            seconds, used = timed(command, env, cwd)
            wall[name].append(seconds)
            cpu[name].append(used)
    return wall, cpu


def fresh_side_by_side(
    sides: dict[str, str], runs: int, env: dict[str, str], cwd: Path, *, again: bool = False
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """As side_by_side, for shell commands that build from nothing: ``{new}`` is a
    folder not used before, removed outside the timing. With ``again``, ``{new}`` is
    one folder per side, emptied outside the timing between runs; a store's staging
    slots (``_staging``) stay, as they do in a store that is used."""
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    for run in range(runs + 1):  # run 0 warms uv's cache, not counted
        for number, (name, command) in enumerate(sides.items()):
            new = cwd / (f"again-{number}" if again else f"fresh-{run}-{number}")
            seconds, used = timed(["sh", "-c", command.format(new=new)], env, cwd)
            if again and (new / "_staging").is_dir():
                for made in new.iterdir():
                    if made.name != "_staging":
                        shutil.rmtree(made) if made.is_dir() else made.unlink()
            else:
                shutil.rmtree(new, ignore_errors=True)
            if run:
                wall[name].append(seconds)
                cpu[name].append(used)
    return wall, cpu


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--pin", default="six==1.16.0", help="the cell's one pin")
    parser.add_argument(
        "--stack",
        nargs="+",
        default=["torch==2.13.0", "transformers==4.56.2", "peft==0.17.1"],
        help="the pins of the issue-scale cell (torch from the user's index settings)",
    )
    parser.add_argument("--label", default="", help="what tree was measured (e.g. a commit)")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "startup.json"
    )
    args = parser.parse_args()

    compileall.compile_dir(SRC, quiet=1)
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")
    }
    env["PYTHONPATH"] = str(SRC)
    repromatrix = console("repromatrix.cli")

    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        work = Path(scratch)
        help_seconds, help_cpu = side_by_side(
            {
                "repromatrix --help": [*repromatrix, "--help"],
                "nox --help": [*console("nox.__main__"), "--help"],
                "uv --help": [_uv(), "--help"],
                "python -c pass": [sys.executable, "-c", "pass"],
            },
            args.runs,
            env,
            work,
        )

        (work / "ok.py").write_text("import sys\n\nsys.exit(0)\n")
        env["REPROMATRIX_ENV_DIR"] = str(work / "envs")
        check = [*repromatrix, "check", "--script", "ok.py", "--pin", args.pin]
        built = subprocess.run(check, env=env, cwd=work, capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"building the cell failed:\n{built.stderr}")
        (identity,) = re.findall(r"environment (\w+) built", built.stderr)
        cell_python = str(work / "envs" / identity / "venv" / "bin" / "python")
        check_seconds, check_cpu = side_by_side(
            {
                "repromatrix check (cell reused)": check,
                "uv run (same cell)": [
                    _uv(),
                    "run",
                    "--no-project",
                    "--python",
                    cell_python,
                    "ok.py",
                ],
                "cell python ok.py": [cell_python, "ok.py"],
            },
            args.runs,
            env,
            work,
        )

        sys.path.insert(0, str(SRC))
        from repromatrix.environment.indexes import IndexSettings

        index_flags = " ".join(shlex.quote(a) for a in IndexSettings.from_environment().uv_args())
        uv, python, ok = shlex.quote(_uv()), shlex.quote(sys.executable), "ok.py"
        del env["REPROMATRIX_ENV_DIR"]

        def from_nothing(pins: list[str], runs: int, again: bool = False):
            pinned = " ".join(f"--pin {shlex.quote(pin)}" for pin in pins)
            return fresh_side_by_side(
                {
                    "repromatrix check (new cell)": "REPROMATRIX_ENV_DIR={new} "
                    + " ".join(shlex.quote(a) for a in repromatrix)
                    + f" check --script ok.py {pinned}",
                    "raw uv (venv, pip install, run)": f"{uv} venv -q --python {python} "
                    f"{{new}} && {uv} pip install -q --python {{new}}/bin/python {index_flags} "
                    f"{' '.join(shlex.quote(pin) for pin in pins)} && {{new}}/bin/python {ok}",
                },
                runs,
                env,
                work,
                again=again,
            )

        fresh_seconds, fresh_cpu = from_nothing([args.pin], max(3, args.runs // 2))
        next_seconds, _next_cpu = from_nothing([args.pin], max(3, args.runs // 2), again=True)
        stack_seconds, _stack_cpu = from_nothing(args.stack, max(3, args.runs // 4))

    helps = {name: median(values) for name, values in help_seconds.items()}
    checks = {name: median(values) for name, values in check_seconds.items()}
    helps_cpu = {name: median(values) for name, values in help_cpu.items()}
    checks_cpu = {name: median(values) for name, values in check_cpu.items()}
    # The least of each side too: on a shared virtual machine the median moves by
    # 20 ms from one run to the next, the minimum much less (it is the cost itself).
    least = {
        name: round(min(values), 3) for name, values in {**check_seconds, **fresh_seconds}.items()
    }
    fresh = {name: median(values) for name, values in fresh_seconds.items()}
    fresh_cpus = {name: median(values) for name, values in fresh_cpu.items()}
    new_a, new_b = fresh.values()
    nexts = {name: median(values) for name, values in next_seconds.items()}
    next_a, next_b = nexts.values()
    stacks = {name: median(values) for name, values in stack_seconds.items()}
    stack_a, stack_b = stacks.values()
    a, b, c = checks.values()
    a_cpu, b_cpu, _c_cpu = checks_cpu.values()
    figures = {
        "label": args.label,
        "help_seconds_median": helps,
        "help_cpu_seconds_median": helps_cpu,
        "help_over_nox": round(helps["repromatrix --help"] / helps["nox --help"], 2),
        "check_pin": args.pin,
        "check_seconds_median": checks,
        "check_cpu_seconds_median": checks_cpu,
        "check_over_uv_run_seconds": round(a - b, 3),
        "check_over_uv_run_cpu_seconds": round(a_cpu - b_cpu, 3),
        "check_over_python_seconds": round(a - c, 3),
        "check_over_uv_run": round(a / b, 2),
        "least_seconds": least,
        "check_over_uv_run_seconds_least": round(
            least["repromatrix check (cell reused)"] - least["uv run (same cell)"], 3
        ),
        "new_cell_over_raw_uv_seconds_least": round(
            least["repromatrix check (new cell)"] - least["raw uv (venv, pip install, run)"], 3
        ),
        "new_cell_seconds_median": fresh,
        "new_cell_cpu_seconds_median": fresh_cpus,
        "new_cell_over_raw_uv_seconds": round(new_a - new_b, 3),
        "new_cell_over_raw_uv": round(new_a / new_b, 2),
        "next_cell_seconds_median": nexts,
        "next_cell_over_raw_uv_seconds": round(next_a - next_b, 3),
        "next_cell_over_raw_uv": round(next_a / next_b, 2),
        "stack_pins": args.stack,
        "stack_cell_seconds_median": stacks,
        "stack_cell_over_raw_uv_seconds": round(stack_a - stack_b, 3),
        "stack_cell_over_raw_uv": round(stack_a / stack_b, 2),
        "runs": args.runs,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "help_seconds": {k: [round(x, 3) for x in v] for k, v in help_seconds.items()},
        "check_seconds": {k: [round(x, 3) for x in v] for k, v in check_seconds.items()},
        "new_cell_seconds": {k: [round(x, 3) for x in v] for k, v in fresh_seconds.items()},
        "next_cell_seconds": {k: [round(x, 3) for x in v] for k, v in next_seconds.items()},
        "stack_cell_seconds": {k: [round(x, 3) for x in v] for k, v in stack_seconds.items()},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "goal": "repromatrix --help <= 0.12 s; check_over_uv_run_seconds, "
        "new_cell_over_raw_uv_seconds, next_cell_over_raw_uv_seconds and "
        "stack_cell_over_raw_uv_seconds <= 0.1; stack_cell_over_raw_uv <= 1.1",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    cpus = {**helps_cpu, **checks_cpu, **fresh_cpus}
    for name, value in {**helps, **checks, **fresh}.items():
        print(f"{name:<34} {value:.3f} s wall  {cpus[name]:.3f} s cpu")
    print(
        f"check over uv run: +{a - b:.3f} s wall ({a / b:.2f}x), +{a_cpu - b_cpu:.3f} s cpu; "
        f"over the bare script: +{a - c:.3f} s wall; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"check from nothing over raw uv: +{new_a - new_b:.3f} s wall ({new_a / new_b:.2f}x)")
    print(
        f"a new cell in a used store over raw uv again: +{next_a - next_b:.3f} s wall "
        f"({next_a / next_b:.2f}x)"
    )
    print(
        f"from nothing at the issue's scale ({' '.join(args.stack)}): {stack_a:.3f} vs "
        f"{stack_b:.3f} s, +{stack_a - stack_b:.3f} s ({stack_a / stack_b:.2f}x)"
    )
    print(
        f"least of each side: check over uv run +{figures['check_over_uv_run_seconds_least']:.3f}"
        f" s, from nothing +{figures['new_cell_over_raw_uv_seconds_least']:.3f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
