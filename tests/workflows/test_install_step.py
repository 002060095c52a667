"""The workflows' one install step, .github/actions/install-repromatrix, run as written
(docs/setup.md): the dependencies from a hashed lock (--require-hashes), then
repromatrix itself with --no-deps: by default the wheel init shipped in
.github/repromatrix/, only when it is what its SHA256SUMS says; from a requirement;
from a plan folder only when the folder is what its digest says (a file changed, added
or linked: nothing is installed) and it holds its lock. Offline here: tiny wheels from
a local folder stand in for the index (tests/support/wheels.py)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest
from support.wheels import pure_wheel

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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def index(tmp_path: Path) -> dict[str, str]:
    """An index of one dependency (tinydep 1.0), and the variables that make uv use it
    alone: the environment of every offline install below."""
    links = tmp_path / "links"
    links.mkdir()
    pure_wheel(links, "tinydep", "1.0", {"tinydep.py": "X = 1\n"})
    from uv import find_uv_bin  # the runner's uv, first on PATH

    path = f"{Path(find_uv_bin()).parent}{os.pathsep}{os.environ['PATH']}"
    return {"UV_FIND_LINKS": str(links), "UV_NO_INDEX": "1", "UV_OFFLINE": "1", "PATH": path}


def _tool_folder(
    folder: Path, index: dict[str, str], lock_holds_the_dependency: bool = True
) -> Path:
    """A folder as init ships it: a repromatrix wheel that needs tinydep, its
    SHA256SUMS, and the lock of its dependencies."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = pure_wheel(folder, "repromatrix", "0.0.1", {"repromatrix_tiny.py": "Y = 2\n"},
                       requires=("tinydep>=1",))  # fmt: skip
    (folder / "SHA256SUMS").write_text(f"{_sha256(wheel)}  {wheel.name}\n")
    dependency = Path(index["UV_FIND_LINKS"]) / "tinydep-1.0-py3-none-any.whl"
    lock = f"tinydep==1.0 \\\n    --hash=sha256:{_sha256(dependency)}\n"
    (folder / "requirements.txt").write_text(lock if lock_holds_the_dependency else "")
    return wheel


def _installed(work: Path) -> set[str]:
    site = next((work / ".venv" / "lib").glob("python*/site-packages"))
    return {p.name.split("-")[0] for p in site.glob("*.dist-info")}


def test_with_nothing_given_the_shipped_wheel_and_its_locked_dependencies(
    tmp_path: Path, index: dict[str, str]
) -> None:
    work = tmp_path / "work"
    _tool_folder(work / ".github" / "repromatrix", index)
    done = _install(work, tmp_path, GITHUB_PATH="", **index)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _installed(work) == {"repromatrix", "tinydep"}


def test_a_shipped_wheel_that_is_not_what_its_sums_say_installs_nothing(
    tmp_path: Path, index: dict[str, str]
) -> None:
    work = tmp_path / "work"
    wheel = _tool_folder(work / ".github" / "repromatrix", index)
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    done = _install(work, tmp_path, **index)
    assert done.returncode != 0
    assert "is not what .github/repromatrix/SHA256SUMS says" in done.stdout
    assert "nothing installed" in done.stdout and not (work / ".venv").exists()


def test_a_lock_that_lacks_a_dependency_is_one_line_naming_the_fix(
    tmp_path: Path, index: dict[str, str]
) -> None:
    work = tmp_path / "work"
    _tool_folder(work / ".github" / "repromatrix", index, lock_holds_the_dependency=False)
    done = _install(work, tmp_path, **index)
    assert done.returncode != 0
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("::error::")]
    assert "does not hold" in line and "tinydep" in line and "init --upgrade" in line


def test_a_requirement_gets_its_dependencies_from_the_lock(
    tmp_path: Path, index: dict[str, str]
) -> None:
    work = tmp_path / "work"
    wheel = _tool_folder(work / ".github" / "repromatrix", index)
    other = _tool_folder(tmp_path / "elsewhere", index)
    assert other.read_bytes() == wheel.read_bytes()
    (work / ".github" / "repromatrix" / "SHA256SUMS").write_text("")  # not read: a source
    done = _install(work, tmp_path, SOURCE=str(other), **index)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _installed(work) == {"repromatrix", "tinydep"}
    # Without the lock, it says so and resolves now (a repository made before it).
    (work / ".github" / "repromatrix" / "requirements.txt").unlink()
    subprocess.run(["rm", "-rf", str(work / ".venv")], check=True)
    done = _install(work, tmp_path, SOURCE=str(other), **index)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::warning::install-repromatrix: no hashed lock" in done.stdout


