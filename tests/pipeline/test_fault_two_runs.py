"""Two runs aimed at the same results directory: the second is refused with one
line (in each mode), and nothing the first one writes is lost or moved."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from support import faults

pytestmark = pytest.mark.e2e


def test_a_second_run_into_the_same_directory_is_refused(
    tmp_path: Path, shared_env_store: Path
) -> None:
    project = faults.work_project(tmp_path, shared_env_store, slow_seconds=3)
    first = project.start()
    faults.wait_for(lambda: project.pids("a", "test_slow"), 180, "the first run's slow case")

    for mode in ([], ["--resume"], ["--update"], ["--jobs", "2"]):
        second = project.run(*mode, timeout=120)
        assert second.returncode == 2, (mode, second.stdout, second.stderr)
        line = faults.one_line(second.stderr)
        assert "another run is writing here" in line
        assert str(project.results) in line
        assert second.stdout == ""

    out, err = first.communicate(timeout=240)
    assert first.returncode == 0, out + err
    # The first run's results are complete and its own: every combination once,
    # every case recorded once, no directory moved aside by the refused runs.
    files = faults.combination_files(project.results)
    assert sorted(files) == ["a", "b", "c"]
    faults.assert_every_case_passed_once(project.results)
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
    project = faults.work_project(tmp_path, shared_env_store, slow_seconds=0.1)
    done = project.run()
    assert done.returncode == 0, done.stdout + done.stderr
    complete = (project.results / "results.json").read_bytes()
    previous = project.results.with_name("latest.previous")

    (project.root / "slow.txt").write_text("60")
    for stop in (signal.SIGINT, signal.SIGKILL):
        before = len(project.pids("a", "test_slow"))
        proc = project.start()
        faults.wait_for(
            lambda b=before: len(project.pids("a", "test_slow")) > b, 180, "a slow case"
        )
        if stop == signal.SIGKILL:
            faults.kill_group(proc)
        else:
            os.kill(proc.pid, stop)
            proc.communicate(timeout=120)
            assert proc.returncode == 130
        assert (previous / "results.json").read_bytes() == complete

    assert project.results.with_name("latest.interrupted").is_dir()
    (project.root / "slow.txt").write_text("0.1")
    resumed = project.run("--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert faults.results_ids(project.results) == ["a", "b", "c"]
    assert (previous / "results.json").read_bytes() == complete
