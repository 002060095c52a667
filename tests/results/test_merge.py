"""`repromatrix merge`: per-job results directories into one, safely."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.jobs import write_job

from repromatrix.errors import UserError
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    ResultsDir,
    RunInfo,
)
from repromatrix.results.gather import merge

REPO = Path(__file__).resolve().parents[2]


def _job_results(folder: Path, combo_id: str, status: str = "passed", host: str = "gpu-1") -> Path:
    """What one CI job uploads: a results dir with one combination, its log, results.json."""
    combo = CombinationResult(
        id=combo_id,
        tier="nightly",
        requested={"transformers": "latest"},
        resolved={"transformers": "4.57.0"},
        status=status,
        cases=[CaseResult(id="test_a.py::test_x", status=status, outcome=status)],
        started="2026-11-22T01:00:00+00:00",
        finished="2026-11-22T01:05:00+00:00",
    )
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    (folder / "logs" / f"{combo_id}.cases.log").write_text(f"log of {combo_id}\n")
    run = RunInfo(
        id=f"run-{combo_id}",
        started=combo.started,
        finished=combo.finished,
        tier="nightly",
        matrix="matrix.yaml",
        host={"name": host},
    )
    return write_job(folder, [combo], run)


def test_artifacts_merge_into_one_results_dir_in_matrix_order(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    for name in ("c", "a", "b"):
        _job_results(artifacts / f"results-{name}", name, host=f"gpu-{name}")
    merged = merge(tmp_path / "merged", [artifacts], order=["a", "b", "c"])
    assert [c.id for c in merged.combinations] == ["a", "b", "c"]
    data = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert [c["id"] for c in data["combinations"]] == ["a", "b", "c"]
    assert data["run"]["tier"] == "nightly"
    assert data["run"]["started"] == "2026-11-22T01:00:00+00:00"
    assert sorted(m["host"]["name"] for m in data["run"]["merged_from"]) == [
        "gpu-a",
        "gpu-b",
        "gpu-c",
    ]
    for name in "abc":
        assert (tmp_path / "merged" / "combinations" / f"{name}.json").exists()
        log = tmp_path / "merged" / "logs" / f"{name}.cases.log"
        assert log.read_text() == f"log of {name}\n"


def test_the_same_artifact_twice_is_fine_different_results_are_not(tmp_path: Path) -> None:
    one = _job_results(tmp_path / "one", "a")
    assert len(merge(tmp_path / "merged", [one, one]).combinations) == 1
    other = _job_results(tmp_path / "other", "a", status="failed")
    with pytest.raises(UserError, match=r"combination 'a' is also in .* with different results"):
        merge(tmp_path / "merged2", [one, other])
    assert not (tmp_path / "merged2" / "combinations").exists()  # nothing half-merged
    merged = merge(tmp_path / "merged3", [one, other], replace=True)
    assert merged.combinations[0].status == "failed"


def test_merging_adds_to_what_is_there(tmp_path: Path) -> None:
    merge(tmp_path / "merged", [_job_results(tmp_path / "a", "a")])
    merged = merge(tmp_path / "merged", [_job_results(tmp_path / "b", "b")])
    assert [c.id for c in merged.combinations] == ["a", "b"]


def test_a_corrupt_artifact_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    good = _job_results(tmp_path / "good", "a")
    bad = tmp_path / "bad"
    (bad / "combinations").mkdir(parents=True)
    (bad / "combinations" / "b.json").write_text('{"id": "b", "tier": ')
    with pytest.raises(UserError, match=r"b\.json:1: not valid JSON"):
        merge(tmp_path / "merged", [good, bad])
    assert not (tmp_path / "merged").exists()


def test_a_source_with_no_results(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="holds no results"):
        merge(tmp_path / "merged", [tmp_path / "empty"])


def test_merge_waits_for_no_one_a_claimed_target_is_refused(tmp_path: Path) -> None:
    target = ResultsDir(tmp_path / "merged")
    with target.claimed("update"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "repromatrix",
                "merge",
                "--into",
                str(target.path),
                str(_job_results(tmp_path / "a", "a")),
            ],
            env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "another run is writing here" in done.stderr
    assert not (target.path / "combinations").exists()
