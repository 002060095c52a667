"""Two runs aimed at the same results directory: the second is refused with one
line (in each mode), and nothing the first one writes is lost or moved."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from support.faults import (
    WORK_CASES,
    combination_files,
    end_events,
    ids_of,
    kill_group,
    make_project,
    one_line,
    results_ids,
    three_combinations,
    wait_for,
)

pytestmark = pytest.mark.e2e


def test_a_second_run_into_the_same_directory_is_refused(
    tmp_path: Path, shared_env_store: Path
) -> None:
    project = make_project(
        tmp_path / "project",
        shared_env_store,
        three_combinations(slow_seconds=3),
        {"test_work.py": WORK_CASES},
    )
    first = project.start()
    wait_for(lambda: project.pids("a", "test_slow"), 180, "the first run's slow case")

    for mode in ([], ["--resume"], ["--update"], ["--jobs", "2"]):
        second = project.run(*mode, timeout=120)
        assert second.returncode == 2, (mode, second.stdout, second.stderr)
        line = one_line(second.stderr)
        assert "another run is writing here" in line
        assert str(project.results) in line
        assert second.stdout == ""

    out, err = first.communicate(timeout=240)
    assert first.returncode == 0, out + err
    # The first run's results are complete and its own: every combination once,
    # every case recorded once, no directory moved aside by the refused runs.
    files = combination_files(project.results)
    assert sorted(files) == ["a", "b", "c"]
    data = json.loads((project.results / "results.json").read_text())
    assert [c["id"] for c in data["combinations"]] == ["a", "b", "c"]
    assert all(c["status"] == "passed" for c in data["combinations"])
    for combo in "abc":
        records = end_events(project.results / "records" / f"{combo}.jsonl")
        assert records == dict.fromkeys(ids_of(["test_fast", "test_slow", "test_after"]), 1)
    assert not project.results.with_name("latest.previous").exists()
    # Only the first run's cases ran.
    assert all(n == 1 for n in project.executions().values())
    assert len(project.executions()) == 9


def test_a_complete_run_outlives_two_interrupted_ones(
    tmp_path: Path, shared_env_store: Path
) -> None:
    """A complete run, then a run stopped by Ctrl-C and one killed outright: the
    complete run is still latest.previous, byte for byte (before: latest and
    latest.previous held the two partial runs and the complete one was gone); the
    first partial run is latest.interrupted; --resume finishes the last one."""
    project = make_project(
        tmp_path / "project",
        shared_env_store,
        three_combinations(slow_seconds=0.1),
        {"test_work.py": WORK_CASES},
    )
    done = project.run()
    assert done.returncode == 0, done.stdout + done.stderr
    complete = (project.results / "results.json").read_bytes()
    previous = project.results.with_name("latest.previous")

    (project.root / "slow.txt").write_text("60")
    for stop in (signal.SIGINT, signal.SIGKILL):
        before = len(project.pids("a", "test_slow"))
        proc = project.start()
        wait_for(lambda b=before: len(project.pids("a", "test_slow")) > b, 180, "a slow case")
        if stop == signal.SIGKILL:
            kill_group(proc)
        else:
            os.kill(proc.pid, stop)
            proc.communicate(timeout=120)
            assert proc.returncode == 130
        assert (previous / "results.json").read_bytes() == complete

    assert project.results.with_name("latest.interrupted").is_dir()
    (project.root / "slow.txt").write_text("0.1")
    resumed = project.run("--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert results_ids(project.results) == ["a", "b", "c"]
    assert (previous / "results.json").read_bytes() == complete
