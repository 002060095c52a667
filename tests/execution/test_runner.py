"""The case runner: one interpreter, supervised from outside.

A light cell (pytest only) and a temporary cases folder whose cases pass, fail,
skip, crash the interpreter, hang, or fail only on their first run.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from repromatrix.environment import EnvRequest, EnvStore
from repromatrix.execution.runner import COLLECTION_ID, CaseRunner
from repromatrix.matrix.pins import parse_pin

pytestmark = pytest.mark.e2e

CASES = {
    "test_basic.py": """
        import os, pytest

        def test_passes():
            assert 1 + 1 == 2

        def test_fails():
            raise RuntimeError("Trying to backward through the graph a second time")

        @pytest.mark.skip(reason="requires a CUDA GPU; this host has none")
        def test_skips():
            pass

        @pytest.fixture
        def broken():
            raise OSError("fixture broke")

        def test_setup_error(broken):
            pass

        def test_leaks_a_secret():
            raise ValueError("token " + os.environ["CANARY_TOKEN"] + " at " + __file__)
    """,
    "test_crash.py": """
        import os, signal

        def test_before():
            pass

        def test_segfaults():
            os.kill(os.getpid(), signal.SIGSEGV)

        def test_after():
            pass
    """,
    "test_hang.py": """
        import time

        def test_hangs():
            time.sleep(600)

        def test_after_hang():
            pass
    """,
    "test_in_env.py": """
        import iniconfig

        def test_fails_inside_the_environment():
            iniconfig.IniConfig("x.ini", data="[broken")
    """,
    "test_flaky.py": """
        import os, pathlib

        def test_fails_first_time_only():
            marker = pathlib.Path(os.environ["FLAKY_MARKER"])
            if not marker.exists():
                marker.write_text("ran")
                raise AssertionError("first run fails")

        def test_fails_differently_each_run():
            marker = pathlib.Path(os.environ["FLAKY_MARKER"] + ".runs")
            runs = marker.read_text() if marker.exists() else ""
            marker.write_text(runs + "x")
            if len(runs) % 2:
                raise KeyError("a missing key")
            raise AssertionError("a wrong value")
    """,
}


@pytest.fixture(scope="module")
def light_env(tmp_path_factory):
    store = tmp_path_factory.mktemp("envs")
    return EnvStore(store).build(EnvRequest(pins=(parse_pin("iniconfig", "latest"),)))


@pytest.fixture
def cases(tmp_path):
    folder = tmp_path / "cases"
    folder.mkdir()
    for name, body in CASES.items():
        (folder / name).write_text(textwrap.dedent(body))
    return folder


def run(light_env, cases, tmp_path, selection, **kwargs):
    reruns = kwargs.pop("reruns", 0)
    runner = CaseRunner(light_env, cases, log_path=tmp_path / "cases.log", **kwargs)
    result = runner.run(selection, tmp_path / "records.jsonl", reruns=reruns)
    return {case.id: case for case in result.cases}, result


def test_outcomes_messages_and_secrets(light_env, cases, tmp_path, monkeypatch):
    monkeypatch.setenv("CANARY_TOKEN", "canary-4f3a9c1e")
    by_id, result = run(
        light_env, cases, tmp_path, ["test_basic.py"], extra_env={"CANARY_TOKEN": "canary-4f3a9c1e"}
    )
    assert {k.split("::")[1]: v.outcome for k, v in by_id.items()} == {
        "test_passes": "passed",
        "test_fails": "failed",
        "test_skips": "skipped",
        "test_setup_error": "error",
        "test_leaks_a_secret": "failed",
    }
    failed = by_id["test_basic.py::test_fails"]
    assert failed.error_type == "RuntimeError"
    assert failed.message == "Trying to backward through the graph a second time"
    assert "raise RuntimeError" in failed.traceback
    assert by_id["test_basic.py::test_skips"].message == "requires a CUDA GPU; this host has none"
    leaked = by_id["test_basic.py::test_leaks_a_secret"]
    assert "canary-4f3a9c1e" not in leaked.message + leaked.traceback
    assert str(cases) not in leaked.message and "<cases>/test_basic.py" in leaked.message
    assert "canary-4f3a9c1e" not in (tmp_path / "cases.log").read_text()
    assert result.interpreters == 1


def test_a_crash_is_recorded_with_its_signal_and_the_rest_still_runs(light_env, cases, tmp_path):
    by_id, result = run(light_env, cases, tmp_path, ["test_crash.py"])
    crashed = by_id["test_crash.py::test_segfaults"]
    assert crashed.outcome == "crashed"
    assert "SIGSEGV" in crashed.message
    assert by_id["test_crash.py::test_before"].outcome == "passed"
    assert by_id["test_crash.py::test_after"].outcome == "passed"
    assert result.interpreters == 2


def test_a_hanging_case_times_out_and_the_rest_still_runs(light_env, cases, tmp_path):
    # 10 s: the limit also covers the interpreter's start and collection, which took
    # over 3 s on a loaded 2-core machine (the case then read "<collection> timed-out").
    by_id, _ = run(light_env, cases, tmp_path, ["test_hang.py"], case_timeout=10)
    assert by_id["test_hang.py::test_hangs"].outcome == "timed-out"
    assert by_id["test_hang.py::test_after_hang"].outcome == "passed"


def test_mixed_outcomes_over_reruns_are_flaky(light_env, cases, tmp_path):
    marker = tmp_path / "flaky-marker"
    by_id, _ = run(
        light_env,
        cases,
        tmp_path,
        ["test_flaky.py"],
        reruns=2,
        extra_env={"FLAKY_MARKER": str(marker)},
    )
    case = by_id["test_flaky.py::test_fails_first_time_only"]
    assert case.outcome == "flaky"
    assert case.attempts == ["failed", "passed"]


def test_the_same_failure_twice_is_not_run_a_third_time(light_env, cases, tmp_path):
    """Deterministic: two fresh interpreters failed with one signature (the error's
    type and message), so a third would only cost its time."""
    by_id, _ = run(light_env, cases, tmp_path, ["test_basic.py::test_fails"], reruns=2)
    assert by_id["test_basic.py::test_fails"].outcome == "failed"
    assert by_id["test_basic.py::test_fails"].attempts == ["failed", "failed"]


def test_a_failure_that_changes_between_runs_gets_every_rerun(light_env, cases, tmp_path):
    marker = tmp_path / "flaky-marker"
    selection = ["test_flaky.py::test_fails_differently_each_run"]
    by_id, _ = run(light_env, cases, tmp_path, selection, reruns=2,
                   extra_env={"FLAKY_MARKER": str(marker)})  # fmt: skip
    assert by_id[selection[0]].attempts == ["failed", "failed", "failed"]


def test_records_already_written_are_not_run_again(light_env, cases, tmp_path):
    run(light_env, cases, tmp_path, ["test_crash.py::test_before"])
    records = (tmp_path / "records.jsonl").read_text()
    by_id, _ = run(light_env, cases, tmp_path, ["test_crash.py::test_before"])
    assert (tmp_path / "records.jsonl").read_text() == records  # nothing ran twice
    assert by_id["test_crash.py::test_before"].outcome == "passed"


def test_an_unknown_selection_is_one_error_not_a_loop(light_env, cases, tmp_path):
    by_id, result = run(light_env, cases, tmp_path, ["test_nope.py"])
    assert list(by_id) == [COLLECTION_ID]
    assert by_id[COLLECTION_ID].outcome == "error"
    assert "test_nope.py" in by_id[COLLECTION_ID].message
    assert result.interpreters <= 2


def test_failures_the_caller_expects_are_not_rerun(light_env, cases, tmp_path):
    runner = CaseRunner(light_env, cases, log_path=tmp_path / "cases.log")
    result = runner.run(
        ["test_basic.py::test_fails", "test_crash.py::test_segfaults"],
        tmp_path / "records.jsonl",
        reruns=2,
        rerun_wanted=lambda case_id: case_id != "test_basic.py::test_fails",
    )
    attempts = {case.id: case.attempts for case in result.cases}
    assert attempts["test_basic.py::test_fails"] == ["failed"]
    assert attempts["test_crash.py::test_segfaults"] == ["crashed", "crashed"]  # deterministic


def test_relative_paths_are_taken_from_the_callers_directory(
    light_env, cases, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    runner = CaseRunner(light_env, "cases", log_path=Path("logs.txt"))
    result = runner.run(["test_crash.py::test_before"], Path("out") / "records.jsonl")
    assert [case.outcome for case in result.cases] == ["passed"]
    assert (tmp_path / "out" / "records.jsonl").exists() and (tmp_path / "logs.txt").exists()


def test_paths_into_a_custom_env_dir_read_env_in_tracebacks(light_env, cases, tmp_path):
    """The store here is a tmp folder near cases/ (as with REPROMATRIX_ENV_DIR):
    pytest writes the environment's files relative to cases/, as ../../…/venv/…"""
    by_id, _ = run(light_env, cases, tmp_path, ["test_in_env.py"])
    failed = by_id["test_in_env.py::test_fails_inside_the_environment"]
    assert failed.outcome == "failed"
    assert "<env>/venv/lib/" in failed.traceback, failed.traceback
    assert "../" not in failed.traceback and str(light_env.root) not in failed.traceback
