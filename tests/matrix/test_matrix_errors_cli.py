"""Malformed matrix.yaml files through the real entry points, each in a subprocess:
`python -m repromatrix list`, `python -m repromatrix run` and `nox -l`. Every one
exits non-zero with one line on stderr naming the file, the key and the problem,
and no traceback; `run` writes no results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.malformed_matrices import VARIANTS, Variant

REPO = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src")
    env.update(extra)
    return env


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_present.py").write_text("def test_x():\n    pass\n")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(text)
    return matrix


def _one_line_error(done: subprocess.CompletedProcess, variant: Variant | None) -> str:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert "matrix.yaml" in line
    if variant is not None:
        assert variant.where in line, line
        assert variant.problem in line, line
    return line


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _nox_list(matrix: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nox", "-l", "-f", str(REPO / "noxfile.py")],
        cwd=cwd,
        env=_env(REPROMATRIX_MATRIX=str(matrix)),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_there_are_at_least_twenty_variants() -> None:
    assert len(VARIANTS) >= 20
    assert len({v.name for v in VARIANTS}) == len(VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_each_entry_point_names_file_key_and_problem(tmp_path: Path, variant: Variant) -> None:
    matrix = _project(tmp_path, variant.text)
    results = tmp_path / "reports"
    _one_line_error(_cli("list", "--matrix", str(matrix), cwd=tmp_path), variant)
    _one_line_error(
        _cli("run", "--matrix", str(matrix), "--results", str(results), cwd=tmp_path), variant
    )
    assert not results.exists()  # refused before anything was claimed or written
    _one_line_error(_nox_list(matrix, tmp_path), variant)


def test_a_missing_matrix_file(tmp_path: Path) -> None:
    missing = tmp_path / "matrix.yaml"
    for done in (
        _cli("list", "--matrix", str(missing), cwd=tmp_path),
        _cli("run", "--matrix", str(missing), "--results", str(tmp_path / "r"), cwd=tmp_path),
        _nox_list(missing, tmp_path),
    ):
        assert "no such matrix file" in _one_line_error(done, None)


def test_an_unknown_tier_on_the_command_line(tmp_path: Path) -> None:
    matrix = _project(
        tmp_path, 'schema: 1\npackages: [peft]\ntiers:\n  smoke:\n    - {id: a, peft: "0.17.1"}\n'
    )
    for args in (["list", "--tier", "nightly"], ["run", "--tier", "nightly"]):
        done = _cli(*args, "--matrix", str(matrix), cwd=tmp_path)
        line = _one_line_error(done, None)
        assert "tiers.nightly: unknown tier (known: smoke)" in line
