"""matrix/sessions.py: a noxfile's sessions read without running it, and the command a
report shows: ``nox -s NAME`` only where that noxfile defines NAME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repromatrix.hunt_table import HUNT_NAMES
from repromatrix.matrix import load_matrix
from repromatrix.matrix.sessions import NoxSessions, command_line, read_sessions


def test_the_static_read_agrees_with_nox_on_this_repository(repo_root: Path) -> None:
    every = ["-k", "True"]  # every session, not only the default ones
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(repo_root / "noxfile.py"), "-l", "--json", *every],
        capture_output=True, text=True, cwd=repo_root, timeout=120,
        env={**os.environ, "NOX_SCRIPT_MODE": "none"},
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    nox_names = {s["session"] for s in json.loads(listed.stdout)}
    combinations = {c.id for c in load_matrix(repo_root / "matrix.yaml").combinations()}
    sessions = read_sessions(repo_root)
    assert sessions is not None and sessions.per_combination
    assert sessions.names == nox_names - combinations
    assert "culprit" in sessions.names


def test_the_scaffolds_noxfile_has_a_session_per_hunt(repo_root: Path) -> None:
    # Its hunts come from `repromatrix list --hunts` (name=row.name in a loop).
    sessions = read_sessions(repo_root / "src" / "repromatrix" / "scaffold")
    names = frozenset({"matrix", "report", "nightly-dry-run", *HUNT_NAMES})
    assert sessions == NoxSessions(names, True)


@pytest.mark.parametrize(
    ("source", "names", "per_combination"),
    [
        ("", set(), False),
        ("import nox\n@nox.session(python=False)\ndef lint(session): ...\n", {"lint"}, False),
        ("import nox\n@nox.session(name='docs-build')\ndef docs(s): ...\n", {"docs-build"}, False),
        ("from nox import session\n@session\ndef tests(s): ...\n", {"tests"}, False),
        ("import nox\ndef helper(s): ...\n", set(), False),  # no decorator: no session
        ("import nox\ndef f(s): ...\nnox.session(f, name='one')\n", {"one"}, False),
        ("import nox\ndef f(s): ...\nfor i in ids:\n    nox.session(f, name=i)\n", set(), True),
    ],
)
def test_sessions_are_read_from_decorators_and_calls(
    tmp_path: Path, source: str, names: set[str], per_combination: bool
) -> None:
    (tmp_path / "noxfile.py").write_text(source)
    assert read_sessions(tmp_path) == NoxSessions(frozenset(names), per_combination)


def test_no_noxfile_or_one_that_does_not_parse_has_no_sessions(tmp_path: Path) -> None:
    assert read_sessions(tmp_path) is None
    (tmp_path / "noxfile.py").write_text("def broken(:\n")
    assert read_sessions(tmp_path) is None
    assert command_line("bisect", ["--package", "x"], folder=tmp_path) == (
        "repromatrix bisect --package x"
    )


def test_nox_only_where_the_noxfile_defines_the_session(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(
        textwrap.dedent(
            """\
            import nox

            @nox.session(python=False)
            def bisect(session): ...
            """
        )
    )
    args = ["--package", "peft", "--case", "test_a.py::test_b[x y]"]
    assert command_line("bisect", args, folder=tmp_path) == (
        "nox -s bisect -- --package peft --case 'test_a.py::test_b[x y]'"
    )
    assert command_line("culprit", ["--case", "c"], folder=tmp_path) == (
        "repromatrix culprit --case c"
    )
    # A combination session exists only where the noxfile makes them at load time.
    harness = ["run", "--update", "--combination", "cpu-a"]
    assert command_line("cpu-a", folder=tmp_path, harness=harness, combination=True) == (
        "repromatrix run --update --combination cpu-a"
    )


def test_an_edited_noxfile_is_read_again(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text("import nox\n@nox.session\ndef a(s): ...\n")
    assert read_sessions(tmp_path).names == {"a"}
    noxfile.write_text("import nox\n@nox.session\ndef bb(s): ...\n")  # another size
    assert read_sessions(tmp_path).names == {"bb"}
