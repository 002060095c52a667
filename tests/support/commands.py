"""Command lines found in docs, docstrings, help texts and reports, and what is wrong
with each: a ``nox`` line against the sessions (and tags) a noxfile has, a
``repromatrix`` line (or the arguments after a session's ``--``) against the CLI's own
parser. Used by tests/test_documented_commands.py.

What counts as a command: a fenced code line, an inline code span (`...` / ``...``), or
a plain-text line that starts with ``nox``, ``python3 -m nox``, ``repromatrix`` or
``python -m repromatrix`` (after ``$ `` or ``cd x &&``). Shell continuations (``\\``
newlines) are joined; a usage synopsis continues on more-indented lines starting with
``[``, ``(`` or ``|``; two or more spaces end the command (a description column follows).

Usage grammar in docs is expanded before parsing: ``[optional]`` parts are included,
``(a | b)`` and ``first-bad|first-good`` give one variant each, ``...`` is "more
arguments" (then a missing required option is not a mistake). Placeholders (``ID``,
``PKG==VER``, ``<combination id>``, ``F.py``) are argument values argparse takes; where
an option's type refuses one (``--jobs N``) that is not a mistake either. The point is
that every command, session, tag and option named exists.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from repromatrix.cli.app import build_parser
from repromatrix.hunt_table import HUNTS

# The command each session runs (its arguments after `--` go to it); a combination
# session runs `run --update --combination ID`. tests and lint pass theirs to pytest.
HARNESS = {
    "matrix": ["run"],
    "report": ["report"],
    "clean": ["gc"],
    # One session per hunt (hunt_table.py), running its command (and what its row puts first).
    **{row.name: [row.name, *row.session] for row in HUNTS},
    "nightly-dry-run": ["dry-run", "--repromatrix", "."],
}
# tests/workflows/test_nightly_dry_run.py runs the documented dry-run line for real;
# lock runs uv pip compile (tests/test_install_lock.py checks what it wrote).
NOT_HARNESS = {"tests", "tests-fast", "tests-unit", "lint", "lock"}

# A path before the program has at least one character before its slash
# (.venv/bin/repromatrix): "/repromatrix sweep ..." is an issue comment's command
# (docs/issue-repro.md), not this command line.
PROGRAM = r"(?:(?:\S*/)?python3?(?:\.\d+)?\s+-m\s+|(?:\S+/)?)(?P<program>nox|repromatrix)(?=\s|$)"
STARTS_WITH_COMMAND = re.compile(rf"^(?:\$\s+)?{PROGRAM}")
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(?:==[A-Z0-9_]+)?|\.\.\.|…")
ANGLE_PLACEHOLDER = re.compile(r"<[A-Za-z][^<>]*>")
INLINE_CODE = re.compile(r"(?<!`)(``?)(?!`)(?P<code>.+?)(?<!`)\1(?!`)", re.DOTALL)
FENCE = re.compile(r"^\s*(```|~~~)")
QUOTES = re.compile(r"^[rRuU]?(?:\"{3}|'{3}|[\"'])|(?:\"{3}|'{3}|[\"'])$")
LABEL = re.compile(r"^[A-Za-z][\w -]*:\s+")
DESCRIPTION_COLUMN = re.compile(r"\s{2,}(?=\S)")


@dataclass(frozen=True)
class Command:
    where: str  # "README.md:77"
    text: str


@dataclass
class Project:
    """What a reader's project has: its nox sessions, combination ids and tags."""

    sessions: set[str]
    combinations: set[str]
    tags: set[str] = field(default_factory=set)

    def harness(self, session: str) -> list[str] | None:
        if session in HARNESS:
            return HARNESS[session]
        if session in self.combinations or is_placeholder(session):
            return ["run", "--update", "--combination", session]
        return None


def is_placeholder(word: str) -> bool:
    return bool(PLACEHOLDER.fullmatch(word))


# -- finding commands in text -------------------------------------------------------------


def in_markdown(text: str, name: str) -> list[Command]:
    """Fenced code lines and inline code spans that are commands."""
    found: list[Command] = []
    outside: list[str] = []
    fenced: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            outside.append("")
            continue
        if inside:
            fenced.append((number, line))
            outside.append("")
        else:
            outside.append(line)
    for number, line in _logical_lines(fenced):
        found += _commands(line, f"{name}:{number}")
    found += _inline(outside, name)
    return found


def in_plain_text(text: str, name: str, first_line: int = 1) -> list[Command]:
    """Lines that start with a command (usage synopses, examples) and inline code spans."""
    lines = list(enumerate(text.splitlines(), first_line))
    found: list[Command] = []
    for number, line in _logical_lines(lines, usage=True):
        line = LABEL.sub("", line, count=1)  # "locally: nox -s ...", "next: repromatrix ..."
        if STARTS_WITH_COMMAND.match(line):
            found += _commands(line, f"{name}:{number}")
    found += _inline([line for _, line in lines], name, first_line)
    return found


