"""What one matrix cell asks of one package: the grammar of a pin.

A pin is written in matrix.yaml as one of

- an exact version:        ``"4.56.2"``
- a PEP 440 specifier:     ``">=4.50,<4.53"``
- ``latest``:              the newest release the resolver accepts
- a direct reference:      ``"git+https://github.com/huggingface/transformers@main"``
- ``system``:              the copy already installed in the base interpreter
                           (e.g. torch in a CUDA image), shown to the cell alone
- a folder:                ``"."``, ``"./pkgs/mylib"``, ``"../mylib"``, ``"/abs/mylib"``: the
                           package built from that folder (relative to matrix.yaml; to
                           the working directory for ``--pin mylib=.``); the cell is keyed
                           on a digest of its source (environment/source_tree.py)
- null:                    not installed, even if another package depends on it

and on a command line (``--pin``, the issue bot's pins, a workflow's inputs) as
``PACKAGE==VERSION``, ``PACKAGE<specifier>``, ``PACKAGE=system|latest|null``,
``PACKAGE=./FOLDER`` or ``PACKAGE@URL`` (``parse_pin_option``; ``pin_text`` writes it).
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from repromatrix import redact
from repromatrix.errors import UserError
from repromatrix.names import canonicalize_name
from repromatrix.redact import redact_text

VCS_PREFIXES = ("git+", "hg+", "svn+", "bzr+")
DIRECT_PREFIXES = (*VCS_PREFIXES, "https://", "http://", "file:")


class PinKind(str, enum.Enum):
    EXACT = "exact"
    RANGE = "range"
    LATEST = "latest"
    DIRECT = "direct"
    SYSTEM = "system"
    ABSENT = "absent"
    PATH = "path"


# What starts a folder pin: "." and "..", "./x", "../x", "/abs" (a bare "pkgs/x" would
# read as a name; pip's own rule).
PATH_PREFIXES = (".", "/")


@dataclass(frozen=True, order=True)
class Pin:
    package: str  # canonical name (PEP 503)
    kind: PinKind
    spec: str  # as written; "" for ABSENT
    # PATH: the absolute folder ``spec`` is relative to (matrix.yaml's, or the working
    # directory of a --pin); never shown, never stored in results.
    base: str = ""

    @property
    def location(self) -> Path:
        """PATH: the package's folder, absolute."""
        return Path(os.path.normpath(os.path.join(self.base or os.getcwd(), self.spec)))

    def anchored(self, folder: str | Path) -> Pin:
        """A PATH pin read relative to ``folder``; other pins as they are."""
        if self.kind is not PinKind.PATH:
            return self
        return replace(self, base=os.path.abspath(folder))

    def folder_problem(self) -> str | None:
        """What keeps a PATH pin's folder from being built (None: nothing): it is
        missing, or it is no Python project. Bad input, said before anything runs."""
        if self.kind is not PinKind.PATH:
            return None
        folder = self.location
        if not folder.is_dir():
            found = "a file" if folder.exists() else "nothing there"
            return f"{self.spec!r} is no folder ({found})"
        if not any((folder / name).is_file() for name in ("pyproject.toml", "setup.py")):
            return f"{self.spec!r} holds no pyproject.toml or setup.py (not a Python project)"
        return None

    @property
    def floating(self) -> bool:
        """Whether what this pin installs can change without matrix.yaml changing."""
        return self.kind in (PinKind.LATEST, PinKind.RANGE, PinKind.DIRECT)

    def requirement(self) -> str | None:
        """The PEP 508 requirement handed to the resolver (None: nothing to resolve)."""
        if self.kind is PinKind.EXACT:
            return f"{self.package}=={self.spec}"
        if self.kind is PinKind.RANGE:
            return f"{self.package}{self.spec}"
        if self.kind is PinKind.LATEST:
            return self.package
        if self.kind is PinKind.DIRECT:
            return f"{self.package} @ {self.spec}"
        if self.kind is PinKind.PATH:
            return f"{self.package} @ {self.location.as_uri()}"
        return None

    def __str__(self) -> str:
        return self.spec if self.kind is not PinKind.ABSENT else "null"


def number_hint(value: float) -> str:
    """The error for a version YAML read as a number, quoting what the user wrote:
    ``4.50 is a number (YAML reads it as 4.5); quote it: '4.50'``. The matrix loader
    keeps a float's text as ``value.written``; without it, the number's own text."""
    written = getattr(value, "written", None) or repr(value)
    read = f" (YAML reads it as {float(value)!r})" if written != repr(value) else ""
    return f"{written} is a number{read}; quote it: '{written}'"


