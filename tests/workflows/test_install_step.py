"""The workflows' "Install repromatrix" step, run as written: with the runner's uv,
and on a runner without uv (it pip-installs uv into the job's temp folder first)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def _install_steps(step_name: str = "Install repromatrix") -> dict[str, str]:
    found = {}
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            for step in job.get("steps", []):
                if step.get("name") == step_name:
                    found[f"{path.name}:{name}"] = step["run"]
    return found


def test_every_workflow_installs_with_the_same_commands() -> None:
    steps = _install_steps()
    assert set(steps) == {
        "nightly.yml:setup",
        "nightly.yml:gather",
        "nightly-combination.yml:combination",
        "bisect.yml:inputs",
        "bisect.yml:bisect",
        "culprit.yml:inputs",
        "culprit.yml:culprit",
        "smoke.yml:smoke",
    }
    # setup and gather call `repromatrix` by name: they also put .venv/bin on PATH.
    plain = {name: run.replace('echo "$PWD/.venv/bin" >> "$GITHUB_PATH"\n', "")
             for name, run in steps.items()}  # fmt: skip
    assert len(set(plain.values())) == 1, plain
    assert steps["nightly.yml:setup"].endswith('echo "$PWD/.venv/bin" >> "$GITHUB_PATH"\n')
    # issue-repro.yml's jobs install the wheel its parse job built, the same way.
    wheel = _install_steps("Install repromatrix from the plan's wheel")
    assert set(wheel) == {f"issue-repro.yml:{job}" for job in ("parse", "ack", "run", "post")}
    nightly = steps["nightly.yml:setup"].replace('"$REPROMATRIX_SOURCE"', "plan/tool/*.whl")
    assert set(wheel.values()) == {nightly}, wheel


@pytest.mark.e2e
def test_the_step_without_uv_on_path_installs_uv_first(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(work)], input=archive.stdout, check=True)
    (tmp_path / "temp").mkdir()
    no_uv = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "uv").exists()
    )
    step = _install_steps()["nightly-combination.yml:combination"]
    env = {**os.environ, "PATH": no_uv, "RUNNER_TEMP": str(tmp_path / "temp")}
    env["REPROMATRIX_SOURCE"] = "."

    done = subprocess.run(
        ["bash", "-e", "-c", step], cwd=work, env=env, capture_output=True, text=True
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "temp" / "uv" / "bin" / "uv").is_file()
    version = subprocess.run(
        [str(work / ".venv" / "bin" / "repromatrix"), "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("repromatrix ")