def test_nothing_to_install_is_one_line(tmp_path: Path) -> None:
    done = _install(tmp_path, tmp_path)
    assert done.returncode != 0
    assert re.fullmatch(r"::error::install-repromatrix: nothing to install: .*\n", done.stdout)
    assert "REPROMATRIX_SOURCE" in done.stdout and "repromatrix init" in done.stdout


@pytest.fixture
def plan(tmp_path: Path, index: dict[str, str]) -> Path:
    folder = tmp_path / "plan"
    _tool_folder(folder / "tool", index)
    (folder / "plan.json").write_text('{"jobs": []}')
    return folder


def test_a_checked_plan_installs_its_wheel_and_locked_dependencies(
    tmp_path: Path, plan: Path, index: dict[str, str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = _install(work, tmp_path, PLAN=str(plan), PLAN_SHA256=_digest(plan), **index)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _installed(work) == {"repromatrix", "tinydep"}


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


def test_a_plan_needs_its_digest_its_lock_and_one_wheel(tmp_path: Path, plan: Path) -> None:
    done = _install(tmp_path, tmp_path, PLAN=str(plan), PLAN_SHA256="")
    assert done.returncode != 0 and "plan-sha256 is not a sha256" in done.stdout
    (plan / "tool" / "repromatrix-0.0.2-py3-none-any.whl").write_bytes(b"x")
    done = _install(tmp_path, tmp_path, PLAN=str(plan), PLAN_SHA256=_digest(plan))
    assert done.returncode != 0 and "holds 2 repromatrix wheels, not one" in done.stdout
    (plan / "tool" / "repromatrix-0.0.2-py3-none-any.whl").unlink()
    # A write job never resolves the wheel's dependencies: no lock, nothing installed.
    (plan / "tool" / "requirements.txt").unlink()
    done = _install(tmp_path, tmp_path, PLAN=str(plan), PLAN_SHA256=_digest(plan))
    assert done.returncode != 0 and "holds no requirements.txt" in done.stdout
    assert not (tmp_path / ".venv").exists()


def test_pack_writes_the_tool_folder_a_plan_carries(tmp_path: Path, index: dict[str, str]) -> None:
    work = tmp_path / "work"
    wheel = _tool_folder(work / ".github" / "repromatrix", index)
    env = {**os.environ, "SOURCE": ""}
    done = subprocess.run(["bash", str(ACTION / "pack.sh"), "plan/tool"], cwd=work,
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"path=plan/tool/{wheel.name}\n"
    for name in (wheel.name, "SHA256SUMS", "requirements.txt"):
        assert (work / "plan" / "tool" / name).read_bytes() == (wheel.parent / name).read_bytes()
    (work / ".github" / "repromatrix" / "requirements.txt").unlink()
    done = subprocess.run(["bash", str(ACTION / "pack.sh"), "again"], cwd=work,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode != 0 and "is not in this repository" in done.stdout


@pytest.mark.e2e
def test_the_step_without_uv_on_path_installs_uv_from_the_lock_first(tmp_path: Path) -> None:
    """This repository's own CI: the checkout (.) with the committed lock, and uv's pin
    and hashes from it where the runner has no uv."""
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
    uv = tmp_path / "temp" / "uv" / "bin" / "uv"
    pinned = re.search(r"^uv==(\S+)", (work / ".github/repromatrix/requirements.txt").read_text(),
                       re.M)  # fmt: skip
    assert pinned and subprocess.run([str(uv), "--version"], capture_output=True,
                                     text=True).stdout.split()[1] == pinned[1]  # fmt: skip
    assert github_path.read_text() == f"{work / '.venv' / 'bin'}\n"
    version = subprocess.run(
        [str(work / ".venv" / "bin" / "repromatrix"), "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("repromatrix ")
