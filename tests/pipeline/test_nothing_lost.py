"""A run refused for bad input costs nothing: after a real run (and the one before
it, kept as latest.previous), each bad input below gets one line and exit 2, and
both folders are byte for byte as they were.

The runs are real and need no network: their one cell pins a git URL on a closed
port, an install error within a second.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.faults import harness_env, make_project

from repromatrix.cli import main
from repromatrix.results import ResultsDir

MATRIX = """\
schema: 1
packages: [iniconfig, torch]
tiers:
  t:
    - id: closed-port
      iniconfig: "git+https://127.0.0.1:9/iniconfig.git"
      cases: [test_ok.py]
"""


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("kept")
    project = make_project(
        root / "p", root / "envs", MATRIX, {"test_ok.py": "def test_ok():\n    pass\n"}
    )
    command = [
        sys.executable,
        "-m",
        "repromatrix",
        "run",
        "--tier",
        "t",
        "--env-dir",
        str(project.env_dir),
    ]
    for _ in range(2):  # the second run moves the first to latest.previous
        done = subprocess.run(
            command, cwd=project.root, env=harness_env(), capture_output=True, text=True
        )
        assert done.returncode == 1, done.stderr  # an install error: a finished run
    assert (project.results / "results.json").is_file()
    assert (project.results.with_name("latest.previous") / "results.json").is_file()
    return project


def _unwritable(tmp_path: Path) -> Path:
    """A folder this process cannot write: root ignores permissions, but not a
    read-only mount."""
    if os.geteuid() == 0:
        if not os.access("/proc/sys", os.F_OK) or os.access("/proc/sys", os.W_OK):
            pytest.skip("running as root with no read-only folder to try")
        return Path("/proc/sys/repromatrix-results")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    return locked / "results"


BAD_INPUTS = {
    "cases-folder-missing": (["--cases", "{root}/nowhere"], "no cases folder"),
    "unknown-selection": (["test_missing.py"], "no such file in cases/"),
    "unknown-case-in-a-file": (["test_missing.py::test_x"], "no such file in cases/"),
    "selection-outside-cases": (["../matrix.yaml"], "not a case in cases/"),
    "unknown-combination": (["--combination", "nope"], "no combination with id 'nope'"),
    "unknown-tier": (["--tier", "nope"], "unknown tier"),
    "env-dir-is-a-file": (["--env-dir", "{root}/matrix.yaml"], "is a file"),
    "env-dir-under-a-file": (["--env-dir", "{root}/matrix.yaml/envs"], "is a file"),
    "baseline-missing": (["--baseline", "{root}/nowhere.json"], "no such results file"),
    "known-issues-missing": (["--known-issues", "{root}/nowhere.yaml"], "nowhere.yaml"),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_a_refused_run_keeps_latest_and_previous(project, name, capsys) -> None:
    args, expected = BAD_INPUTS[name]
    latest, previous = project.results, project.results.with_name("latest.previous")
    before = _snapshot(latest), _snapshot(previous)
    argv = ["run", "--matrix", str(project.matrix), "--results", str(latest)]
    argv += [a.format(root=project.root) for a in args]
    if "--tier" not in args:
        argv += ["--tier", "t"]
    if "--env-dir" not in args:
        argv += ["--env-dir", str(project.env_dir)]
    cwd = os.getcwd()
    os.chdir(project.root)
    try:
        code = main(argv)
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], err
    assert (_snapshot(latest), _snapshot(previous)) == before


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("a-file", lambda root, tmp: root / "matrix.yaml"),
        ("under-a-file", lambda root, tmp: root / "matrix.yaml" / "results"),
        ("unwritable", lambda root, tmp: _unwritable(tmp)),
    ],
)
def test_a_results_folder_that_cannot_be_written(project, tmp_path, name, where, capsys) -> None:
    target = where(project.root, tmp_path)
    code = main(
        [
            "run",
            "--matrix",
            str(project.matrix),
            "--tier",
            "t",
            "--results",
            str(target),
            "--env-dir",
            str(project.env_dir),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "--results" in err and str(target) in err
    assert "Traceback" not in err


@pytest.mark.parametrize("option", ["--results", "--env-dir"])
def test_an_env_dir_or_results_folder_in_a_locked_folder(project, tmp_path, option, capsys):
    target = _unwritable(tmp_path)
    argv = ["run", "--matrix", str(project.matrix), "--tier", "t"]
    argv += ["--results", str(target if option == "--results" else tmp_path / "r")]
    argv += ["--env-dir", str(target if option == "--env-dir" else project.env_dir)]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{option} " in err and "cannot be written" in err
    assert not (tmp_path / "r").exists()


def test_a_rotation_killed_half_way_gets_its_previous_back(tmp_path: Path) -> None:
    """A fresh run moves the old previous aside before replacing it: a kill between
    the two renames leaves it aside, and the next claim of any kind puts it back."""
    latest = tmp_path / "latest"
    latest.mkdir()
    (latest / "results.json").write_text("latest")
    aside = tmp_path / ".latest.previous.old"
    aside.mkdir()
    (aside / "results.json").write_text("previous")  # where the kill left it
    with ResultsDir(latest).claimed("update"):
        pass
    assert (tmp_path / "latest.previous" / "results.json").read_text() == "previous"
    assert (latest / "results.json").read_text() == "latest"
    assert not aside.exists()
