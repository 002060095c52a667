"""The maintainer's walk, outside this repository, with files of its own: a fresh git
repository of a small library, ``repromatrix init``, a ``mylib: "."`` combination
beside torch. The case fails on a bug, passes after the fix without a commit or a
version bump (the edit rebuilds that cell; the version stays 0.0.1), and the results
record the two trees differently; an unchanged tree reuses its cell; ``check --pin
mylib=.`` builds the same tree from the command line; a breaking edit judged against
the passing run is a regression that says the user's source changed, in a summary.md
that names the tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
OWN_TIER = """
  # The repository's own package, built from its folder (relative to this file).
  own:
    - {id: torch2.13-mylib, torch: "2.13.0", mylib: "."}
"""


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   cwd=folder, check=True, capture_output=True)  # fmt: skip


def _cli(project: Path, envs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REPROMATRIX_ENV_DIR": str(envs)}
    return subprocess.run([sys.executable, "-m", "repromatrix", *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=1200)  # fmt: skip


def _library(project: Path) -> None:
    (project / "src" / "mylib").mkdir(parents=True)
    (project / "src" / "mylib" / "__init__.py").write_text(BUGGY)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "mylib"\nversion = "0.0.1"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    (project / "cases" / "test_mylib.py").write_text(
        "def test_add():\n    import mylib\n\n    assert mylib.add(2, 2) == 4\n"
    )


def test_own_package_fails_then_passes_after_an_uncommitted_fix(tmp_path: Path) -> None:
    project, envs = tmp_path / "mylib", tmp_path / "envs"
    project.mkdir()
    _git(project, "init", "-q")
    assert _cli(project, envs, "init").returncode == 0
    _library(project)
    matrix = (project / "matrix.yaml").read_text()
    matrix = matrix.replace("schema: 1\n", "schema: 1\npackages: [torch, transformers, mylib]\n")
    (project / "matrix.yaml").write_text(matrix.replace("\ntiers:\n", f"\ntiers:{OWN_TIER}"))
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "mylib 0.0.1")
    case = "test_mylib.py::test_add"

    def run() -> tuple[dict, str]:
        done = _cli(project, envs, "run", "--tier", "own", "--reruns", "0", case)
        results = json.loads((project / "reports/latest/results.json").read_text())
        return results["combinations"][0], done.stdout + done.stderr

    bad, said = run()
    assert bad["verdict"] == "FAILING", said
    assert bad["requested"]["mylib"] == "."
    assert bad["resolved"]["mylib"] == "0.0.1"
    assert bad["resolved"]["torch"].startswith("2.13.0")
    source = bad["environment"]["sources"]["mylib"]
    assert source["dirty"] is False and len(source["commit"]) == 40
    assert "assert -0 == 4" in said or "AssertionError" in said  # the error, as it happens

    (project / "src" / "mylib" / "__init__.py").write_text(FIXED)  # no commit, no bump
    good, said = run()
    assert good["verdict"] == "PASS", said
    assert good["resolved"]["mylib"] == "0.0.1"
    fixed = good["environment"]["sources"]["mylib"]
    assert fixed["dirty"] is True and fixed["commit"] == source["commit"]
    assert fixed["digest"] != source["digest"]
    assert good["environment"]["identity"] != bad["environment"]["identity"]
    assert not good["environment"]["reused"]
    print(f"rebuilt after the edit in {good['environment']['build_seconds']} s")

    # matrix.yaml is no part of the package: editing it (an atlas: block, a comment)
    # leaves the source, hence the cell, as it was.
    matrix_file = project / "matrix.yaml"
    matrix_file.write_text(matrix_file.read_text() + "# the atlas block goes here\n")
    again, said = run()  # the same tree: the same cell
    assert again["environment"]["identity"] == good["environment"]["identity"]
    assert again["environment"]["reused"], said
    assert again["environment"]["sources"]["mylib"]["digest"] == fixed["digest"]
    assert not list(project.rglob("*.egg-info")) and not (project / "build").exists()

    probe = project / "probe.py"
    probe.write_text("import sys, mylib\nsys.exit(0 if mylib.add(2, 2) == 4 else 1)\n")
    checked = _cli(project, envs, "check", "--pin", "mylib=.", "--pin", "torch==2.13.0",
                   "--script", "probe.py")  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "mylib .: commit" in checked.stdout + checked.stderr

    # A breaking edit, judged against the passing run: a regression whose only change
    # is the user's own source, and every report names the tree it is about.
    baseline = tmp_path / "baseline.json"
    baseline.write_text((project / "reports/latest/results.json").read_text())
    (project / "src" / "mylib" / "__init__.py").write_text("def add(a, b):\n    return a * b + 1\n")
    done = _cli(project, envs, "run", "--tier", "own", "--reruns", "0", "--baseline",
                str(baseline), case)  # fmt: skip
    assert done.returncode == 1
    summary = (project / "reports/latest/summary.md").read_text()
    short = source["commit"][:7]
    assert f"your source changed: {short} + edits (sha256:" in summary, summary
    assert f"your source `mylib . {short} + edits, sha256:" in summary
    assert "same versions as then" not in summary
