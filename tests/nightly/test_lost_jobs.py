"""A CI job killed mid-way (the OOM killer, a lost runner, a cancel): `merge --tier`
knows the tier's combinations, lists each one no job reported as LOST naming its job,
exits 1; the verdicts, every report and the tracking issue say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.jobs import write_job
from support.shown import shown

from repromatrix.nightly import tracking
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    Results,
    RunInfo,
    load_results,
)
from repromatrix.verdicts import judge

REPO = Path(__file__).resolve().parents[2]

# Six combinations, two a job: three jobs in slice_0.
MATRIX = """
    schema: 1
    packages: [torch, peft]
    tier_defaults:
      t: {torch: "2.13.0", cells_per_job: 2, runner: arc-gpu}
    tiers:
      t:
        - axes: {peft: ["0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0", "0.15.0"]}
          id: "p{peft}"
"""
IDS = [f"p0.{n}.0" for n in range(10, 16)]


def _job(folder: Path, *ids: str) -> Path:
    """What one job uploads: its combinations' files, and results.json."""
    combos = []
    for combo_id in ids:
        combo = CombinationResult(
            id=combo_id,
            tier="t",
            requested={"torch": "2.13.0", "peft": combo_id[1:]},
            resolved={"torch": "2.13.0", "peft": combo_id[1:]},
            status="passed",
            cases=[CaseResult(id="test_a.py::test_x", status="passed", outcome="passed")],
            started="2026-11-22T01:00:00+00:00",
            finished="2026-11-22T01:05:00+00:00",
        )
        combos.append(combo)
    run = RunInfo(id=f"run-{ids[0]}", started="2026-11-22T01:00:00+00:00", tier="t")
    return write_job(folder, combos, run)


def _repromatrix(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", *args],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    return folder


def test_a_job_killed_mid_way_leaves_its_combinations_lost_and_named(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    jobs = _repromatrix(project, "ci-matrix", "--tier", "t")
    assert jobs.returncode == 0, jobs.stderr
    slice_0 = json.loads(dict(x.split("=", 1) for x in jobs.stdout.splitlines())["slice_0"])
    assert [job["combinations"] for job in slice_0] == [IDS[0:2], IDS[2:4], IDS[4:6]]
    artifacts = project / "artifacts"
    _job(artifacts / "combination-p0.10.0", *IDS[0:2])
    _job(artifacts / "combination-p0.12.0", IDS[2])  # the second job, killed after its first
    # the third job came back with nothing at all (its runner was lost)

    done = _repromatrix(project, "merge", "--tier", "t", "--into", "merged", "artifacts")

    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 of the tier's combinations came back from no job (LOST)" in done.stdout
    lost_lines = [line for line in done.stdout.splitlines() if line.startswith("  LOST ")]
    assert [line.split()[1].rstrip(":") for line in lost_lines] == [IDS[3], IDS[4], IDS[5]]
    # Named as the run's page lists the job: under its slice, by its combinations.
    assert "its job, `slice_0 / p0.12.0 p0.13.0` (2 combinations): the job" in lost_lines[0]
    assert "its job, `slice_0 / p0.14.0 p0.15.0` (2 combinations): the job" in lost_lines[1]

    merged = load_results(project / "merged")
    assert [c.id for c in merged.combinations] == IDS  # every combination, matrix order
    assert [c.status for c in merged.combinations] == ["passed"] * 3 + ["lost"] * 3
    lost = merged.combinations[3]
    assert lost.requested == {"torch": "2.13.0", "peft": "0.13.0"}
    assert "killed" in lost.message and "slice_0 / p0.12.0 p0.13.0" in lost.message
    assert "--combination p0.13.0" in lost.repro

    # The verdicts and every report say so; the run's exit status is 1.
    report = _repromatrix(project, "report", "--results", "merged")
    assert report.returncode == 1, report.stdout + report.stderr
    assert "3 LOST" in report.stdout
    judged = load_results(project / "merged")
    assert [c.verdict for c in judged.combinations] == ["PASS"] * 3 + ["LOST"] * 3
    assert judged.summary is not None and judged.summary.exit_code == 1
    summary = (project / "merged" / "summary.md").read_text()
    assert "📭 3 LOST" in summary
    assert "slice_0 / p0.12.0 p0.13.0" in summary and "slice_0 / p0.14.0 p0.15.0" in summary
    assert "(REGRESSED, FAILING, LOST or INSTALL-ERROR)" in summary
    junit = (project / "merged" / "junit.xml").read_text()
    assert junit.count('type="LostJob"') == 3
    page = (project / "merged" / "index.html").read_text()
    assert page.count('data-verdict="LOST"') == 3

    # The tracking issue names the lost job.
    night = tracking.Night(results=judged, date="2026-11-22", run="https://example.invalid/r/1")
    update = tracking.follow(None, night)
    assert [(f.combination, f.case, f.status) for f in update.new] == [
        (c, tracking.LOST, "lost") for c in IDS[3:]
    ]
    assert "slice_0 / p0.12.0 p0.13.0" in shown(update.body)
    assert "slice_0 / p0.14.0 p0.15.0" in shown(update.body)
    assert update.needs_issue


def test_a_rerun_jobs_artifact_replaces_the_lost_results(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    _job(project / "first" / "combination-p0.10.0", *IDS[0:2])
    _job(project / "first" / "combination-p0.12.0", *IDS[2:4])
    done = _repromatrix(project, "merge", "--tier", "t", "--into", "merged", "first")
    assert done.returncode == 1
    # The lost job, re-run: its results replace the LOST ones without --replace.
    _job(project / "rerun" / "combination-p0.14.0", *IDS[4:6])
    done = _repromatrix(project, "merge", "--tier", "t", "--into", "merged", "rerun")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [c.status for c in load_results(project / "merged").combinations] == ["passed"] * 6


def test_no_artifact_at_all_is_every_combination_lost_not_an_error(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    done = _repromatrix(project, "merge", "--tier", "t", "--into", "merged", "artifacts")
    assert done.returncode == 1, done.stderr
    assert [c.status for c in load_results(project / "merged").combinations] == ["lost"] * 6
    # Without --tier, a source with no results is still bad input.
    done = _repromatrix(project, "merge", "--into", "other", "artifacts")
    assert done.returncode == 2
    assert "artifacts: no such results directory" in done.stderr


def test_the_lost_verdict_comes_first_and_is_unexpected() -> None:
    lost = CombinationResult(
        id="x", tier="t", requested={"peft": "0.17.1"}, status="lost", message="no result"
    )
    results = judge(Results(combinations=[lost]))
    assert (lost.verdict, lost.verdict_reason) == ("LOST", "no result")
    assert results.summary is not None
    assert results.summary.verdicts == {"LOST": 1} and results.summary.exit_code == 1
