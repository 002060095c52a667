"""The requirement markers ship with the cell plugin: a project's own cases folder,
with no conftest.py and no pytest.ini, gets gpu / requires / unsloth as skips."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from repromatrix.execution.runner import PLUGIN, PLUGIN_DIR

CASES = """\
import pytest


def test_example():
    assert 1 + 1 == 2


@pytest.mark.gpu
def test_needs_a_gpu():
    raise AssertionError("ran without a GPU")


@pytest.mark.requires("pytest>=1")
def test_met_requirement():
    pass


@pytest.mark.requires("no-such-package-here>=1")
def test_unmet_requirement():
    raise AssertionError("ran without its requirement")


@pytest.mark.requires("pytest<1")
def test_wrong_version():
    raise AssertionError("ran on the wrong version")


@pytest.mark.unsloth
def test_needs_unsloth():
    raise AssertionError("ran without unsloth")
"""


def test_markers_skip_with_their_reason_in_a_bare_cases_folder(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_mine.py").write_text(CASES)
    records = tmp_path / "records.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(PYTHONPATH=str(PLUGIN_DIR), REPROMATRIX_RECORDS=str(records))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider", "-q"),
            *("--strict-markers", "-W", "error::pytest.PytestUnknownMarkWarning"),
        ],
        cwd=cases,
        env=env,
        capture_output=True,
        text=True,
    )
    ends = {
        r["id"].split("::")[1]: r
        for r in map(json.loads, records.read_text().splitlines())
        if r["event"] == "end"
    }
    assert done.returncode == 0, done.stdout + done.stderr
    outcomes = {name: r["outcome"] for name, r in ends.items()}
    assert outcomes == {
        "test_example": "passed",
        "test_needs_a_gpu": "skipped",
        "test_met_requirement": "passed",
        "test_unmet_requirement": "skipped",
        "test_wrong_version": "skipped",
        "test_needs_unsloth": "skipped",
    }
    assert ends["test_needs_a_gpu"]["message"].startswith("requires a CUDA GPU")
    assert ends["test_unmet_requirement"]["message"] == (
        "needs no-such-package-here>=1; no-such-package-here is not installed"
    )
    assert "pytest" in ends["test_wrong_version"]["message"]
    assert ends["test_needs_unsloth"]["message"] == "needs unsloth; it is not installed"
