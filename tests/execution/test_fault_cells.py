"""Cells that go wrong for real, in one matrix run with --jobs 2: a case that
segfaults (a signal, and a NULL read through ctypes), one that aborts, one that
hangs past its case_timeout, a pin that names no release, and an install that
outruns its install_timeout. Each is recorded with its status; the rest of the
matrix finishes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.faults import make_project

pytestmark = pytest.mark.e2e

FAULT_CASES = """
import ctypes
import os
import signal
import time


def test_segfault_signal():
    os.kill(os.getpid(), signal.SIGSEGV)


def test_segfault_null_read():
    ctypes.string_at(0)


def test_abort():
    os.abort()


def test_hang():
    time.sleep(3600)


def test_after_them():
    assert True
"""

OK_CASES = """
def test_fine():
    assert True
"""

MATRIX = """\
schema: 1
packages: [iniconfig, transformers, peft]
tiers:
  t:
    - id: faulty
      iniconfig: latest
      case_timeout: 4
      cases: [test_faults.py]
    - id: no-such-version
      iniconfig: "99.99.99"
      cases: [test_ok.py]
    - id: install-too-slow
      # A real resolve (transformers + peft drag in torch, ~1 s) with 0.3 s allowed.
      transformers: latest
      peft: latest
      install_timeout: 0.3
      cases: [test_ok.py]
    - id: healthy
      iniconfig: "2.0.0"
      cases: [test_ok.py]
"""


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory, shared_env_store: Path):
    root = tmp_path_factory.mktemp("faulty")
    project = make_project(
        root / "project",
        shared_env_store,
        MATRIX,
        {"test_faults.py": FAULT_CASES, "test_ok.py": OK_CASES},
    )
    done = project.run("--jobs", "2", "--reruns", "1", timeout=300)
    results = json.loads((project.results / "results.json").read_text())
    return done, {c["id"]: c for c in results["combinations"]}


def _case(combo: dict, name: str) -> dict:
    return next(c for c in combo["cases"] if c["id"].endswith(f"::{name}"))


def test_the_run_finishes_and_says_something_failed(outcome) -> None:
    done, combos = outcome
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert list(combos) == ["faulty", "no-such-version", "install-too-slow", "healthy"]
    assert combos["healthy"]["status"] == "passed"
    assert _case(combos["healthy"], "test_fine")["status"] == "passed"


@pytest.mark.parametrize(
    ("case", "signal"),
    [
        ("test_segfault_signal", "SIGSEGV"),
        ("test_segfault_null_read", "SIGSEGV"),
        ("test_abort", "SIGABRT"),
    ],
)
def test_a_dying_interpreter_is_recorded_as_crashed_with_its_signal(outcome, case, signal):
    _, combos = outcome
    record = _case(combos["faulty"], case)
    assert record["status"] == "crashed"
    assert record["error_type"] == signal
    assert f"killed by {signal}" in record["message"]
    assert record["attempts"] == ["crashed", "crashed"]  # the rerun crashed too


def test_a_hang_is_killed_at_its_case_timeout(outcome) -> None:
    _, combos = outcome
    record = _case(combos["faulty"], "test_hang")
    assert record["status"] == "timed-out"
    assert "no result after 4 s" in record["message"]


def test_the_cases_after_the_faults_still_ran(outcome) -> None:
    _, combos = outcome
    faulty = combos["faulty"]
    assert _case(faulty, "test_after_them")["status"] == "passed"
    assert faulty["status"] == "failed"
    assert len(faulty["cases"]) == 5


def test_a_version_that_does_not_exist_is_an_install_error(outcome) -> None:
    _, combos = outcome
    combo = combos["no-such-version"]
    assert combo["status"] == "install-error"
    assert combo["message"].startswith("resolve:")
    assert "99.99.99" in combo["message"]
    assert combo["cases"] == []


def test_an_install_past_its_time_limit_is_an_install_error(outcome) -> None:
    _, combos = outcome
    combo = combos["install-too-slow"]
    assert combo["status"] == "install-error"
    assert combo["message"].startswith("timeout:")
    assert combo["seconds"] < 30  # stopped, not waited out
