"""Locks: requirements files of exact pins, as ``uv pip compile`` writes them, and
the changes between two of them.

A lock line is ``name==version`` (extras and an environment marker are allowed and
dropped); comments, ``# via`` annotations and ``--hash`` options are not pins.
Anything else (a range, a URL, ``-e``, ``-r``) is refused with the file and line: a
lock that does not say exactly what was installed cannot be replayed.

Where the lock's packages came from is part of it: ``--index-url`` / ``-i``,
``--extra-index-url``, ``--find-links`` / ``-f`` and ``--no-index`` lines are kept
(``Lock.index``) and the culprit's cells resolve from them; a relative find-links
folder is the lock file's neighbour. Other options (``--trusted-host`` ...) change
nothing that is installed and are passed over. Credentials in these URLs are
remembered for masking: they never reach a report or the console.

The ``# via`` annotations are kept: they say which package required which, which
is how culprit.py moves a package together with what it requires.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from repromatrix import redact
from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.names import canonicalize_name

# A lock's options that say where its packages come from -> the field of its IndexSettings.
_INDEX_OPTIONS = {
    "--index-url": "index_url",
    "-i": "index_url",
    "--extra-index-url": "extra_index_urls",
    "--find-links": "find_links",
    "-f": "find_links",
}


@dataclass(frozen=True)
class Lock:
    source: str  # where it came from, for messages and reports
    pins: dict[str, str]  # canonical name -> exact version
    via: dict[str, frozenset[str]] = field(default_factory=dict)  # name -> who requires it
    index: IndexSettings = field(default_factory=IndexSettings)  # its --index-url ... lines

    def requires(self, package: str) -> frozenset[str]:
        """The packages ``package`` requires directly, as the annotations say."""
        return frozenset(name for name, users in self.via.items() if package in users)


@dataclass(frozen=True, order=True)
class Change:
    """One package that differs between the two locks (None: not in that lock)."""

    package: str
    good: str | None
    bad: str | None

    @property
    def kind(self) -> str:
        if self.good is None:
            return "added"
        if self.bad is None:
            return "removed"
        return "changed"

    def text(self) -> str:
        return f"{self.package} {self.good or '(none)'} -> {self.bad or '(none)'}"


_VIA = re.compile(r"^#\s*via\b(.*)$")
_VIA_MORE = re.compile(r"^#\s{2,}(\S.*)$")


def read_lock(path: Path, option: str = "") -> Lock:
    """Read a lock file; a UserError (one line: the option, file[:line]) for anything
    not a pin, and for a file that is not UTF-8 text."""
    named = f"{option} {path}" if option else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"{named}: cannot read the lock ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise UserError(
            f"{named}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset "
            f"{err.start}); a lock is a text file of name==version lines"
        ) from None
    lock = parse_lock(text, str(path))
    return Lock(lock.source, lock.pins, lock.via, _local_to(lock.index, path.parent))


def _local_to(index: IndexSettings, folder: Path) -> IndexSettings:
    """find-links folders written relative to the lock: relative to its folder."""

    def place(location: str) -> str:
        if "://" in location or Path(location).is_absolute():
            return location
        return str((folder / location).resolve())

    return IndexSettings(
        index.index_url,
        index.extra_index_urls,
        tuple(place(link) for link in index.find_links),
        index.no_index,
    )


def parse_lock(text: str, source: str) -> Lock:
    pins: dict[str, str] = {}
    index: dict[str, list[str]] = {}
    no_index = False
    via: dict[str, set[str]] = {}
    last: str | None = None  # the package the following '# via' lines annotate
    in_via = False
    for number, line in _logical_lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            found = _VIA.match(stripped)
            if found and last is not None:
                in_via = True
                _add_via(via, last, found.group(1))
            elif in_via and last is not None and (more := _VIA_MORE.match(stripped)):
                _add_via(via, last, more.group(1))
            else:
                in_via = False
            continue
        in_via = False
        if stripped.startswith("-") and not stripped.startswith(("--hash", "-e", "-r", "-c")):
            option, value = _option(stripped)
            if option == "--no-index":
                no_index = True
            elif option in _INDEX_OPTIONS:
                if not value:
                    raise UserError(f"{source}:{number}: {option} without a location")
                redact.remember(texts=[value])  # credentials in the URL: masked everywhere
                index.setdefault(_INDEX_OPTIONS[option], []).append(value)
            continue  # --trusted-host, --prefer-binary ...: nothing that is installed
        name, version = _pin(stripped, f"{source}:{number}")
        if name in pins and pins[name] != version:
            raise UserError(
                f"{source}:{number}: {name} is pinned twice ({pins[name]} and {version})"
            )
        pins[name] = version
        last = name
    if not pins:
        raise UserError(f"{source}: no pins (expected lines of name==version)")
    urls = index.get("index_url", [])
    if len(set(urls)) > 1:
        raise UserError(f"{source}: more than one --index-url ({len(set(urls))})")
    where = IndexSettings(
        index_url=urls[0] if urls else None,
        extra_index_urls=tuple(dict.fromkeys(index.get("extra_index_urls", []))),
        find_links=tuple(dict.fromkeys(index.get("find_links", []))),
        no_index=no_index,
    )
    return Lock(source, pins, {k: frozenset(v) for k, v in via.items()}, where)


def _option(line: str) -> tuple[str, str]:
    """``--index-url URL``, ``--index-url=URL``, ``-i URL`` -> (option, value)."""
    head, _, rest = line.partition("=") if line.startswith("--") else ("", "", "")
    if head and " " not in head:
        return head, rest.strip()
    option, _, value = line.partition(" ")
    return option, value.strip()


def _logical_lines(text: str):
    """(first line number, text) with backslash continuations joined."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def _pin(line: str, where: str) -> tuple[str, str]:
    requirement_text = line.split(" --hash", 1)[0].split("\t--hash", 1)[0].strip()
    try:
        requirement = Requirement(requirement_text)
    except InvalidRequirement:
        raise UserError(f"{where}: {line!r} is not a pin (expected name==version)") from None
    specifiers = list(requirement.specifier)
    if (
        requirement.url
        or len(specifiers) != 1
        or specifiers[0].operator not in ("==", "===")
        or "*" in specifiers[0].version
    ):
        raise UserError(
            f"{where}: {requirement_text!r} is not an exact pin (expected name==version)"
        )
    return canonicalize_name(requirement.name), specifiers[0].version


