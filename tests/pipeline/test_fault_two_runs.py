"""Two runs aimed at the same results directory: the second is refused with one
line (in each mode), and nothing the first one writes is lost or moved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.faults import (
    WORK_CASES,
    combination_files,
    end_events,
    ids_of,
    make_project,
    one_line,
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
