"""Case ids are relative to cases/ even when the project's own pyproject.toml carries
pytest settings (pytest would otherwise root the ids there: cases/test_a.py::...,
which no matrix selection, known-issue entry or report line names). Found by
running the nightly under act on a repository without cases/pytest.ini."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def test_ids_are_relative_to_cases_under_a_projects_pytest_config(
    tmp_path: Path, shared_env_store: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-ra"\n')
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_a.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "matrix.yaml").write_text(
        "schema: 1\npackages: [torch, six]\ndefaults: {torch: null}\n"
        'tiers:\n  smoke:\n    - {id: one, six: "1.16.0"}\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "run"],
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO / "src"),
            "REPROMATRIX_ENV_DIR": str(shared_env_store),
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "reports" / "latest" / "results.json").read_text())
    [combo] = results["combinations"]
    assert [c["id"] for c in combo["cases"]] == ["test_a.py::test_a"]
