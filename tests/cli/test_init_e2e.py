"""From any repository, end to end: a wheel of repromatrix installed into a fresh
venv, ``repromatrix init`` in an empty folder, its smoke tier run for real (one
torch 2.13.0 CPU cell) on a machine without pip configuration: torch comes from the
CPU index matrix.yaml names (a local stand-in here, support/cpu_index.py). The
GPU-marked case skips on CPU, the example case passes, and the reports hold no
reference to this repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cpu_index import point_at_local_index, without_pip_configuration

pytestmark = pytest.mark.e2e

EXAMPLE = "test_example.py::test_a_linear_layer_trains_one_step"
GPU = "test_example.py::test_the_same_step_on_a_gpu"


def _uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 1200) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_init_and_run_in_an_empty_folder(repo_root: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    wheels = tmp_path / "dist"
    _run([_uv(), "build", "--wheel", "--out-dir", str(wheels), str(repo_root)], tmp_path, env)
    (wheel,) = wheels.glob("repromatrix-*.whl")
    venv = tmp_path / "tool"
    _run([_uv(), "venv", "--quiet", "-p", sys.executable, str(venv)], tmp_path, env)
    _run([_uv(), "pip", "install", "--quiet", "-p", str(venv / "bin" / "python"), str(wheel)],
         tmp_path, env)  # fmt: skip
    tool = str(venv / "bin" / "repromatrix")

    project = tmp_path / "project"
    project.mkdir()
    _run([tool, "init"], project, env)
    point_at_local_index(project / "matrix.yaml", tmp_path / "index")
    env = without_pip_configuration(env)
    (project / "noxfile.py").unlink()  # a project that uses the command, not nox
    envs = tmp_path / "envs"
    _run([tool, "run", "--env-dir", str(envs)], project, env)  # matrix.yaml found here

    results = project / "reports" / "latest"
    merged = json.loads((results / "results.json").read_text())
    assert merged["run"]["matrix"] == "matrix.yaml"
    (combination,) = merged["combinations"]
    cases = {c["id"]: c for c in combination["cases"]}
    assert cases[EXAMPLE]["status"] == "passed"
    assert cases[GPU]["status"] == "skipped"
    assert cases[GPU]["message"] == "requires a CUDA GPU; this host has none"
    assert combination["resolved"]["torch"] == "2.13.0+cpu"  # from the CPU index
    assert combination["repro"] == f"repromatrix run --update --combination {combination['id']}"

    # One case again, from a subfolder (matrix.yaml found upward): the other result
    # stays, marked as from the earlier run.
    _run([tool, "run", "--update", "--combination", combination["id"], "--env-dir", str(envs),
          "--results", "../reports/latest", GPU], project / "cases", env)  # fmt: skip
    again = json.loads((results / "results.json").read_text())
    assert again["run"]["matrix"] == "../matrix.yaml"
    cases = {c["id"]: c for c in again["combinations"][0]["cases"]}
    assert cases[EXAMPLE]["status"] == "passed"
    assert cases[EXAMPLE]["from_run"] == combination["started"]
    assert cases[GPU]["status"] == "skipped" and cases[GPU]["from_run"] is None

    texts = {
        path.name: path.read_text(errors="replace")
        for path in results.rglob("*")
        if path.is_file() and path.suffix in (".json", ".md", ".html", ".xml", ".txt", ".log")
    }
    assert {"results.json", "summary.md", "index.html", "junit.xml"} <= set(texts)
    for name, text in texts.items():
        assert "repromatrix/cases" not in text, name
        assert str(repo_root) not in text, name
        assert "nox -s" not in text, name
