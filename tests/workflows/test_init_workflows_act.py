"""Day one of a repository that ran ``repromatrix init``, under act on this CPU host
(tests/support/act.py), with files of its own: the push workflow (smoke.yml) runs
the smoke tier green, torch coming from the CPU index init's matrix.yaml names (a
local stand-in, support/cpu_index.py) on a runner with no pip configuration; the
scheduled nightly, with no GPU runner configured yet, says so in one line and is
green; and every workflow init wrote passes actionlint."""

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

pytestmark = [pytest.mark.act, pytest.mark.e2e]


def _run(cmd: list[str], cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"


@pytest.fixture
def project(act_ready: None, repo_root: Path, tmp_path: Path) -> tuple[Path, str]:
    """A fresh repository after `repromatrix init`, committed, and where its CI installs
    repromatrix from (the REPROMATRIX_SOURCE variable init's note asks for): a wheel."""
    from uv import find_uv_bin

    dist = tmp_path / "dist"
    _run([find_uv_bin(), "build", "--wheel", "--quiet", "--out-dir", str(dist), str(repo_root)],
         tmp_path)  # fmt: skip
    (wheel,) = dist.glob("repromatrix-*.whl")
    project = tmp_path / "project"
    project.mkdir()
    _run(["git", "init", "-q", "-b", "main"], project)
    _run([sys.executable, "-m", "repromatrix", "init"], project)
    point_at_local_index(project / "matrix.yaml", tmp_path / "index")
    _run(["git", "add", "-A"], project)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], project)
    return project, str(wheel)


def test_init_workflows_pass_actionlint(project: tuple[Path, str]) -> None:
    folder, _ = project
    workflows = sorted(str(p) for p in (folder / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run(["actionlint", *workflows], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_push_runs_the_smoke_tier_green_with_cpu_torch_from_the_index(
    project: tuple[Path, str], tmp_path: Path, shared_env_store: Path
) -> None:
    folder, wheel = project
    run = act_run(
        folder,
        workflow="smoke.yml",
        event="push",
        gh=GhDouble(tmp_path / "github"),
        work=tmp_path / "runs",
        variables={"REPROMATRIX_SOURCE": wheel},
        # a runner with no pip configuration: torch only from matrix.yaml's index
        env={"PIP_FIND_LINKS": "", "REPROMATRIX_ENV_DIR": str(shared_env_store)},
    )
    assert run.returncode == 0, run.tail()
    results = json.loads((run.artifact("smoke-reports") / "results.json").read_text())
    (combination,) = results["combinations"]
    assert combination["verdict"] == "PASS"
    assert combination["resolved"]["torch"] == "2.13.0+cpu"
    # readable: no spinner frames flooding the log (were 428 of 618 lines), the
    # progress bar's final state once
    frames = [line for line in run.log.splitlines() if "━" in line or "\x1b[?25l" in line]
    assert len(frames) <= 2, frames[:5]


def test_the_nightly_without_a_gpu_runner_says_so_and_is_green(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    folder, wheel = project
    gh = GhDouble(tmp_path / "github")
    run = act_run(folder, workflow="nightly.yml", event="schedule", gh=gh,
                  work=tmp_path / "runs", variables={"REPROMATRIX_SOURCE": wheel})  # fmt: skip
    assert run.returncode == 0, run.tail()
    said = [line for line in run.log.splitlines() if "no GPU runner configured" in line]
    assert said, run.tail()
    assert not gh.calls()  # nothing gathered, no issue opened


def test_the_dry_run_works_in_the_new_repository(
    project: tuple[Path, str], tmp_path: Path, shared_env_store: Path
) -> None:
    """init's noxfile has the dry run; it runs night 1 of the smoke tier through the
    project's own nightly.yml, with the actions from where the user points (here the
    offline copies; by default act fetches them), gh stood in."""
    from support.act import actions_dir

    folder, wheel = project
    tools = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=folder, env=tools,
                            capture_output=True, text=True)  # fmt: skip
    assert "nightly-dry-run" in listed.stdout, listed.stdout + listed.stderr
    env = {**os.environ, "PIP_FIND_LINKS": "", "REPROMATRIX_ENV_DIR": str(shared_env_store)}
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "dry-run", "--repromatrix", wheel,
         "--actions", str(actions_dir()), "--work", str(tmp_path / "dry")],
        cwd=folder, env=env, capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "PASS           torch2.13-tf4.56" in output
    assert "gh run list --workflow nightly.yml" in output
