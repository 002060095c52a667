"""A nightly's gathering for a large matrix: merge + verdicts + every report for
2,000 combinations x 10 cases.

    PYTHONPATH=src python benchmarks/bench_reports.py [--combinations 2000] [--cases 10]

Synthetic stored results (built with the results models, nothing runs): a ladder of
transformers releases x peft x torch, about one failure in six with a 3 kB message, a
60-line traceback and its signature (as the cell signs it), known-broken ranges, flaky
and skipped cases, a few install errors, and a baseline run to compare with. They are
written as the CI jobs upload them (one results directory per job of --per-job
combinations, as ci-matrix cuts a tier), then timed: ``merge --tier`` of those
directories (validating every file, one lost job's combinations written LOST), judging
(verdicts, both baselines) and each output separately, best of --repeat runs; writes
the figures to benchmarks/results/reports.json (``--out`` for another file).

Each stage is timed twice: wall seconds, and the CPU seconds this process spent
(user + system, ``time.process_time``): on a shared machine the wall time grows with
the load while the CPU time barely moves, so both are written, with the load average
at the start and the end.

Goal: everything <= 5 s at 2,000 combinations; summary.md <= 65,536 characters.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.execution._cell.signature import Signature  # noqa: E402
from repromatrix.outcomes import combination_status  # noqa: E402
from repromatrix.redact import masked_already  # noqa: E402
from repromatrix.reports import html, junit, markdown, results_json  # noqa: E402
from repromatrix.reports.view import View  # noqa: E402
from repromatrix.results import (  # noqa: E402
    CaseResult,
    CombinationResult,
    EnvironmentInfo,
    FailureSignature,
    Results,
    RunInfo,
    write_combination,
    write_json_atomic,
    write_text_atomic,
)
from repromatrix.results.gather import Expected, merge  # noqa: E402
from repromatrix.verdicts import judge  # noqa: E402
from repromatrix.verdicts.knownissues import parse_registry  # noqa: E402

GOAL_SECONDS = 5.0
TRACEBACK = "\n".join(
    f'  File "<env>/lib/python3.11/site-packages/transformers/module_{i}.py", line {i * 7}, '
    f"in forward\n    hidden = self.layer_{i}(hidden)"
    for i in range(30)
)


def synthetic(combinations: int, cases: int, *, run_id: str, shift: int = 0) -> Results:
    """A deterministic matrix; ``shift`` moves where failures start (a later run)."""
    case_ids = [f"test_area{j}.py::test_behaviour_{j}[variant{j % 3}]" for j in range(cases)]
    # What the cell signs each failure with: one cause per case, three frames' worth.
    causes = [
        FailureSignature.of(
            Signature.of("RuntimeError", [f"transformers/module_{j}.py:forward"], "m" * 3000)
        )
        for j in range(cases)
    ]
    out = []
    for i in range(combinations):
        transformers = f"4.{40 + (i // 10) % 50}.{i % 3}"
        peft = f"0.{13 + i % 5}.0"
        torch = "2.13.0" if i % 2 == 0 else "2.12.1"
        requested = {"torch": torch, "transformers": transformers, "peft": peft}
        if i % 97 == 13:
            out.append(
                CombinationResult(
                    id=f"c{i:04d}",
                    tier="nightly",
                    requested=requested,
                    status="install-error",
                    message="resolve: No solution found when resolving dependencies: " + "x" * 400,
                    repro=f"nox -s c{i:04d}",
                )
            )
            continue
        results = []
        for j, case_id in enumerate(case_ids):
            broken = (i // 10 + j + shift) % 6 == 0
            if j == cases - 1:
                outcome = "skipped"
            elif broken and (i + j) % 11 == 0:
                outcome = "flaky"
            elif broken:
                outcome = ("failed", "error", "crashed", "timed-out")[(i + j) % 4]
            else:
                outcome = "passed"
            failing = outcome in ("failed", "error", "crashed", "timed-out")
            results.append(
                CaseResult(
                    id=case_id,
                    status=outcome,
                    outcome=outcome,
                    seconds=1.5,
                    message=("RuntimeError: " + "m" * 3000) if failing else "",
                    error_type="RuntimeError" if failing else None,
                    traceback=TRACEBACK if failing else "",
                    attempts=[outcome] * (3 if failing else 1),
                    signature=causes[j] if failing else None,
                )
            )
        out.append(
            CombinationResult(
                id=f"c{i:04d}",
                tier="nightly",
                requested=requested,
                resolved={**requested, "numpy": "2.4.6", "tokenizers": f"0.2{i % 3}.0"},
                status=combination_status({c.outcome for c in results}),
                cases=results,
                environment=EnvironmentInfo(python="3.11.7"),
                repro=f"nox -s c{i:04d}",
            )
        )
    return Results(run=RunInfo(id=run_id, started="2026-11-22T00:00:00+00:00"), combinations=out)


REGISTRY = parse_registry(
    [
        {
            "case": "test_area1.py::*",
            "when": {"transformers": ">=4.60,<4.70"},
            "link": "https://github.com/huggingface/transformers/issues/1",
        }
    ],
    "known_issues.yaml",
)


def job_folders(stored: Results, root: Path, per_job: int) -> list[Expected]:
    """``stored`` as CI jobs upload it: one results directory per job of ``per_job``
    combinations; the last job lost (nothing uploaded). The tier's combinations, each
    with its job, as ``merge --tier`` knows them."""
    expected = []
    for start in range(0, len(stored.combinations), per_job):
        part = stored.combinations[start : start + per_job]
        name = f"combination-{part[0].id}"
        expected += [Expected(c.id, c.tier, c.requested, f"`slice_0 / {name}`") for c in part]
        if start + per_job >= len(stored.combinations):
            break  # the lost job
        folder = root / name
        for combination in part:
            write_combination(folder, combination)
        run = RunInfo(id=name, started="2026-11-22T00:00:00+00:00", tier="nightly")
        write_json_atomic(folder / "results.json", Results(run=run, combinations=part).dump())
    return expected


@contextlib.contextmanager
def _timed(stage: str, wall: dict[str, float], cpu: dict[str, float]) -> Iterator[None]:
    clock, used = time.perf_counter(), time.process_time()
    yield
    wall[stage] = time.perf_counter() - clock
    cpu[stage] = time.process_time() - used


def bench(combinations: int, cases: int, repeat: int, per_job: int = 2) -> dict:
    load_at_start = round(os.getloadavg()[0], 2)
    registry = REGISTRY
    baseline = synthetic(combinations, cases, run_id="yesterday", shift=1)
    best: dict[str, float] = {}
    best_cpu: dict[str, float] = {}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        artifacts = Path(folder) / "artifacts"
        expected = job_folders(synthetic(combinations, cases, run_id="today"), artifacts, per_job)
        for attempt in range(repeat):
            out = Path(folder) / f"merged{attempt}"
            timings: dict[str, float] = {}
            cpu: dict[str, float] = {}
            with _timed("merge", timings, cpu):
                stored = merge(out, [artifacts], expected=expected)
            with _timed("verdicts", timings, cpu):
                judge(stored, registry, baseline)
            with _timed("results.json", timings, cpu):
                view = View.of(stored, out)
                results_json.write(stored, out)
            for name, render in (
                ("junit.xml", junit.render),
                ("summary.md", markdown.render),
                ("index.html", html.render),
            ):
                with _timed(name, timings, cpu):
                    text = render(view)
                    write_text_atomic(out / name, text, scrub=masked_already)  # as write_all
                sizes[name] = len(text)
            sizes["results.json"] = (out / "results.json").stat().st_size
            timings["total"], cpu["total"] = sum(timings.values()), sum(cpu.values())
            for key, value in timings.items():
                best[key] = min(best.get(key, value), value)
            for key, value in cpu.items():
                best_cpu[key] = min(best_cpu.get(key, value), value)
        summary = stored.summary
    return {
        "combinations": combinations,
        "cases": cases,
        "combinations_per_job": per_job,
        "repeat": repeat,
        "seconds": {k: round(v, 3) for k, v in best.items()},
        "cpu_seconds": {k: round(v, 3) for k, v in best_cpu.items()},
        "goal_seconds": GOAL_SECONDS,
        "within_goal": best["total"] < GOAL_SECONDS,
        "summary_md_chars": sizes["summary.md"],
        "summary_md_limit": markdown.MAX_CHARS,
        "sizes": sizes,
        "verdicts": summary.verdicts if summary else {},
        "host": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "load_average": round(os.getloadavg()[0], 2),  # at the end
            "load_average_start": load_at_start,
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--combinations", type=int, default=2000)
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--per-job", type=int, default=2, help="combinations per CI job")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "reports.json"
    )
    args = parser.parse_args()
    figures = bench(args.combinations, args.cases, args.repeat, args.per_job)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    ok = figures["within_goal"] and figures["summary_md_chars"] <= figures["summary_md_limit"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