def parse_pin(package: str, raw: object, base: str | Path | None = None) -> Pin:
    """Parse one package's spec; ValueError carries a message fit for a one-line error.
    A folder is relative to ``base`` (default: the working directory)."""
    name = canonicalize_name(package)
    if raw is None:
        return Pin(name, PinKind.ABSENT, "")
    if not isinstance(raw, str):
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            # YAML reads 4.50 as the float 4.5: refuse rather than guess.
            raise ValueError(number_hint(raw))
        raise ValueError(f"{raw!r} is not a version, specifier, 'latest', 'system' or null")
    text = raw.strip()
    if text in ("latest", "system"):
        return Pin(name, PinKind(text), text)
    if text.startswith(PATH_PREFIXES):
        return Pin(name, PinKind.PATH, text, os.path.abspath(base or os.getcwd()))
    # packaging's requirement and specifier parsers load only for the pins that need
    # them: an exact pin (check's, bisect's) does not pay for their grammars at start-up.
    if text.startswith(DIRECT_PREFIXES):
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            Requirement(f"{name} @ {text}")
        except InvalidRequirement as err:
            raise ValueError(f"{raw!r} is not a valid direct reference ({err})") from None
        url = urlsplit(text.split("+", 1)[1] if text.startswith(VCS_PREFIXES) else text)
        if not (url.netloc or (url.scheme == "file" and url.path)):
            raise ValueError(f"{raw!r} is not a valid direct reference (no host or path)")
        return Pin(name, PinKind.DIRECT, text)
    if text and text[0].isdigit():
        if not is_version(text):
            raise ValueError(f"{raw!r} is not a version or specifier")
        return Pin(name, PinKind.EXACT, text)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(text)
    except InvalidSpecifier:
        hint = f" (a folder starts with './': './{text}')" if "/" in text else ""
        raise ValueError(f"{raw!r} is not a version or specifier{hint}") from None
    if not len(specifier) or any(not clause.version for clause in specifier):
        # packaging reads '===' as arbitrary equality with an empty version
        raise ValueError(f"{raw!r} is not a version or specifier")
    # Keep the user's order of clauses (str(SpecifierSet) sorts them).
    return Pin(name, PinKind.RANGE, "".join(text.split()))


def pin_text(pin: Pin) -> str:
    """The pin as ``--pin`` takes it (parse_pin_option reads it back):
    ``torch==2.13.0``, ``peft>=0.15``, ``torch=system``, ``unsloth=null``,
    ``mylib=./pkgs/mylib``, ``peft@git+https://...`` (credentials in a URL masked)."""
    kind = pin.kind.value
    if kind == "exact":
        return f"{pin.package}=={pin.spec}"
    if kind == "range":
        return f"{pin.package}{pin.spec}"
    if kind == "direct":
        return f"{pin.package}@{redact_text(pin.spec)}"
    if kind == "absent":
        return f"{pin.package}=null"
    return f"{pin.package}={pin.spec}"


_PIN = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(.*?)\s*$")


def parse_pin_option(text: str) -> Pin:
    """``--pin`` as written on a command line:

    ``torch==2.13.0``, ``torch>=2.5,<2.14``, ``torch=system``, ``peft=latest``,
    ``unsloth=null`` (kept out), ``mylib=.`` / ``mylib=./pkgs/mylib`` (a folder,
    relative to the working directory), ``peft@git+https://...``."""
    redact.remember(texts=[text])  # credentials of a URL, masked wherever they appear
    match = _PIN.match(text)
    if not match or not match.group(2):
        raise UserError(
            f"--pin {text!r}: expected PACKAGE==VERSION, PACKAGE<specifier>, "
            "PACKAGE=system|latest|null, PACKAGE=./FOLDER or PACKAGE@URL"
        )
    name, rest = match.groups()
    if rest.startswith("@"):
        raw: str | None = rest[1:].strip()
    elif rest.startswith("==") and is_version(rest[2:]):
        raw = rest[2:].strip()
    elif rest.startswith("=") and not rest.startswith("=="):
        raw = rest[1:].strip()
        if raw not in ("system", "latest", "null") and not raw.startswith((".", "/")):
            # 'torch=>2' is a typo of 'torch>=2', not a pin to guess at
            raise UserError(
                f"--pin {text!r}: after a single '=' comes system, latest, null or a "
                "folder (./FOLDER; a version takes '==')"
            )
        raw = None if raw == "null" else raw
    else:
        raw = rest  # a specifier: >=, <, ~=, !=, ==4.5.*
    try:
        pin = parse_pin(name, raw)
    except ValueError as err:
        raise UserError(f"--pin {text!r}: {err}") from None
    problem = pin.folder_problem()  # a folder: relative to the working directory
    if problem is not None:
        raise UserError(f"--pin {text!r}: {problem}, relative to the working directory")
    return pin


def unique_pins(pins: Sequence[Pin]) -> tuple[Pin, ...]:
    seen: dict[str, Pin] = {}
    for pin in pins:
        if pin.package in seen and seen[pin.package] != pin:
            raise UserError(f"--pin: {pin.package} is pinned twice ({seen[pin.package]}, {pin})")
        seen[pin.package] = pin
    return tuple(seen.values())


def pins_text(pins: Sequence[Pin]) -> str:
    """``torch==2.13.0 peft>=0.15`` for logs and reports."""
    return " ".join(pin_text(p) for p in pins)


# A release segment alone ("2.13.0", the usual pin) is always a PEP 440 version: told
# without loading packaging.version, whose grammar compiles when it is imported (a few
# milliseconds of every `check`, each step of a bisect).
_PLAIN_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def is_version(text: str) -> bool:
    """Whether ``text`` is a PEP 440 version (surrounding spaces allowed)."""
    text = text.strip()
    if _PLAIN_RELEASE.fullmatch(text):
        return True
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
