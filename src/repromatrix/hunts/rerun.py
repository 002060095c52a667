"""What a hunt's report tells a reader to run: the command that reruns the search
(the nox session where the reader's folder's noxfile has it, else repromatrix
itself), its ``--as-of`` as given, the way out when the date cap of ``--as-of`` kept
candidates from installing; and what every record says reproduces it
(``reproducible``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from repromatrix import __version__
from repromatrix.environment import IndexSettings
from repromatrix.matrix.pins import Pin, pin_text
from repromatrix.matrix.sessions import command_line
from repromatrix.names import canonicalize_name
from repromatrix.probe.spec import Probe
from repromatrix.results import utc_now


def reproducible(
    pins: Sequence[Pin], probe: Probe, index: IndexSettings, command: str
) -> dict[str, Any]:
    """What every hunt's record (bisect.json, sweep.json, culprit.json) says
    reproduces it, and when it started: its pins, probe, indexes (credentials masked,
    local paths reduced), the command that reruns it, and repromatrix's version."""
    return {
        "started": utc_now(),
        "pins": [pin_text(pin) for pin in pins],
        "probe": probe.record(),
        "index": index.describe(),
        "command": command,
        "repromatrix": __version__,
    }


def rerun_command(command: str, args: list[str]) -> str:
    """``nox -s bisect -- ARGS`` where the working folder's noxfile has that session,
    ``repromatrix bisect ARGS`` elsewhere (matrix.sessions.command_line's rule)."""
    return command_line(command, args, folder=Path.cwd())


def as_of_args(as_of: str | None, package: str) -> list[str]:
    """``--as-of`` as the command line needs it to mean the same again: nothing for
    the default (the searched package), ``none`` for today's stack."""
    if as_of is None:
        return ["--as-of", "none"]
    if canonicalize_name(as_of) == canonicalize_name(package):
        return []
    return ["--as-of", as_of]


def note_refusal(refused: dict[str, Any], version: str, capped: Iterable[str]) -> None:
    """Add one candidate that did not install because of the date cap on ``capped``
    (probe.observation.DateCap's packages) to ``refused``: {"packages": [...],
    "candidates": [...]}."""
    packages = refused.setdefault("packages", [])
    packages += [p for p in capped if p not in packages]
    refused.setdefault("candidates", []).append(version)


def refusal_line(refused: dict[str, Any], what: str, quote: str = "") -> str:
    """One line: how many candidates the cap refused, which package's cap, what to run
    (between ``quote`` marks: a backtick in Markdown)."""
    count = len(refused.get("candidates") or [])
    packages = ", ".join(refused.get("packages") or [])
    return (
        f"{count} {what}{'s' if count != 1 else ''} did not install: the --as-of date cap "
        f"on {packages} refused what a pin needs; for today's stack run: "
        f"{quote}{refused['rerun']}{quote}"
    )


def shown_path(path: Path) -> str:
    """A path for a report or a command (bisect, culprit): relative to the working
    folder when it is inside it, else its name."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path.name
