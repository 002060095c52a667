"""The noxfile: one session per combination, tagged by tier, listable as JSON for a
CI job matrix, and a one-line error (no traceback) when matrix.yaml is broken."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

from repromatrix.matrix import load_matrix


def nox(repo, *args, cwd=None):
    env = {**os.environ, "NOX_SCRIPT_MODE": "none"}  # the test venv has the script's deps
    return subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(repo / "noxfile.py"), *args],
        capture_output=True, text=True, env=env, cwd=cwd or repo, timeout=120,
    )  # fmt: skip


def test_json_listing_has_one_session_per_combination_tagged_by_tier(repo_root):
    matrix = load_matrix(repo_root / "matrix.yaml")
    for tier, combos in matrix.tiers.items():
        done = nox(repo_root, "-l", "--json", "-t", tier)
        assert done.returncode == 0, done.stderr
        sessions = {s["session"]: s for s in json.loads(done.stdout)}
        assert set(sessions) == {c.id for c in combos}
        assert all(tier in s["tags"] and not s["python"] for s in sessions.values())


def test_plain_nox_runs_the_smoke_matrix_only(repo_root):
    done = nox(repo_root, "-l", "--json")
    assert [s["session"] for s in json.loads(done.stdout)] == ["matrix"]


def test_a_broken_matrix_is_one_line_and_a_non_zero_exit(repo_root, tmp_path):
    shutil.copy(repo_root / "noxfile.py", tmp_path / "noxfile.py")
    shutil.copy(repo_root / "pyproject.toml", tmp_path / "pyproject.toml")
    os.symlink(repo_root / "src", tmp_path / "src")
    (tmp_path / "matrix.yaml").write_text("tiers: {smoke: [{id: a, transformers: '4.5x'}]}\n")
    done = nox(tmp_path, "-l")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert (
        "matrix.yaml: tiers.smoke[0].transformers: '4.5x' is not a version or specifier"
        in done.stderr
    )


@pytest.mark.parametrize(
    "session",
    [
        "matrix",
        "tests",
        "tests-unit",
        "lint",
        "bisect",
        "sweep",
        "check",
        "culprit",
        "nightly-dry-run",
        "clean",
    ],
)
def test_named_sessions_have_a_description(repo_root, session):
    done = nox(repo_root, "-l", "--json", "-s", session)
    described = {s["session"]: s["description"] for s in json.loads(done.stdout)}
    assert described[session]


@pytest.mark.parametrize(
    ("session", "args", "code"),
    [
        ("check", ["--script", "missing.py", "--pin", "x==1"], 128),  # git bisect run stops
        ("sweep", ["--package", "x", "--from", "1", "--to", "2", "--script", "missing.py"], 2),
    ],
)
def test_check_and_sweep_sessions_call_the_command(repo_root, tmp_path, session, args, code):
    done = nox(repo_root, "-s", session, "--", *args, cwd=tmp_path)
    assert done.returncode != 0
    assert "repromatrix: error: --script missing.py: no such file" in done.stdout + done.stderr
    assert f"failed with exit code {code}" in done.stderr


def test_culprit_session_calls_the_command(repo_root, tmp_path):
    """The session culprit.md's Reproduce line names exists and runs `repromatrix culprit`."""
    args = ["--good-lock", "gone.txt", "--bad-lock", "b.txt", "--script", "probe.py"]
    done = nox(repo_root, "-s", "culprit", "--", *args, cwd=tmp_path)
    assert "Sessions not found" not in done.stderr
    assert (
        "repromatrix: error: --good-lock gone.txt: cannot read the lock"
        in done.stdout + done.stderr
    )
    assert "failed with exit code 2" in done.stderr


def test_every_function_nothing_calls_is_a_session(repo_root):
    """A top-level function the noxfile never calls is a session or dead code: culprit
    lost its @nox.session once and `nox -s culprit` said 'Sessions not found'."""
    tree = ast.parse((repo_root / "noxfile.py").read_text())
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]

    def session_name(function: ast.FunctionDef) -> str:  # @nox.session(name="a-b") or its own
        for decorator in function.decorator_list:
            for keyword in getattr(decorator, "keywords", []):
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return keyword.value.value
        return function.name

    uncalled = {session_name(f) for f in functions if f.name not in called}
    done = nox(repo_root, "-l", "--json", "-k", "True")
    sessions = {s["session"] for s in json.loads(done.stdout)}
    assert uncalled and uncalled <= sessions, uncalled - sessions


def test_installing_sessions_keep_pip_quiet(repo_root):
    """tests and lint install silently: pages of installer output only when it fails."""

    tree = ast.parse((repo_root / "noxfile.py").read_text())
    installs = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "install"
    ]
    assert len(installs) >= 2
    for call in installs:
        silent = {k.arg: k.value for k in call.keywords}.get("silent")
        assert isinstance(silent, ast.Constant) and silent.value is True, ast.unparse(call)


@pytest.mark.e2e
def test_a_nox_without_uv_says_nothing_extra_from_the_second_call_on(repo_root, tmp_path):
    """README's command on a machine without uv: only nox, installed by pip. The first
    call installs the harness's requirements once; no call says "uv binary not found"
    or pip's "Requirement already satisfied" (nox's script mode did both every time)."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("noxfile.py", "pyproject.toml", "matrix.yaml", "README.md"):
        shutil.copy2(repo_root / name, project / name)
    for name in ("src", "cases"):
        shutil.copytree(repo_root / name, project / name,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    venv = tmp_path / "nox-venv"
    subprocess.run([sys.executable, "-m", "virtualenv", "-q", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "NOX_"))}
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"  # no uv anywhere on it
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "nox>=2025.11"],
                   env=env, check=True)  # fmt: skip
    said = []
    for _call in range(2):
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "nox", "-l"], cwd=project,
                              env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        said.append(done.stdout + done.stderr)
    for output in said:
        assert "uv binary not found" not in output
        assert "Requirement already satisfied" not in output
    assert "installing the harness's requirements" in said[0]
    assert "installing" not in said[1] and "tf4.56-peft0.17" in said[1]


def test_clean_session_runs_gc_on_the_store_it_is_given(repo_root, tmp_path):
    done = nox(repo_root, "-s", "clean", "--", "--env-dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "gc: removed 0 environments (0 B); 0 left (0 B)" in done.stdout + done.stderr


def test_the_unit_tier_names_test_files_that_exist(repo_root):
    """tests-unit runs the paths of the noxfile's UNIT: one renamed away would make
    pytest stop with 'file or directory not found' (or, for a folder, run less)."""
    tree = ast.parse((repo_root / "noxfile.py").read_text())
    (unit,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["UNIT"]
    ]
    paths = ast.literal_eval(unit)
    assert "tests/search" in paths
    assert [p for p in paths if not (repo_root / p).exists()] == []
