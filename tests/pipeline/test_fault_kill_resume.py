"""SIGKILL to the harness's whole process group at several moments, then
`run --resume`: only what is missing runs, and no finished result is lost or
duplicated (checked in the combination files, results.json, the per-case records
and a ledger that the cases themselves write each time they really start)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.faults import (
    Project,
    alive,
    combination_files,
    end_events,
    ids_of,
    kill_group,
    results_ids,
    wait_for,
    work_project,
)

pytestmark = pytest.mark.e2e

CASES = ("test_fast", "test_slow", "test_after")


def _project(tmp_path: Path, env_dir: Path) -> Project:
    return work_project(tmp_path, env_dir)


def _building(env_dir: Path) -> bool:
    """An environment folder exists and is not complete: uv is installing it."""
    return any(
        (home / "lock.txt").exists() and not (home / "complete").exists()
        for home in env_dir.glob("*")
        if home.is_dir() and not home.name.startswith("_")
    )


def _ended(project: Project) -> dict[str, dict[str, int]]:
    """Per combination, the cases the records say finished (read right after the kill)."""
    return {combo: end_events(project.results / "records" / f"{combo}.jsonl") for combo in "abc"}


def _resume_and_check(
    project: Project, kept: dict[str, bytes], ended: dict[str, dict[str, int]], jobs: str = "1"
) -> None:
    """Resume; then every combination and case is there exactly once, the ones
    finished before the kill untouched and not run again."""
    before = project.executions()
    done = project.run("--resume", "--jobs", jobs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr

    files = combination_files(project.results)
    assert sorted(files) == ["a", "b", "c"]
    assert results_ids(project.results) == ["a", "b", "c"]
    for combo, content in kept.items():
        assert files[combo] == content, f"{combo} was rewritten"
        assert f"{combo}: kept from the interrupted run" in done.stdout
    after = project.executions()
    for combo in "abc":
        records = end_events(project.results / "records" / f"{combo}.jsonl")
        assert records == dict.fromkeys(ids_of(CASES), 1), (combo, records)
        for case, case_id in zip(CASES, ids_of(CASES), strict=True):
            # The resumed run started each missing case once, and nothing finished.
            ran_now = after[(combo, case)] - before[(combo, case)]
            finished_before = combo in kept or ended[combo].get(case_id, 0) > 0
            assert ran_now == (0 if finished_before else 1), (combo, case, ran_now)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_killed_mid_case_then_resumed(tmp_path: Path, shared_env_store: Path, jobs: str) -> None:
    project = _project(tmp_path, shared_env_store)
    proc = project.start("--jobs", jobs)
    wait_for(lambda: project.pids("b", "test_slow"), 180, "combination b's slow case")
    kill_group(proc)
    victim = project.pids("b", "test_slow")[0]
    # The cell's pytest was started with a parent-death signal: it does not outlive
    # the harness and race the resumed run.
    wait_for(lambda: not alive(victim), 10, "the orphaned cell to die", step=0.05)

    kept = combination_files(project.results)
    assert "b" not in kept
    ended = _ended(project)
    assert ended["b"].get("test_work.py::test_fast") == 1
    _resume_and_check(project, kept, ended, jobs)
    # Mid-case: b's first case is not rerun, the one that was killed is.
    assert project.executions()[("b", "test_fast")] == 1
    assert project.executions()[("b", "test_slow")] == 2


def test_killed_between_combinations_then_resumed(tmp_path: Path, shared_env_store: Path) -> None:
    project = _project(tmp_path, shared_env_store)
    proc = project.start()
    wait_for(lambda: (project.results / "combinations" / "a.json").exists(), 180, "a's result file")
    kill_group(proc)
    kept = combination_files(project.results)
    assert "a" in kept
    _resume_and_check(project, kept, _ended(project))
    assert all(project.executions()[("a", c)] == 1 for c in CASES)


def test_killed_during_install_then_resumed(tmp_path: Path) -> None:
    # A store of its own: the environments must really be built while the kill comes.
    env_dir = tmp_path / "envs"
    project = _project(tmp_path, env_dir)
    proc = project.start()
    wait_for(lambda: _building(env_dir), 180, "an environment being installed", step=0.001)
    kill_group(proc)
    kept = combination_files(project.results)
    _resume_and_check(project, kept, _ended(project))
    # The half-built environment was not trusted: every stored one is complete.
    homes = [h for h in env_dir.glob("*") if h.is_dir() and not h.name.startswith("_")]
    assert homes and all((h / "complete").exists() for h in homes)
    assert all(project.executions()[(c, k)] == 1 for c in "abc" for k in CASES)


def test_killed_twice_then_resumed(tmp_path: Path, shared_env_store: Path) -> None:
    """A resumed run can itself be killed: the second resume still loses nothing."""
    project = _project(tmp_path, shared_env_store)
    proc = project.start()
    wait_for(lambda: project.pids("a", "test_slow"), 180, "a's slow case")
    kill_group(proc)
    proc = project.start("--resume")
    wait_for(lambda: project.pids("b", "test_slow"), 180, "b's slow case")
    kill_group(proc)
    kept = combination_files(project.results)
    assert "a" in kept
    _resume_and_check(project, kept, _ended(project))
    assert project.executions()[("a", "test_slow")] == 2
    assert project.executions()[("a", "test_fast")] == 1