def in_python_docstrings(source: str, name: str) -> list[Command]:
    """Commands in a Python file's docstrings (module, classes, functions)."""
    found: list[Command] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and (isinstance(first.value.value, str))
            ):
                # As written in the file: a `\` at a line's end is a shell continuation
                # to the reader (Python's string would have joined the lines).
                written = QUOTES.sub("", ast.get_source_segment(source, first.value) or "")
                found += in_plain_text(written, name, first.lineno)
    return found


def _logical_lines(
    lines: list[tuple[int, str]], *, usage: bool = False
) -> Iterator[tuple[int, str]]:
    """Physical lines joined at `\\` continuations (and, in usage text, at more-indented
    lines starting with `[`, `(` or `|`), each cut at its description column."""
    pending: tuple[int, str, int] | None = None  # (line number, text, indent)
    for number, raw in lines:
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if pending is not None:
            start, text, first_indent = pending
            if text.endswith("\\"):
                pending = (start, text[:-1].rstrip() + " " + _cut(stripped), first_indent)
                continue
            if usage and indent > first_indent and stripped[:1] in ("[", "(", "|"):
                pending = (start, text + " " + _cut(stripped), first_indent)
                continue
            yield start, text
            pending = None
        if stripped:
            pending = (number, _cut(stripped), indent)
    if pending is not None:
        yield pending[0], pending[1].rstrip("\\").rstrip()


def _cut(line: str) -> str:
    """The command before a description column (two or more spaces), kept whole when a
    quote is open there; a trailing `\\` continuation survives."""
    for match in DESCRIPTION_COLUMN.finditer(line):
        head = line[: match.start()]
        if head.count("'") % 2 == 0 and head.count('"') % 2 == 0:
            return head if not line.rstrip().endswith("\\") else head + " \\"
    return line


def _inline(lines: list[str], name: str, first_line: int = 1) -> list[Command]:
    text = "\n".join(lines)
    found: list[Command] = []
    for match in INLINE_CODE.finditer(text):
        code = " ".join(match["code"].split())
        if STARTS_WITH_COMMAND.match(code):
            number = first_line + text.count("\n", 0, match.start())
            found += _commands(code, f"{name}:{number}")
    return found


def _commands(line: str, where: str) -> list[Command]:
    """The commands of one shell line: `a && b`, `a; b` and `a | b` split (a `|` inside a
    usage group is an alternative, not a pipe), those that start with a command kept."""
    found = []
    for part in re.split(r"\s(?:&&|\|\|)\s|;\s", line):
        part = part.strip().removeprefix("$ ").strip()
        if STARTS_WITH_COMMAND.match(part):
            found.append(Command(where, part))
    return found


# -- checking one command -----------------------------------------------------------------


def problems(command: Command, project: Project) -> list[str]:
    """What is wrong with a command line, one string each naming where and what."""
    text = ANGLE_PLACEHOLDER.sub("PLACEHOLDER", command.text)
    try:
        words = shlex.split(text, comments=True)
    except ValueError as error:
        return [f"{command.where}: {command.text!r}: not a shell line ({error})"]
    found: list[str] = []
    for variant, elided in _variants(words):
        for problem in _check(variant, elided, project):
            message = f"{command.where}: {command.text!r}: {problem}"
            if message not in found:
                found.append(message)
    return found


def _check(words: list[str], elided: bool, project: Project) -> list[str]:
    program = STARTS_WITH_COMMAND.match(" ".join(words))
    assert program is not None, words
    args = words[len(shlex.split(program.group(0))) :]
    if program["program"] == "repromatrix":
        problem = harness_problem(args, elided)
        return [problem] if problem else []
    return nox_problems(args, elided, project)


def harness_problem(args: list[str], elided: bool = False) -> str | None:
    """argparse's own error for ``repromatrix ARGS``, or None where it parses."""
    # A usage line's [-h] / [--version] would make argparse stop there, content:
    # the rest of the line is checked.
    args = [a for a in args if a not in ("-h", "--help", "--version")] or args
    if not args or is_placeholder(args[0]):
        return None  # the tool's name in prose, or `repromatrix <command>`
    parser = build_parser()
    message = _parse(parser.parse_args, args)
    if message is None:
        return None
    if len(args) == 1 and "required" in message:
        return None  # `repromatrix merge` named in prose: the command exists
    unknown = _unknown_options(parser, args)
    if unknown:  # argparse names a missing required option before an unknown one
        return f"repromatrix {shlex.join(args)}: no option {', '.join(unknown)}"
    if elided and "required" in message:
        return None  # `repromatrix bisect ...`: the rest is left out on purpose
    value = re.search(r"invalid (?:\w+ value|choice): '([^']*)'", message)
    if value and is_placeholder(value.group(1)):
        return None  # `--jobs N`
    return f"repromatrix {shlex.join(args)}: {message}"


