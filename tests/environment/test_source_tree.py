"""A package built from a folder is keyed on its source: an edit, a new file or a
commit changes the digest; nothing else does (a run's output that .gitignore hides,
a second look at the same tree)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repromatrix.environment.identity import identity_document, request_document
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.source_tree import source_tree
from repromatrix.environment.uv import Interpreter
from repromatrix.matrix.pins import parse_pin


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=folder, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "src" / "mylib").mkdir(parents=True)
    (tmp_path / "src" / "mylib" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nversion = "0.0.1"\n')
    (tmp_path / ".gitignore").write_text("reports/\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "first")
    return tmp_path


def test_an_uncommitted_edit_changes_the_digest_and_says_dirty(repo: Path) -> None:
    clean = source_tree("mylib", repo, ".")
    assert (clean.commit, clean.dirty) == (_git(repo, "rev-parse", "HEAD"), False)
    assert source_tree("mylib", repo, ".") == clean  # the same tree, the same digest

    (repo / "src" / "mylib" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    edited = source_tree("mylib", repo, ".")
    assert edited.dirty and edited.commit == clean.commit
    assert edited.digest != clean.digest
    assert edited.record() == {
        "path": ".", "digest": edited.digest, "commit": clean.commit, "dirty": True,
    }  # fmt: skip

    _git(repo, "commit", "-qam", "fix")  # committed: the same content, a clean tree
    committed = source_tree("mylib", repo, ".")
    assert not committed.dirty and committed.commit != clean.commit
    assert committed.digest != clean.digest


def test_new_files_count_and_ignored_ones_do_not(repo: Path) -> None:
    before = source_tree("mylib", repo, ".")
    (repo / "reports" / "latest").mkdir(parents=True)
    (repo / "reports" / "latest" / "results.json").write_text("{}")
    assert source_tree("mylib", repo, ".") == before  # a run's output, ignored
    (repo / "src" / "mylib" / "extra.py").write_text("X = 1\n")
    assert source_tree("mylib", repo, ".").digest != before.digest


def test_a_subfolder_is_digested_alone(repo: Path) -> None:
    sub = repo / "src"
    before = source_tree("mylib", sub, "./src")
    (repo / "README.md").write_text("outside the package\n")
    assert source_tree("mylib", sub, "./src").digest == before.digest
    (sub / "mylib" / "__init__.py").write_text("# edited\n")
    assert source_tree("mylib", sub, "./src").digest != before.digest


def test_outside_git_the_files_are_digested(tmp_path: Path) -> None:
    (tmp_path / "mylib.py").write_text("A = 1\n")
    (tmp_path / "__pycache__").mkdir()
    before = source_tree("mylib", tmp_path, ".")
    assert (before.commit, before.dirty) == (None, False)
    (tmp_path / "__pycache__" / "mylib.cpython-311.pyc").write_bytes(b"\0")
    assert source_tree("mylib", tmp_path, ".") == before
    (tmp_path / "mylib.py").write_text("A = 2\n")
    assert source_tree("mylib", tmp_path, ".").digest != before.digest


def test_the_cell_identity_follows_the_source_and_only_there(repo: Path) -> None:
    interpreter = Interpreter("/usr/bin/python3", "3.11.7", "cpython")
    request = EnvRequest(pins=(parse_pin("mylib", ".", base=repo),)).with_sources()
    plain = EnvRequest(pins=(parse_pin("torch", "2.13.0"),))
    assert "sources" not in identity_document(plain.with_sources(), interpreter, {}, "")

    before = identity_document(request, interpreter, {}, "mylib @ file:///x\n")
    before_key = request_document(request, interpreter, {})
    (repo / "src" / "mylib" / "__init__.py").write_text("# edited\n")
    edited = request.with_sources()
    assert identity_document(edited, interpreter, {}, "mylib @ file:///x\n") != before
    assert request_document(edited, interpreter, {}) != before_key
    # uv serves a folder's cached build until pyproject.toml changes: refreshed
    assert edited.source_args() == ["--refresh-package", "mylib"]


def test_a_file_url_of_a_folder_is_keyed_on_its_source_too(repo: Path) -> None:
    request = EnvRequest(pins=(parse_pin("mylib", repo.as_uri()),)).with_sources()
    (tree,) = request.sources
    assert tree.digest == source_tree("mylib", repo, ".").digest


def test_what_runs_write_under_reports_is_no_source_even_when_not_ignored(repo: Path) -> None:
    (repo / ".gitignore").unlink()
    _git(repo, "commit", "-qam", "no .gitignore")
    before = source_tree("mylib", repo, ".")
    (repo / "reports" / "bisect" / "mylib").mkdir(parents=True)
    (repo / "reports" / "bisect" / "mylib" / "bisect.json").write_text("{}")
    assert source_tree("mylib", repo, ".") == before
