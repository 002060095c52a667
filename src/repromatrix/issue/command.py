"""The comment command: one line of an issue comment that starts with ``/repromatrix``.

    /repromatrix sweep PACKAGE FROM..TO [--releases all|latest-patch|first-and-last-patch]
    /repromatrix bisect PACKAGE GOOD BAD [--find first-bad|first-good]
    /repromatrix check
    each with [--pin PKG==VER ...] [--case CASE_ID]
    /repromatrix approve     the issue's repro, as it is now, is the one the watch runs
    /repromatrix keep        the approved repro becomes a case (a pull request adds it)

``parse_comment`` never raises: any text gives ``None`` (no command line in it: the
comment is not for us), a ``Command``, or a ``Refusal`` whose reply says what is wrong
and shows this syntax. Only the syntax is checked here (pure, no network); what needs
the package index (does the package exist, how many releases) is plan.py's.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from repromatrix.errors import UserError
from repromatrix.github.reading import commands
from repromatrix.hunt_table import HUNTS
from repromatrix.matrix.pins import parse_pin_option, pin_text, unique_pins
from repromatrix.names import canonicalize_name

PREFIX = "/repromatrix"
HUNT_KINDS = tuple(row.name for row in HUNTS if row.issue)  # the hunts the bot offers
# ... approve: the repro as it is now is the one the watch runs; keep: the approved
# repro becomes a case of cases/issues/ (issue/keeping.py).
WORDS = ("approve", "keep")
KINDS = (*HUNT_KINDS, *WORDS)
RELEASES = ("all", "latest-patch", "first-and-last-patch")
FINDS = ("first-bad", "first-good")
MAX_LINE = 2000  # characters of the command line
MAX_PINS = 20

_PROBE = "[--pin PKG==VER ...] [--case CASE_ID]"
USAGE = "\n".join(
    [
        f"/repromatrix sweep PACKAGE FROM..TO [--releases {'|'.join(RELEASES)}] {_PROBE}",
        f"/repromatrix bisect PACKAGE GOOD BAD [--find {'|'.join(FINDS)}] {_PROBE}",
        f"/repromatrix check {_PROBE}",
        "/repromatrix approve",
        "/repromatrix keep",
    ]
)

_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
_CASE = re.compile(r"^[A-Za-z0-9_./-]+\.py(?:::[^\s]+)?$")
# Values an option takes (None: a repeatable --pin, collected apart).
_OPTIONS = {"--pin": None, "--releases": RELEASES, "--find": FINDS, "--case": None}


@dataclass(frozen=True)
class Command:
    """A command that parsed: what to run, in words plan.py checks against the index."""

    kind: str  # sweep | bisect | check | approve
    line: str  # the command line as written (shown in the answer's title)
    package: str | None = None
    start: str | None = None  # sweep: FROM; bisect: GOOD
    end: str | None = None  # sweep: TO; bisect: BAD
    pins: tuple[str, ...] = ()  # normalised pin texts
    releases: str = "all"
    find: str = "first-bad"
    case: str | None = None

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "line": self.line,
            "package": self.package,
            "start": self.start,
            "end": self.end,
            "pins": list(self.pins),
            "releases": self.releases,
            "find": self.find,
            "case": self.case,
        }


@dataclass(frozen=True)
class Refusal:
    """A command that cannot run: what is wrong, in one line, and the accepted syntax."""

    reason: str
    line: str = ""
    usage: bool = field(default=True)

    def reply(self) -> str:
        said = " ".join(self.reason.split())
        lines = []
        if self.line:
            lines += [f"> `{_shown(self.line)}`", ""]
        lines.append(f"This command cannot run: {said}")
        if self.usage:
            lines += ["", "Accepted syntax:", "", "```", USAGE, "```"]
            lines += [
                "",
                "The repro is the first ```` ```python ```` block of the comment (else of "
                "the issue) whose first line is `# repromatrix` (optionally `# repromatrix: "
                "PKG PKG==VER ...`, the packages it needs), or `--case CASE_ID` from cases/.",
            ]
        return "\n".join(lines)


def _shown(line: str, limit: int = 200) -> str:
    line = " ".join(line.split())
    line = line if len(line) <= limit else line[: limit - 1] + "…"
    return line.replace("`", "'")


def command_line(text: str) -> str | None:
    """The first line of ``text`` that GitHub shows as plain paragraph text starting
    with /repromatrix (github.reading.commands: not in code, a quote, a list or raw
    HTML, nor after a form feed or NEL on a line); None when there is none."""
    found = commands(text, PREFIX)
    return found[0] if found else None


def parse_comment(text: object) -> Command | Refusal | None:
    """The command in a comment body, a refusal, or None when there is no command."""
    if not isinstance(text, str):
        return None
    line = command_line(text)
    if line is None:
        return None
    return parse_line(line)


def parse_line(line: str) -> Command | Refusal:
    if len(line) > MAX_LINE:
        return Refusal(f"the command line is {len(line)} characters; at most {MAX_LINE}", line)
    try:
        words = shlex.split(line)
    except ValueError as err:  # an unclosed quote
        return Refusal(f"cannot split the command line ({err})", line)
    if len(words) < 2:
        return Refusal(f"no command after /repromatrix; give {_choices()}", line)
    kind = words[1]
    if kind not in KINDS:
        return Refusal(f"unknown command {_quoted(kind)}; give {_choices()}", line)
    if kind in WORDS:
        if len(words) > 2:
            return Refusal(f"{kind} takes nothing after it; got {_quoted(words[2])}", line)
        return Command(kind, line)
    try:
        positional, options = _split(words[2:])
        return _command(kind, line, positional, options)
    except UserError as err:
        return Refusal(str(err), line)


def _choices() -> str:
    return ", ".join(KINDS[:-1]) + f" or {KINDS[-1]}"


def _quoted(word: str, limit: int = 60) -> str:
    shown = word if len(word) <= limit else word[: limit - 1] + "…"
    return "'" + shown.replace("`", "'").replace("\n", " ") + "'"


def _split(words: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    positional: list[str] = []
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name not in _OPTIONS:
                raise UserError(f"unknown option {_quoted(name)}")
            if not eq:
                if i + 1 >= len(words):
                    raise UserError(f"{name} needs a value")
                value = words[i + 1]
                i += 1
            choices = _OPTIONS[name]
            if choices is not None and value not in choices:
                raise UserError(f"{name} {_quoted(value)}: give one of {', '.join(choices)}")
            if name != "--pin" and name in options:
                raise UserError(f"{name} is given twice")
            options.setdefault(name, []).append(value)
        else:
            positional.append(word)
        i += 1
    return positional, options


def _command(kind: str, line: str, positional: list[str], options: dict[str, list[str]]) -> Command:
    pins = _pins(options.get("--pin", []))
    case = _case(options.get("--case", [None])[0])
    if kind == "check":
        _no_option(kind, options, "--releases", "--find")
        if positional:
            raise UserError(
                f"check takes no arguments besides options; got {_quoted(positional[0])}"
            )
        return Command(kind, line, pins=pins, case=case)
    if kind == "sweep":
        _no_option(kind, options, "--find")
        if len(positional) != 2:
            raise UserError(f"sweep takes PACKAGE FROM..TO; got {len(positional)} arguments")
        package = _package(positional[0])
        start, sep, end = positional[1].partition("..")
        if not sep:
            raise UserError(f"sweep: {_quoted(positional[1])} is not a range FROM..TO (4.50..5.2)")
        low, high = _version(start), _version(end)
        if low > high:
            raise UserError(
                f"sweep: the range {_quoted(positional[1])} is reversed; write the older "
                f"version first: {end}..{start}"
            )
        _not_pinned(package, pins)
        releases = options.get("--releases", ["all"])[0]
        return Command(kind, line, package, start, end, pins, releases=releases, case=case)
    _no_option(kind, options, "--releases")
    if len(positional) != 3:
        raise UserError(f"bisect takes PACKAGE GOOD BAD; got {len(positional)} arguments")
    package = _package(positional[0])
    good, bad = positional[1], positional[2]
    if _version(good) == _version(bad):
        raise UserError(f"bisect: GOOD and BAD are the same version ({good})")
    _not_pinned(package, pins)
    find = options.get("--find", ["first-bad"])[0]
    return Command(kind, line, package, good, bad, pins, find=find, case=case)


def _no_option(kind: str, options: dict[str, list[str]], *names: str) -> None:
    for name in names:
        if name in options:
            raise UserError(f"{kind} takes no {name}")


def _package(text: str) -> str:
    if not _NAME.match(text):
        raise UserError(f"{_quoted(text)} is not a package name")
    return canonicalize_name(text)


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UserError(f"{_quoted(text)} is not a version (PEP 440)") from None


def _pins(texts: list[str]) -> tuple[str, ...]:
    if len(texts) > MAX_PINS:
        raise UserError(f"{len(texts)} --pin options; at most {MAX_PINS}")
    pins = []
    for text in texts:
        if "@" in text or "://" in text:
            # A direct reference would install (and run) code from anywhere.
            raise UserError(f"--pin {_quoted(text)}: only released versions, no URLs")
        pins.append(parse_pin_option(text))
    return tuple(pin_text(p) for p in unique_pins(pins))


def _not_pinned(package: str, pins: tuple[str, ...]) -> None:
    for text in pins:
        if canonicalize_name(parse_pin_option(text).package) == package:
            raise UserError(
                f"--pin {text}: {package} is the package searched; it cannot be pinned too"
            )


def _case(text: str | None) -> str | None:
    if text is None:
        return None
    if not _CASE.match(text) or ".." in text.split("::")[0] or text.startswith("/"):
        raise UserError(f"--case {_quoted(text)}: give a case id of cases/ (test_x.py::test_y)")
    return text