def _add_via(via: dict[str, set[str]], package: str, names: str) -> None:
    for name in names.replace(",", " ").split():
        if name.startswith("-") or "/" in name or name.endswith((".in", ".txt", ".toml")):
            continue  # "-r requirements.in", "pyproject.toml": the user asked for it
        via.setdefault(package, set()).add(canonicalize_name(name))


def lock_from_resolved(resolved: dict[str, str], source: str) -> Lock:
    """A lock from a results.json ``resolved`` mapping (no annotations)."""
    if not resolved:
        raise UserError(f"{source}: no resolved versions recorded")
    return Lock(source, {canonicalize_name(k): v for k, v in sorted(resolved.items())})


def diff(good: Lock, bad: Lock, *, held: frozenset[str] = frozenset()) -> list[Change]:
    """The packages that differ, by name; those in ``held`` (the user's --pin) are not
    changes: they are the same on every side."""
    names = sorted((set(good.pins) | set(bad.pins)) - held)
    return [
        Change(name, good.pins.get(name), bad.pins.get(name))
        for name in names
        if good.pins.get(name) != bad.pins.get(name)
    ]


def mixed_pins(
    good: Lock, changes: dict[str, Change], applied: frozenset[str], extra: tuple[Pin, ...] = ()
) -> tuple[Pin, ...]:
    """The good lock with the ``applied`` changes made, as exact pins (a package that
    is in neither side's pins after the mix is left to the resolver); ``extra`` (the
    user's --pin) wins over both."""
    versions = dict(good.pins)
    for name in applied:
        change = changes[name]
        if change.bad is None:
            versions.pop(name, None)
        else:
            versions[name] = change.bad
    held = {pin.package for pin in extra}
    pins = [Pin(name, PinKind.EXACT, version) for name, version in sorted(versions.items())]
    return (*(p for p in pins if p.package not in held), *extra)
