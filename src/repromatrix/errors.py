"""The one error type a user should ever see: a single line, no traceback."""

from __future__ import annotations

import os


class UserError(Exception):
    """Bad input or an impossible request, explained in one line.

    The command line prints ``str(error)`` and exits with ``exit_code``; nothing
    else about the failure is shown, so the message must name the file, the key
    and the value at fault.
    """

    exit_code = 2

    def __init__(self, message: str) -> None:
        # One line, whatever the caller passed: a message is read in a CI log; and
        # short, whatever value it quotes (a value may be megabytes of input).
        line = " ".join(message.split())
        if len(line) > MAX_MESSAGE:
            line = line[: MAX_MESSAGE - 1] + "…"
        super().__init__(line)


MAX_MESSAGE = 600


def key_path(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """Render a location like ``('tiers', 'smoke', 2, 'transformers')`` as
    ``tiers.smoke[2].transformers``."""
    out = ""
    for part in parts:
        if isinstance(part, str) and "[" in part:
            continue  # pydantic's name for a member of a union ("str-enum[CaseOutcome]")
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def writable_folder(path: str | os.PathLike[str], option: str, *, renamed: bool = False) -> None:
    """Refuse, in one line, a folder the tool is about to write into that is a
    file, sits under a file, or cannot be created or written; checked before
    anything is written, so that a bad option never costs a stored run. ``renamed``:
    the folder itself will be moved aside (a fresh run), so its parent is written too."""
    path = os.path.abspath(os.fspath(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise UserError(f"{option} {path}: is a file, not a folder")
    existing = path
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        raise UserError(f"{option} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: {existing} cannot be written (permission denied)")
    parent = os.path.dirname(path)
    if renamed and existing == path and not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: {parent} cannot be written (permission denied)")
