"""The issue's repro: a fenced ``python`` block that says it is one.

The convention: the first fenced code block GitHub shows (github.reading: one inside an
HTML comment or an HTML block is raw HTML, never a repro) whose info string is
``python`` (or ``py``) and whose first line is ``# repromatrix``, optionally followed by
the packages the repro needs:

    ```python
    # repromatrix: transformers peft==0.17.1
    import transformers, peft
    ...
    ```

A name alone (``transformers``) is installed at its newest release (what the nightly
watch follows); ``PKG==VER`` is held at that version. A PEP 723 ``# /// script`` block
in place of that first line works too: its ``dependencies`` are read the same way.
Exit status of the repro: 0 good, 125 untestable, anything else bad (as ``check``).

Nothing here runs the code: it is compiled, to refuse a block that does not parse.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

from repromatrix.errors import UserError
from repromatrix.github.reading import code_blocks
from repromatrix.matrix.pins import PinKind, parse_pin_option, pin_text

MARKER = "# repromatrix"
MAX_REPRO = 50_000  # characters of a repro block
_DEPENDENCIES = re.compile(r"(?ms)^#\s*dependencies\s*=\s*\[(?P<items>.*?)\]")
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


@dataclass(frozen=True)
class Repro:
    code: str
    source: str  # "comment" or "issue"
    needs: tuple[str, ...] = ()  # pin texts: "transformers=latest", "peft==0.17.1"

    def packages(self) -> list[str]:
        return [parse_pin_option(text).package for text in self.needs]

    @property
    def digest(self) -> str:
        return code_digest(self.code)

    def head(self, lines: int = 10, width: int = 200) -> list[str]:
        """The code's first lines (each cut to ``width``): what an approval reply quotes."""
        return [line[:width] for line in self.code.split("\n")[:lines]]


def code_digest(code: str) -> str:
    """What an approval records and a run is checked against: the sha256 of the block."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, content) of every code block GitHub shows, in order
    (github.reading: code inside an HTML comment or an HTML block is none)."""
    return [(block.info, block.code) for block in code_blocks(text)]


def _is_python(info: str) -> bool:
    return (info.split() or [""])[0].lower() in ("python", "py", "python3")


def _first_line(code: str) -> str:
    return next((line.strip() for line in code.splitlines() if line.strip()), "")


def _marked(code: str) -> bool:
    first = _first_line(code)
    return first == MARKER or first.startswith((MARKER + ":", MARKER + " ", "# /// script"))


def find_repro(text: object, source: str) -> Repro | None:
    """The repro block of a comment or issue body, checked (UserError when the block
    is there but cannot be used); None when the text holds no such block."""
    if not isinstance(text, str):
        return None
    for info, code in fenced_blocks(text):
        if _is_python(info) and _marked(code):
            return _checked(code, source)
    return None


def _checked(code: str, source: str) -> Repro:
    if len(code) > MAX_REPRO:
        raise UserError(
            f"the repro block of the {source} is {len(code)} characters; at most {MAX_REPRO}"
        )
    try:
        compile(code, "repro.py", "exec")
    except SyntaxError as err:
        raise UserError(
            f"the repro block of the {source} does not parse: line {err.lineno}: {err.msg}"
        ) from None
    except ValueError as err:  # NUL bytes
        raise UserError(f"the repro block of the {source} does not parse: {err}") from None
    except (RecursionError, MemoryError, OverflowError):  # nested too deep to compile
        raise UserError(
            f"the repro block of the {source} does not parse: it nests too deeply to compile"
        ) from None
    return Repro(code, source, tuple(needs(code)))


def needs(code: str) -> list[str]:
    """The packages the repro says it needs, as pin texts (a name: ``=latest``)."""
    first = _first_line(code)
    words: list[str] = []
    if first.startswith(MARKER):
        words = first[len(MARKER) :].lstrip(":").split()
    found = _DEPENDENCIES.search(code)
    if found:
        items = found.group("items").replace("#", " ")
        words += [a or b for a, b in _QUOTED.findall(items)]
    pins: dict[str, str] = {}
    for word in words:
        text = _pin_text(word)
        package = parse_pin_option(text).package
        if package in pins and pins[package] != text:
            raise UserError(f"the repro names {package} twice ({pins[package]}, {text})")
        pins[package] = text
    return list(pins.values())


def _pin_text(word: str) -> str:
    """``transformers`` -> ``transformers=latest``; ``peft==0.17.1`` as it is."""
    try:
        requirement = Requirement(word)
    except InvalidRequirement:
        raise UserError(
            f"the repro's first line names {word!r}: not a package or PKG==VER"
        ) from None
    if requirement.url or requirement.marker or requirement.extras:
        raise UserError(f"the repro's first line names {word!r}: only PKG or PKG==VER")
    if not str(requirement.specifier):
        return f"{requirement.name}=latest"
    pin = parse_pin_option(word)
    if pin.kind not in (PinKind.EXACT, PinKind.RANGE):
        raise UserError(f"the repro's first line names {word!r}: only PKG or PKG==VER")
    return pin_text(pin)
