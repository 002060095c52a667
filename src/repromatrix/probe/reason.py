"""What a probe said about its outcome, as one line: a step's detail in bisect.md,
sweep.json's ``message``, culprit steps and the console.

A script step's detail is the exit status and the probe's own reason, chosen in
this order (``probe_reason``):

1. the script died of an uncaught exception (exit 1, a traceback on stderr): the
   exception's line, ``exit 1: RuntimeError: ...`` (whatever it printed before was
   progress, not a verdict);
2. else the last non-empty line it printed on stdout: the verdict line a probe
   prints, ``exit 1: bad: checkpoint called without use_reentrant``;
3. else the last line of stderr that is no warning's (``sys.exit("diverged")``).

A warning's lines (``file.py:12: FutureWarning: ...`` and the source line under
it) never stand in for the reason: libraries print them on every import.
"""

from __future__ import annotations

import re

# "path/to/file.py:441: FutureWarning: message" (warnings.formatwarning's first line)
_WARNING = re.compile(r"^\S.*:\d+: \w*Warning: ")
_TRACEBACK = "Traceback (most recent call last):"


def probe_reason(returncode: int, stdout: str, stderr: str) -> str:
    """What a script said about its outcome, one line (the order is the module's
    docstring's): an uncaught exception's line, else its last stdout line, else its
    last stderr line that is no warning's."""
    if returncode == 1 and (raised := _uncaught(stderr)):
        return one_line(raised)
    printed = [line for line in stdout.splitlines() if line.strip()]
    if printed:
        return one_line(printed[-1])
    said = _unwarned(stderr)
    return one_line(said[-1]) if said else ""


def _uncaught(stderr: str) -> str:
    """The exception line of the last traceback on stderr ("RuntimeError: ..."):
    the first line after its header that is not a frame (frames are indented)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    if not starts:
        return ""
    for line in lines[starts[-1] + 1 :]:
        if line.strip() and not line[0].isspace() and not _WARNING.match(line):
            return line
    return ""


def _unwarned(stderr: str) -> list[str]:
    """stderr's non-empty lines without the warnings: a warning's line and the
    indented source line under it."""
    kept: list[str] = []
    in_warning = False
    for line in stderr.splitlines():
        if _WARNING.match(line):
            in_warning = True
            continue
        if in_warning and line[:1].isspace():
            continue
        in_warning = False
        if line.strip():
            kept.append(line)
    return kept


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line of at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
