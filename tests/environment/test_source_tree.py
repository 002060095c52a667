"""A package built from a folder is keyed on its source: an edit, a new file or a
commit changes the digest; nothing else does (a run's output that .gitignore hides,
a second look at the same tree)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repromatrix.environment.identity import identity_document, request_document
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.source_tree import (
    SourceTree,
    changed_text,
    project_root,
    source_files,
    source_tree,
    stage_source,
)
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


def test_a_project_in_a_subfolder_is_digested_alone(repo: Path) -> None:
    sub = repo / "pkgs" / "other"
    (sub / "other").mkdir(parents=True)
    (sub / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "1"\n')
    (sub / "other" / "__init__.py").write_text("A = 1\n")
    before = source_tree("other", sub, "./pkgs/other")
    (repo / "README.md").write_text("outside the package\n")
    (repo / "src" / "mylib" / "__init__.py").write_text("# another package\n")
    assert source_tree("other", sub, "./pkgs/other").digest == before.digest
    (sub / "other" / "__init__.py").write_text("# edited\n")
    assert source_tree("other", sub, "./pkgs/other").digest != before.digest


def test_a_folder_without_its_own_pyproject_is_its_projects(repo: Path) -> None:
    """The project root of the pyproject that owns the pin: ./src is mylib's."""
    assert project_root(repo / "src") == repo
    before = source_tree("mylib", repo / "src", "./src")
    assert before.digest == source_tree("mylib", repo, ".").digest
    (repo / "README.md").write_text("part of the sdist\n")
    assert source_tree("mylib", repo / "src", "./src").digest != before.digest


def test_matrix_yaml_reports_and_build_outputs_are_not_the_package(repo: Path) -> None:
    """Adding an atlas: block to matrix.yaml marks nothing dirty; nor does what a
    build leaves (build/, *.egg-info) or a run writes, committed or not."""
    (repo / "matrix.yaml").write_text("schema: 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "matrix")
    before = source_tree("mylib", repo, ".", beside=repo)
    assert not before.dirty
    (repo / "matrix.yaml").write_text("schema: 1\natlas: {axes: [transformers]}\n")
    (repo / "build" / "lib" / "mylib").mkdir(parents=True)
    (repo / "build" / "lib" / "mylib" / "__init__.py").write_text("")
    (repo / "src" / "mylib.egg-info").mkdir()
    (repo / "src" / "mylib.egg-info" / "PKG-INFO").write_text("Name: mylib\n")
    (repo / "dist").mkdir()
    (repo / "dist" / "mylib-0.0.1.tar.gz").write_bytes(b"\0")
    after = source_tree("mylib", repo, ".", beside=repo)
    assert (after.digest, after.dirty) == (before.digest, False)
    _git(repo, "commit", "-qam", "atlas block")  # committed: a new commit, the same source
    committed = source_tree("mylib", repo, ".", beside=repo)
    assert committed.digest == before.digest and committed.commit != before.commit


def test_matrix_beside_the_pin_in_a_subfolder_is_left_out_too(repo: Path) -> None:
    tests = repo / "tests" / "matrix"
    tests.mkdir(parents=True)
    before = source_tree("mylib", repo, "../..", beside=tests)
    (tests / "matrix.yaml").write_text("schema: 1\n")
    (tests / "reports" / "latest").mkdir(parents=True)
    (tests / "reports" / "latest" / "results.json").write_text("{}")
    assert source_tree("mylib", repo, "../..", beside=tests) == before


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


def test_a_copy_of_the_source_is_staged_once_named_by_its_digest(
    repo: Path, tmp_path_factory
) -> None:
    """The build runs in the copy: the user's tree gets no build/ or *.egg-info."""
    store = tmp_path_factory.mktemp("store")
    (repo / "notes.txt").write_text("untracked, not ignored: part of the source\n")
    (repo / "reports" / "latest").mkdir(parents=True)
    (repo / "reports" / "latest" / "results.json").write_text("{}")
    tree = source_tree("mylib", repo, ".")
    root, files = source_files(repo)
    assert root == repo
    assert sorted(files) == [".gitignore", "notes.txt", "pyproject.toml", "src/mylib/__init__.py"]
    staged = stage_source(store, tree, repo)
    assert staged.parent.name == "_sources" and tree.digest[7:31] in staged.name
    assert (staged / "src" / "mylib" / "__init__.py").read_text() == (
        repo / "src" / "mylib" / "__init__.py"
    ).read_text()
    assert not (staged / "reports").exists() and not (staged / ".git").exists()
    (staged / "build").mkdir()  # what a build leaves stays in the copy
    assert stage_source(store, tree, repo) == staged  # made once
    assert not (repo / "build").exists()


def test_a_source_reads_back_and_says_what_changed() -> None:
    old = SourceTree("mylib", ".", "sha256:" + "a" * 64, "abc1234" + "0" * 33, False)
    new = SourceTree("mylib", ".", "sha256:" + "b" * 64, "def5678" + "0" * 33, True)
    assert SourceTree.of_record("mylib", new.record()) == new
    assert new.label() == "mylib . def5678 + edits, sha256:bbbbbbbbbbbb"
    assert changed_text(old, new) == "abc1234 -> def5678 + edits"
    again = SourceTree("mylib", ".", "sha256:" + "c" * 64, new.commit, True)
    assert changed_text(new, again) == (
        "def5678 + edits (sha256:bbbbbbbbbbbb) -> def5678 + edits (sha256:cccccccccccc)"
    )


def test_a_project_with_its_version_from_git_builds_where_it_is(repo: Path) -> None:
    from repromatrix.environment.source_tree import builds_in_place

    assert not builds_in_place(repo)
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools", "setuptools-scm"]\n'
        '[project]\nname = "mylib"\ndynamic = ["version"]\n'
    )
    assert builds_in_place(repo)


@pytest.mark.e2e
def test_a_setuptools_build_leaves_nothing_in_the_users_tree(repo: Path, tmp_path_factory) -> None:
    """setuptools writes build/ and *.egg-info beside its sources: they go to the copy;
    an edit is a new copy, built again, and the cell holds the edited module."""
    from repromatrix.environment.store import EnvStore

    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "mylib"\nversion = "0.0.1"\n'
    )
    _git(repo, "commit", "-qam", "setuptools")
    store = EnvStore(tmp_path_factory.mktemp("envs"))
    pins = (parse_pin("mylib", ".", base=repo),)

    def add_of(env) -> str:
        probe = "import mylib; print(mylib.add(2, 2))"
        return subprocess.run([env.python, "-c", probe], capture_output=True, text=True).stdout

    first = store.build(EnvRequest(pins=pins, tooling=()))
    assert add_of(first).strip() == "0"
    assert sorted(p.name for p in repo.iterdir()) == [".git", ".gitignore", "pyproject.toml", "src"]
    assert sorted(p.name for p in (repo / "src").iterdir()) == ["mylib"]
    (repo / "src" / "mylib" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    second = store.build(EnvRequest(pins=pins, tooling=()))
    assert add_of(second).strip() == "4" and second.identity != first.identity
    assert not (repo / "build").exists() and not list(repo.rglob("*.egg-info"))
