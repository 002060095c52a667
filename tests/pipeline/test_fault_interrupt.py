"""Ctrl-C during `run --jobs 2`: the cells of both running combinations stop, no
case is recorded as crashed by the interrupt, the message is one line, and
--resume finishes the rest. And the GPU share the scheduler hands a combination
reaches its cell as CUDA_VISIBLE_DEVICES without changing its environment."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest
from support.faults import (
    alive,
    assert_every_case_passed_once,
    combination_files,
    end_events,
    make_project,
    one_line,
    results_ids,
    wait_for,
    work_project,
)

from repromatrix.matrix import load_matrix
from repromatrix.pipeline import MatrixRun, RunOptions
from repromatrix.results import ResultsDir

pytestmark = pytest.mark.e2e


def test_ctrl_c_with_two_jobs_records_no_crash_and_resume_finishes(
    tmp_path: Path, shared_env_store: Path
) -> None:
    project = work_project(tmp_path, shared_env_store, slow_seconds=30)
    proc = project.start("--jobs", "2")
    wait_for(
        lambda: project.pids("a", "test_slow") and project.pids("b", "test_slow"),
        180,
        "two slow cases running at once",
    )
    victims = project.pids("a", "test_slow") + project.pids("b", "test_slow")
    os.kill(proc.pid, signal.SIGINT)  # what Ctrl-C sends the harness
    # Generous: the machine may be busy with other tests; a hang would still show.
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 130
    assert "interrupted; finished results are kept" in one_line(err)
    for pid in victims:
        wait_for(lambda pid=pid: not alive(pid), 10, "the cells to stop", step=0.05)
    for combo in "ab":
        records = end_events(project.results / "records" / f"{combo}.jsonl")
        # test_fast finished; the interrupted slow case is not called crashed.
        assert records == {"test_work.py::test_fast": 1}, records
    assert not (project.results / "combinations").exists() or not any(
        (project.results / "combinations").iterdir()
    )

    (project.root / "slow.txt").write_text("0.1")
    done = project.run("--resume", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_every_case_passed_once(project.results)
    runs = project.executions()
    # Only what was missing ran again: the interrupted slow cases, and all of c.
    assert (runs[("a", "test_fast")], runs[("a", "test_slow")]) == (1, 2)
    assert (runs[("b", "test_fast")], runs[("b", "test_slow")]) == (1, 2)
    assert all(runs[("c", case)] == 1 for case in ("test_fast", "test_slow", "test_after"))


def test_the_schedulers_gpu_share_reaches_the_cell(
    tmp_path: Path, shared_env_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    project = make_project(
        tmp_path / "project",
        shared_env_store,
        """\
        schema: 1
        packages: [iniconfig]
        tiers:
          t:
            - {id: a, iniconfig: latest}
        """,
        {
            "test_devices.py": textwrap.dedent(
                """
                import os

                def test_sees_its_share():
                    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1,3"
                """
            )
        },
    )
    matrix = load_matrix(project.matrix)
    out = ResultsDir(project.results)
    options = RunOptions(matrix=project.matrix, env_dir=shared_env_store, reruns=0)
    with out.claimed("fresh"):
        runner = MatrixRun(matrix, options, out, say=lambda _line: None)
        plain = runner.run_combination(matrix.find("a"))
        shared = runner.run_combination(matrix.find("a"), visible_devices="1,3")
    assert plain.cases[0].status == "failed"  # without a share, the variable is not set
    assert shared.cases[0].status == "passed"
    assert shared.visible_devices == "1,3"
    # Same environment: the share is the cell's process environment, not its identity.
    assert shared.environment.identity == plain.environment.identity


@pytest.mark.parametrize(
    ("sig", "words"),
    [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGHUP, "hung up (SIGHUP)")],
)
@pytest.mark.usefixtures("sighup_as_in_a_terminal")  # the run inherits it
def test_sigterm_and_sighup_stop_the_run_as_ctrl_c_does(
    tmp_path: Path, shared_env_store: Path, sig: signal.Signals, words: str
) -> None:
    """A cancelled CI job (SIGTERM) or a closed terminal (SIGHUP) mid-case: one line,
    the cell stopped, the finished case kept, --resume finishes. Before: the harness
    died silently and the cell's interrupted case was left to the parent-death signal."""
    project = work_project(tmp_path, shared_env_store, slow_seconds=30)
    proc = project.start()
    wait_for(lambda: project.pids("a", "test_slow"), 180, "the slow case running")
    victims = project.pids("a", "test_slow")
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 128 + sig
    assert one_line(err) == f"repromatrix: {words}; finished results are kept (--resume continues)"
    for pid in victims:
        wait_for(lambda pid=pid: not alive(pid), 10, "the cell to stop", step=0.05)
    records = end_events(project.results / "records" / "a.jsonl")
    assert records == {"test_work.py::test_fast": 1}, records

    (project.root / "slow.txt").write_text("0.1")
    done = project.run("--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert results_ids(project.results) == ["a", "b", "c"]
    runs = project.executions()
    assert (runs[("a", "test_fast")], runs[("a", "test_slow")]) == (1, 2)


def test_a_closed_output_keeps_the_running_combination_and_stops(
    tmp_path: Path, shared_env_store: Path
) -> None:
    """`repromatrix run | head -2`: the reader goes away after two lines. The
    combination running finishes and is recorded (results.json has it), no other
    starts, one line says why, and --resume runs the rest. Before: the closed pipe
    broke the running combination and nothing was recorded, silently."""
    project = work_project(tmp_path, shared_env_store, slow_seconds=1)
    proc = project.start()
    assert proc.stdout is not None
    head = [proc.stdout.readline() for _ in range(2)]
    assert all(head), head
    proc.stdout.close()  # what head does after its two lines
    err = proc.stderr.read() if proc.stderr else ""
    proc.wait(timeout=180)
    assert proc.returncode == 128 + signal.SIGPIPE, err
    assert one_line(err) == (
        "repromatrix: stopped: its output was closed; finished results are kept "
        "(--resume continues)"
    )
    assert results_ids(project.results) == ["a"]
    assert sorted(combination_files(project.results)) == ["a"]

    done = project.run("--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "a: kept from the interrupted run" in done.stdout
    assert results_ids(project.results) == ["a", "b", "c"]
    assert all(n == 1 for n in project.executions().values())
