"""The command a report or a console line shows to rerun something: ``nox -s NAME -- ARGS``
only where the reader's project has a noxfile.py defining session NAME, else the
``repromatrix`` command that session would run (a project that only installed the tool,
or a noxfile without that session).

The noxfile is read with ``ast``, never imported or run (``nox -l`` takes a second and
runs the project's code): its sessions are the functions decorated with
``@nox.session`` (named by ``name=`` where given) and the ``nox.session(func,
name=...)`` calls; a call named by a row of the hunts' table (``name=row.name``, in a
loop over hunt_table.py's rows, or ``repromatrix list --hunts``'s) is taken to make
one session per hunt; any other name that is not a literal (``name=combination_id`` in
a loop) one session per combination of the matrix beside it, as repromatrix's own
noxfile and ``repromatrix init``'s both do.
"""

from __future__ import annotations

import ast
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from repromatrix.hunt_table import HUNT_NAMES

NOXFILE = "noxfile.py"


@dataclass(frozen=True)
class NoxSessions:
    """The sessions a noxfile.py defines, as read without running it."""

    names: frozenset[str]  # sessions with a literal name, and the hunts' (one per row)
    per_combination: bool  # sessions named at load time: one per combination

    def has(self, name: str, *, combination: bool = False) -> bool:
        """Whether ``nox -s name`` finds a session (``combination``: ``name`` is a
        combination id of the matrix beside this noxfile)."""
        return name in self.names or (combination and self.per_combination)


def read_sessions(folder: Path) -> NoxSessions | None:
    """The sessions of ``folder``/noxfile.py; None where there is none, or it does not
    parse (nox could not load it either)."""
    path = Path(folder) / NOXFILE
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read(path.resolve(), stat.st_mtime_ns, stat.st_size)


def command_line(
    session: str,
    args: Sequence[str] = (),
    *,
    folder: Path,
    harness: Sequence[str] | None = None,
    combination: bool = False,
) -> str:
    """``nox -s SESSION -- ARGS`` when ``folder``'s noxfile.py defines SESSION, else
    ``repromatrix HARNESS ARGS``. ``folder``: where the line is meant to be run (nox
    reads the noxfile there; relative paths in ARGS are relative to it). ``harness``:
    the command the session runs (default ``[session]``: bisect, sweep, check, culprit
    and report are named as their commands). ``combination``: SESSION is a combination
    id of the matrix beside the noxfile (its session is made at load time)."""
    sessions = read_sessions(folder)
    if sessions is not None and sessions.has(session, combination=combination):
        return shlex.join(["nox", "-s", session, *(["--", *args] if args else [])])
    return shlex.join(["repromatrix", *(harness or [session]), *args])


@lru_cache(maxsize=16)
def _read(path: Path, _mtime_ns: int, _size: int) -> NoxSessions | None:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return None
    names: set[str] = set()
    per_combination = False
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                if _is_nox_session(decorator):  # @nox.session: the function's name
                    names.add(node.name)
                elif isinstance(decorator, ast.Call) and _is_nox_session(decorator.func):
                    name = _keyword(decorator, "name")
                    names.add(_literal(name) if name is not None else node.name)
        elif isinstance(node, ast.Call) and _is_nox_session(node.func) and node.args:
            # nox.session(func, name=...): a session made by a call, not a decorator
            name = _keyword(node, "name")
            if name is None and isinstance(node.args[0], ast.Name):
                names.add(node.args[0].id)
            elif _literal(name):
                names.add(_literal(name))
            elif isinstance(name, ast.Attribute) and name.attr == "name":
                names |= HUNT_NAMES  # name=row.name: one session per row of the hunts' table
            else:
                per_combination = True
    names.discard("")
    return NoxSessions(frozenset(names), per_combination)


def _is_nox_session(node: ast.expr) -> bool:
    """``nox.session`` or a bare ``session`` imported from nox."""
    if isinstance(node, ast.Attribute):
        return (
            node.attr == "session" and isinstance(node.value, ast.Name) and node.value.id == "nox"
        )
    return isinstance(node, ast.Name) and node.id == "session"


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _literal(node: ast.expr | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""
