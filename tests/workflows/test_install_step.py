"""The workflows' one install step, .github/actions/install-repromatrix, run as written:
from a requirement (with the runner's uv, or none on PATH: it pip-installs uv into the
job's temp folder first), and from a plan folder only when the folder is what its
digest says (a file changed, added or linked: nothing is installed)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / ".github" / "actions" / "install-repromatrix"


def _install(work: Path, temp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ACTION / "install.sh")],
        cwd=work,
        env={**os.environ, "RUNNER_TEMP": str(temp), **env},
        capture_output=True,
        text=True,
    )


def _digest(folder: Path) -> str:
    done = subprocess.run(
        ["bash", str(ACTION / "digest.sh"), str(folder)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    folder = tmp_path / "plan"
    (folder / "tool").mkdir(parents=True)
    (folder / "tool" / "repromatrix-0-py3-none-any.whl").write_bytes(b"not really a wheel")
    (folder / "plan.json").write_text('{"jobs": []}')
    return folder


@pytest.mark.parametrize("change", ["edit", "add", "link"])
def test_a_plan_that_is_not_what_its_digest_says_installs_nothing(
    tmp_path: Path, plan: Path, change: str
) -> None:
    digest = _digest(plan)
    if change == "edit":
        (plan / "plan.json").write_text('{"jobs": [1]}')
    elif change == "add":
        (plan / "tool" / "evil.pth").write_text("import os")
    else:
        (plan / "tool" / "other.whl").symlink_to("/etc/hostname")
    done = _install(tmp_path, tmp_path, PLAN=str(plan), PLAN_SHA256=digest)
    assert done.returncode != 0
    assert "nothing installed" in done.stdout + done.stderr or "not a regular file" in done.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_plan_needs_its_digest_and_one_wheel(tmp_path: Path, plan: Path) -> None:
    done = _install(tmp_path, tmp_path, PLAN=str(plan), PLAN_SHA256="")
    assert done.returncode != 0 and "plan-sha256 is not a sha256" in done.stdout
    (plan / "tool" / "second-0-py3-none-any.whl").write_bytes(b"x")
    done = _install(tmp_path, tmp_path, PLAN=str(plan), PLAN_SHA256=_digest(plan))
    assert done.returncode != 0 and "holds 2 wheels, not one" in done.stdout
    assert not (tmp_path / ".venv").exists()


@pytest.mark.e2e
def test_a_checked_plan_installs_its_wheel(tmp_path: Path) -> None:
    plan = tmp_path / "plan"
    subprocess.run(
        ["uv", "build", "--wheel", "--out-dir", str(plan / "tool"), str(REPO)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "work"
    work.mkdir()
    done = _install(work, tmp_path, PLAN=str(plan), PLAN_SHA256=_digest(plan), GITHUB_PATH="")
    assert done.returncode == 0, done.stdout + done.stderr
    version = subprocess.run(
        [str(work / ".venv" / "bin" / "repromatrix"), "--version"], capture_output=True, text=True
    )
    assert version.stdout.startswith("repromatrix "), version.stderr


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
    github_path = tmp_path / "github_path"
    done = _install(work, tmp_path / "temp", PATH=no_uv, SOURCE=".", GITHUB_PATH=str(github_path))

    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "temp" / "uv" / "bin" / "uv").is_file()
    assert github_path.read_text() == f"{work / '.venv' / 'bin'}\n"
    version = subprocess.run(
        [str(work / ".venv" / "bin" / "repromatrix"), "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("repromatrix ")