def _unknown_options(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """The --options in ``args`` that its command does not have (nor abbreviates)."""
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = commands.choices.get(args[0])
    if command is None:
        return []
    words = args[1 : args.index("--")] if "--" in args else args[1:]
    steps = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
    if steps and words and words[0] in steps[0].choices:  # `atlas run ...`: its step's
        command, words = steps[0].choices[words[0]], words[1:]
    known = command._option_string_actions
    return [
        word
        for word in words
        if word.startswith("--") and not any(o.startswith(word.split("=")[0]) for o in known)
    ]


def nox_problems(args: list[str], elided: bool, project: Project) -> list[str]:
    # nox's own option parser (nox has no public one): what `nox` itself would refuse.
    from nox._options import options as nox_options

    parsed: list[argparse.Namespace] = []
    message = _parse(lambda a: parsed.append(nox_options.parse_args(a)), args)
    if message is not None:
        return [f"nox: {message.splitlines()[-1]}"]
    (namespace,) = parsed
    found = []
    for session in namespace.sessions or []:
        if session not in project.sessions and not is_placeholder(session):
            found.append(f"no nox session {session!r} (nox -l lists them)")
    for tag in namespace.tags or []:
        if tag not in project.tags:
            found.append(f"no nox session tagged {tag!r}")
    if namespace.posargs:
        for session in namespace.sessions or []:
            harness = project.harness(session)
            if harness is None:
                continue  # tests, lint: arguments for pytest
            problem = harness_problem([*harness, *namespace.posargs], elided)
            if problem:
                found.append(f"session {session}'s command refuses it: {problem}")
    return found


def _parse(parse: Callable[[list[str]], object], args: list[str]) -> str | None:
    """None where ``parse(args)`` accepts them, else the error it printed."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parse(args)
    except SystemExit as done:
        if done.code in (0, None):
            return None  # --help, --version
        return err.getvalue().strip() or f"exit {done.code}"
    return None


# -- usage grammar ------------------------------------------------------------------------

MAX_VARIANTS = 64


def _variants(words: list[str]) -> list[tuple[list[str], bool]]:
    """Each concrete command a usage line stands for, and whether it elides arguments."""
    symbols, elided = _symbols(words)
    variants, _ = _sequence(symbols, 0)
    return [(variant, elided) for variant in variants[:MAX_VARIANTS]]


def _symbols(words: list[str]) -> tuple[list[tuple[str, object]], bool]:
    symbols: list[tuple[str, object]] = []
    opened: list[str] = []
    elided = False
    for word in words:
        while word[:1] in ("[", "(") and (len(word) > 1 or word in ("[", "(")):
            opened.append(word[0])
            symbols.append(("open", word[0]))
            word = word[1:]
        closes = []
        while word[-1:] in ("]", ")") and opened and opened[-1] == "[("[word[-1] == ")"]:
            closes.append(word[-1])
            opened.pop()
            word = word[:-1]
        if word == "|":
            if not opened:
                break  # a shell pipe: the command ends here
            symbols.append(("bar", None))
        elif word in ("...", "…"):
            elided = True
            if symbols and symbols[-1][0] == "word" and symbols[-1][1][0].startswith("-"):
                symbols.append(("word", ["..."]))  # `--results ...`: some value
        elif word:
            word = word.removesuffix("...").removesuffix("…")  # SOURCE...: one or more
            parts = word.split("|") if "|" in word and not word.startswith("-") else [word]
            symbols.append(("word", [p for p in parts if p]))
        symbols += [("close", c) for c in closes]
    return symbols, elided


def _sequence(symbols: list[tuple[str, object]], at: int) -> tuple[list[list[str]], int]:
    """The variants from ``at`` to the close of the group it is in (or the end)."""
    alternatives: list[list[list[str]]] = []
    current: list[list[str]] = [[]]
    while at < len(symbols):
        kind, value = symbols[at]
        at += 1
        if kind == "close":
            break
        if kind == "bar":
            alternatives.append(current)
            current = [[]]
        elif kind == "open":
            start = at
            inner, at = _sequence(symbols, at)
            if value == "(" and _is_prose(symbols[start:at]):
                continue  # "repromatrix run (the smoke tier)": words about it
            current = [c + i for c in current for i in inner][:MAX_VARIANTS]
        else:
            assert isinstance(value, list)
            current = [[*c, w] for c in current for w in value][:MAX_VARIANTS]
    alternatives.append(current)
    return [variant for alternative in alternatives for variant in alternative], at


def _is_prose(group: list[tuple[str, object]]) -> bool:
    """A parenthesised group that offers no alternatives and starts with no option."""
    if any(kind == "bar" for kind, _ in group):
        return False
    first = next((value for kind, value in group if kind == "word"), None)
    return isinstance(first, list) and not first[0].startswith("-")
