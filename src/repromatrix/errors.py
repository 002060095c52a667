"""The one error type a user should ever see: a single line, no traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an impossible request, explained in one line.

    The command line prints ``str(error)`` and exits with ``exit_code``; nothing
    else about the failure is shown, so the message must name the file, the key
    and the value at fault.
    """

    exit_code = 2

    def __init__(self, message: str) -> None:
        # One line, whatever the caller passed: a message is read in a CI log.
        super().__init__(" ".join(message.split()))


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
