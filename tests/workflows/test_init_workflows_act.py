"""Day one of a maintainer's new repository (docs/setup.md), under act on this CPU
host (tests/support/act.py): repromatrix installed from this repository's folder, as
`pip install PATH-TO-THIS-CLONE` does (direct_url.json: a folder of this machine),
`repromatrix init` in a repository with a small package of its own, a commit, and
nothing set for CI: the push workflow (smoke.yml) installs the wheel init shipped in
.github/repromatrix/ with its hashed lock, and runs the smoke tier green, the package
built from the checkout and torch from the CPU index init's matrix.yaml names (a local
stand-in, support/cpu_index.py) on a runner with no pip configuration; the scheduled
nightly, with no GPU runner configured yet, says so in one line and is green; and every
workflow init wrote passes actionlint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.act import act_run
from support.cpu_index import point_at_local_index
from support.gh_double import GhDouble
from support.wheels import project_toml

pytestmark = [pytest.mark.act, pytest.mark.e2e]


def _run(cmd: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def project(act_ready: None, repo_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The maintainer's repository after `repromatrix init` and a commit, and the folder
    of the repromatrix that ran init."""
    from uv import find_uv_bin

    tool = tmp_path / "tool"
    _run([find_uv_bin(), "venv", "--quiet", "-p", sys.executable, str(tool)], tmp_path)
    _run([find_uv_bin(), "pip", "install", "--quiet", "-p", str(tool / "bin" / "python"),
          str(repo_root)], tmp_path)  # fmt: skip
    project = tmp_path / "project"
    (project / "src" / "tinylib").mkdir(parents=True)
    (project / "pyproject.toml").write_text(project_toml())
    (project / "src" / "tinylib" / "__init__.py").write_text("VALUE = 1\n")
    _run(["git", "init", "-q", "-b", "main"], project)
    said = _run([str(tool / "bin" / "repromatrix"), "init"], project)
    assert "the workflows install this wheel" in said, said
    point_at_local_index(project / "matrix.yaml", tmp_path / "index")
    _run(["git", "add", "-A"], project)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], project)
    return project, tool / "bin"


def test_init_workflows_pass_actionlint(project: tuple[Path, Path]) -> None:
    folder, _ = project
    workflows = sorted(str(p) for p in (folder / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run(["actionlint", *workflows], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_push_runs_the_smoke_tier_green_with_nothing_set(
    project: tuple[Path, Path], tmp_path: Path, shared_env_store: Path
) -> None:
    folder, _ = project
    run = act_run(
        folder,
        workflow="smoke.yml",
        event="push",
        gh=GhDouble(tmp_path / "github"),
        work=tmp_path / "runs",
        variables={},  # no REPROMATRIX_SOURCE: the wheel init shipped
        # a runner with no pip configuration: torch only from matrix.yaml's index
        env={"PIP_FIND_LINKS": "", "REPROMATRIX_ENV_DIR": str(shared_env_store)},
    )
    assert run.returncode == 0, run.tail()
    assert "::warning::install-repromatrix" not in run.log  # the lock was there
    results = json.loads((run.artifact("smoke-reports") / "results.json").read_text())
    (combination,) = results["combinations"]
    assert combination["verdict"] == "PASS"
    assert combination["resolved"]["torch"] == "2.13.0+cpu"
    assert combination["requested"]["tinylib"] == "."  # the package, from the checkout
    cases = {case["id"]: case["status"] for case in combination["cases"]}
    assert cases["test_package.py::test_tinylib_is_installed_from_this_folder"] == "passed"
    assert cases["test_example.py::test_a_linear_layer_trains_one_step"] == "passed"
    # readable: no spinner frames flooding the log (were 428 of 618 lines), the
    # progress bar's final state once
    frames = [line for line in run.log.splitlines() if "━" in line or "\x1b[?25l" in line]
    assert len(frames) <= 2, frames[:5]


def test_the_nightly_without_a_gpu_runner_says_so_and_is_green(
    project: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, _ = project
    gh = GhDouble(tmp_path / "github")
    run = act_run(folder, workflow="nightly.yml", event="schedule", gh=gh,
                  work=tmp_path / "runs")  # fmt: skip
    assert run.returncode == 0, run.tail()
    said = [line for line in run.log.splitlines() if "no GPU runner configured" in line]
    assert said, run.tail()
    assert not gh.calls()  # nothing gathered, no issue opened


def test_the_dry_run_works_in_the_new_repository(
    project: tuple[Path, Path], tmp_path: Path, shared_env_store: Path
) -> None:
    """init's noxfile has the dry run; it runs night 1 of the smoke tier through the
    project's own nightly.yml, with the actions from where the user points (here the
    offline copies; by default act fetches them), gh stood in, and the repromatrix
    that ran init (a folder of this machine will do here)."""
    from support.act import actions_dir

    folder, tool = project
    tools = {**os.environ, "PATH": f"{tool}:{Path(sys.executable).parent}:{os.environ['PATH']}"}
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=folder, env=tools,
                            capture_output=True, text=True)  # fmt: skip
    assert "nightly-dry-run" in listed.stdout, listed.stdout + listed.stderr
    assert "check ->" in listed.stdout and "sweep ->" in listed.stdout
    env = {**tools, "PIP_FIND_LINKS": "", "REPROMATRIX_ENV_DIR": str(shared_env_store)}
    done = subprocess.run(
        [str(tool / "repromatrix"), "dry-run", "--actions", str(actions_dir()),
         "--work", str(tmp_path / "dry")],
        cwd=folder, env=env, capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "PASS           torch2.13-tf4.56" in output
    assert "gh run list --workflow nightly.yml" in output
