"""Matrix files that are not text files of sensible size, and valid YAML that used
to be refused: through `repromatrix list` in a subprocess (a hang would time out)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

VALID = 'schema: 1\npackages: [peft]\ntiers:\n  smoke:\n    - {id: a, peft: "0.17.1"}\n'


def _list(matrix: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", "list", "--matrix", str(matrix)],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert len(lines[0]) < 700  # never megabytes of the input
    for word in words:
        assert word in lines[0]


def test_a_fifo_is_refused_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "matrix.yaml"
    os.mkfifo(fifo)
    _one_line(_list(fifo, timeout=20), "matrix.yaml", "not a regular file")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    _one_line(_list(tmp_path), "not a regular file")


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_bytes(VALID.encode() + b"# \xff\xfe caf\xe9\n")
    _one_line(_list(matrix), "matrix.yaml", "not UTF-8")


def test_a_huge_file_is_refused_before_parsing(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(VALID + ("# padding " + "x" * 90 + "\n") * 50_000)
    _one_line(_list(matrix), "matrix.yaml", "bytes")


def test_an_alias_bomb_ends_fast_in_one_short_line(tmp_path: Path) -> None:
    """Nine levels of ten aliases stand for a billion strings."""
    levels = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(levels + "tiers: {smoke: [{id: x, peft: '0.17.1', tags: *i}]}\n")
    _one_line(_list(matrix, timeout=20), "matrix.yaml", "alias")


def test_nesting_deeper_than_the_interpreter_allows(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("tiers: " + "[" * 5000 + "]" * 5000 + "\n")
    _one_line(_list(matrix), "matrix.yaml", "nested")


@pytest.mark.parametrize(
    "text",
    [
        # a merge key in an entry: the entry's own torch overrides the merged one
        "schema: 1\npackages: [torch, peft]\n"
        'defaults: &base {torch: "2.13.0"}\n'
        "tiers:\n  smoke:\n"
        '    - <<: *base\n      id: a\n      peft: "0.17.1"\n      torch: "2.12.0"\n',
        # a list of merge keys, in tier_defaults
        "schema: 1\npackages: [torch, peft]\n"
        'defaults: &base {torch: "2.12.0"}\n'
        'tier_defaults:\n  smoke:\n    <<: [*base]\n    torch: "2.12.0"\n'
        'tiers:\n  smoke:\n    - {id: a, peft: "0.17.1"}\n',
    ],
)
def test_yaml_merge_keys_are_accepted(tmp_path: Path, text: str) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(text)
    done = _list(matrix)
    assert done.returncode == 0, done.stderr
    assert "torch 2.12.0, peft 0.17.1" in done.stdout


def test_a_key_given_twice_beside_a_merge_is_still_an_error(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        "schema: 1\npackages: [torch, peft]\n"
        'defaults: &base {torch: "2.13.0"}\n'
        "tiers:\n  smoke:\n"
        '    - <<: *base\n      id: a\n      peft: "0.17.1"\n      peft: "0.17.0"\n'
    )
    _one_line(_list(matrix), "matrix.yaml:", "duplicate key 'peft'")
