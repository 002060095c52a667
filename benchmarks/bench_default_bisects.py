"""Benchmark: real upstream changes bisected with default settings, as a new user runs
them (issue N, "Right by default"); and what the as-of fix costs a cell build.

    python benchmarks/bench_default_bisects.py [--env-dir DIR]
        [--only trl|peft|transformers|cells]

Examples (probes in benchmarks/probes/, each reproduced from the two wheels' diff):

- trl: SFTConfig() turns gradient checkpointing on from 0.22.0
  (trl_sft_gradient_checkpointing.py), bisected over trl 0.17.0 .. 0.26.2 with
  transformers==4.56.2 and torch==2.13.0 pinned; right answer first bad 0.22.0.
- peft: a Qwen3 model gets default LoRA target modules from 0.16.0
  (peft_qwen3_default_targets.py), bisected --find first-good over peft 0.13.0 .. 0.17.1
  with the same pins; right answer first good 0.16.0.
- transformers: TrainingArguments refuses ``evaluation_strategy`` from 4.51.0
  (transformers_evaluation_strategy.py), bisected over transformers 4.44.0 .. 4.56.2
  with torch==2.13.0 and accelerate=latest pinned (TrainingArguments needs accelerate:
  a floating pin, so it travels too); right answer first bad 4.51.0. The bisected
  package's own dependencies (tokenizers, huggingface-hub, safetensors, numpy) travel
  with each candidate: 4.51.0 gets huggingface-hub 0.30.1 and accelerate 1.6.0.

Default settings: the command line's, so --as-of is the bisected package (each candidate
with the stack of its upload day; what a newer exact pin needs resolves as today) and the
stack is repromatrix's default packages (a user without a matrix.yaml). Before the fix
(commit 46e9c52) trl and peft ended "could not conclude": transformers 4.56.2 needs
huggingface-hub>=0.34 (2025-07), capped at the candidate's day.

--only NAME runs one part; the other parts' figures already in the results file stay.

The cell figures: one new environment of trl 0.21.0 + transformers 4.56.2 + torch 2.13.0
with --as-of none (no time travel) and with --as-of trl (time travel and the closure of
the newer pins), each in a fresh store (uv's cache warm); and the closure step alone.
Results: benchmarks/results/default_bisects.json. Needs PyPI and torch 2.13.0 through the
user's pip configuration (PIP_FIND_LINKS).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.environment import EnvRequest, EnvStore, IndexSettings  # noqa: E402
from repromatrix.environment.as_of import (  # noqa: E402
    _annotated_lock,
    _project_files,
    keep_what_newer_pins_need,
    time_travel,
)
from repromatrix.environment.uv import find_interpreter, uv_binary  # noqa: E402
from repromatrix.hunts.bisect.run import BISECT, BisectOptions  # noqa: E402
from repromatrix.hunts.hunt import run_hunt  # noqa: E402
from repromatrix.matrix import DEFAULT_PACKAGES  # noqa: E402
from repromatrix.matrix.cell import CellSpec  # noqa: E402
from repromatrix.matrix.pins import parse_pin_option  # noqa: E402
from repromatrix.probe.prober import CellProber  # noqa: E402
from repromatrix.probe.spec import Probe  # noqa: E402
from repromatrix.results import write_json_atomic  # noqa: E402
from repromatrix.search.bisection import Find  # noqa: E402

PROBES = ROOT / "benchmarks" / "probes"
RESULTS = ROOT / "benchmarks" / "results" / "default_bisects.json"
PINS = ("transformers==4.56.2", "torch==2.13.0")  # trl's and peft's; the cells'
EXAMPLES = {
    "trl": {
        "pins": PINS,
        "good": "0.17.0",
        "bad": "0.26.2",
        "find": Find.FIRST_BAD,
        "script": PROBES / "trl_sft_gradient_checkpointing.py",
        "expected": ("0.22.0", "0.21.0"),  # first bad, last good
    },
    "peft": {
        "pins": PINS,
        "good": "0.17.1",
        "bad": "0.13.0",
        "find": Find.FIRST_GOOD,
        "script": PROBES / "peft_qwen3_default_targets.py",
        "expected": ("0.16.0", "0.15.2"),  # first good, last bad
    },
    "transformers": {
        "pins": ("torch==2.13.0", "accelerate=latest"),
        "good": "4.44.0",
        "bad": "4.56.2",
        "find": Find.FIRST_BAD,
        "script": PROBES / "transformers_evaluation_strategy.py",
        "expected": ("4.51.0", "4.50.3"),  # first bad, last good
    },
}


def bisect(package: str, example: dict, env_dir: Path | None, out: Path) -> dict:
    options = BisectOptions(
        package=package,
        good=example["good"],
        bad=example["bad"],
        find=example["find"],
        probe=Probe(script=example["script"]),
        cell=CellSpec(
            pins=tuple(parse_pin_option(p) for p in example["pins"]),
            as_of=package,  # the command line's default
            stack=DEFAULT_PACKAGES,
        ),
        out=out,
    )
    started = time.monotonic()
    record, code = run_hunt(BISECT, options, CellProber(env_dir=env_dir))
    wall = time.monotonic() - started
    answer = (record.first, record.last)
    return {
        "command": record.command,
        "pins": list(example["pins"]),
        "exit": code,
        "verdict": record.verdict,
        "answer": list(answer),
        "correct": answer == example["expected"],
        "wall_seconds": round(wall, 1),
        "steps": len(record.steps),
        "skips": sum(s.outcome == "skip" for s in record.steps),
        # The first bad (good) candidate's own dependencies, as of its upload day.
        "resolved_at_answer": record.environment.get("resolved", {}),
        "kept_today": record.as_of.get("today", []),
        "needed_by": record.as_of.get("needed_by", []),
    }


def cell_builds() -> dict:
    """One new cell with and without time travel (fresh stores, warm uv cache), and
    the closure step alone in a fresh cache."""
    pins = tuple(parse_pin_option(p) for p in ("trl==0.21.0", *PINS))
    index = IndexSettings.from_environment()
    figures: dict = {}
    for label, when in (("as_of_none", None), ("as_of_trl", "trl")):
        # Nothing of the bisects above cached in this process: the closure's compile
        # and the upload-date pages are paid here as by a first build.
        _annotated_lock.cache_clear()
        _project_files.cache_clear()
        with tempfile.TemporaryDirectory(prefix="bench-cell-") as folder:
            request = EnvRequest(pins=pins, index=index, as_of=when, stack=DEFAULT_PACKAGES)
            started = time.monotonic()
            env = EnvStore(Path(folder)).build(request)
            figures[f"{label}_seconds"] = round(time.monotonic() - started, 2)
            figures[f"{label}_huggingface_hub"] = env.resolved.get("huggingface-hub")
    _annotated_lock.cache_clear()
    _project_files.cache_clear()
    travel = time_travel("trl", pins, DEFAULT_PACKAGES, index)
    python = find_interpreter(None, uv_binary()).executable
    started = time.monotonic()
    kept = keep_what_newer_pins_need(travel, pins, index, uv=uv_binary(), python=python)
    figures["closure_step_seconds"] = round(time.monotonic() - started, 2)
    figures["kept_today"] = list(kept.kept)
    return figures


def when_measured() -> dict:
    # A shared machine: other jobs' load, which the wall times include.
    return {
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def kept(part: dict, before: dict) -> dict:
    """A part measured by an earlier run, with when and under what load (an older
    file kept those once, for the whole document)."""
    if not part or "measured" in part:
        return part
    return {
        **part,
        "measured": before.get("measured"),
        "load_average_1m": before.get("machine", {}).get("load_average_1m"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-dir", type=Path, help="environment store (default: the user's)")
    parser.add_argument("--only", choices=[*sorted(EXAMPLES), "cells"], help="one part")
    args = parser.parse_args()
    chosen = [args.only] if args.only in EXAMPLES else [] if args.only else list(EXAMPLES)
    # What --only leaves out stays as measured before: the other bisects, the cells.
    before = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results = {name: kept(run, before) for name, run in before.get("bisects", {}).items()}
    with tempfile.TemporaryDirectory(prefix="bench-default-") as folder:
        for package in chosen:
            print(f"bisect {package} with default settings", file=sys.stderr)
            run = bisect(package, EXAMPLES[package], args.env_dir, Path(folder))
            results[package] = {**run, **when_measured()}
    if args.only in (None, "cells"):
        cells = {**cell_builds(), **when_measured()}
    else:
        cells = kept(before.get("cell", {}), before)
    document = {
        "benchmark": "default_bisects",
        "what": "real upstream changes bisected with default settings (--as-of the bisected "
        "package), each with its pins",
        "before_the_fix": "commit 46e9c52, same commands: trl could not conclude (11 steps, "
        "59 s: every candidate before 0.22.0 refused, only huggingface-hub<=0.30.2 is "
        "available); peft could not conclude (10 steps, 20 s: no candidate installed)",
        "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),  # each part says when it was measured
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "bisects": results,
        "cell": cells,
    }
    write_json_atomic(RESULTS, document)
    for package in chosen:
        print(f"{package}: {results[package]['verdict']} (correct={results[package]['correct']})")
    if args.only in (None, "cells"):
        print(f"cell: {cells}")
    return 0 if all(results[p]["correct"] for p in chosen) else 1


if __name__ == "__main__":
    raise SystemExit(main())
