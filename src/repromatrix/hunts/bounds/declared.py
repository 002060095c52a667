"""What the target declares: its name, version and Requires-Dist, read with packaging,
and which of them are its direct dependencies here (markers evaluated for the cells'
Python; the extras asked for).

TARGET is a release (``NAME==VERSION``: its metadata read from the wheel uv fetches,
``uv pip install --no-deps --target``, from the index or wheelhouse the cells use) or
a folder (``.``, ``./pkgs/mylib``: pyproject.toml's ``[project]`` table when its
dependencies are static, else the metadata of the wheel uv builds from it). A folder's
cells are keyed on its source digest (environment/source_tree.py), which the record
names.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import default_environment
from packaging.metadata import parse_email
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from repromatrix import procs
from repromatrix.environment import IndexSettings
from repromatrix.environment.uv import uv_binary, uv_message
from repromatrix.errors import UserError
from repromatrix.hunts.bounds.ranges import ordered
from repromatrix.matrix.pins import PATH_PREFIXES, Pin, PinKind
from repromatrix.names import canonicalize_name

METADATA_TIMEOUT = 600.0  # seconds for uv to fetch (or build) the target
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class Target:
    """The package whose declared ranges are tested, and how a cell installs it."""

    name: str  # canonical
    version: str  # its version ("" for a folder whose version is dynamic)
    shown: str  # as given: "trl==1.16.0", "."
    pin: Pin  # EXACT for a release, PATH for a folder
    requires: tuple[str, ...]  # Requires-Dist lines
    extras: tuple[str, ...]  # Provides-Extra

    @property
    def folder(self) -> Path | None:
        return self.pin.location if self.pin.kind is PinKind.PATH else None


@dataclass(frozen=True)
class Declared:
    """One direct dependency as the target declares it here: the requirement lines
    that apply (a package named twice has its specifiers intersected), and the extra
    that brings it (None: always)."""

    name: str
    specifier: str
    lines: tuple[str, ...]
    extra: str | None = None
    url: str | None = None  # a direct reference: no releases to test


def parse_target(text: str) -> tuple[str, str] | Path:
    """``NAME==VERSION`` as (name, version), or a folder; UserError otherwise."""
    if text.startswith(PATH_PREFIXES):
        folder = Path(text)
        if not folder.is_dir():
            raise UserError(f"TARGET {text}: no such folder")
        if not any((folder / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
            raise UserError(f"TARGET {text}: no pyproject.toml, setup.py or setup.cfg there")
        return folder
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        requirement = None
    clauses = list(requirement.specifier) if requirement else []
    if (
        requirement is None
        or requirement.url
        or requirement.marker
        or requirement.extras
        or len(clauses) != 1
        or clauses[0].operator != "=="
        or "*" in clauses[0].version
    ):
        raise UserError(
            f"TARGET {text!r}: give a release as NAME==VERSION (trl==1.16.0) or a folder "
            "(., ./pkgs/mylib)"
        )
    return canonicalize_name(requirement.name), clauses[0].version


def read_target(text: str, index: IndexSettings, python: str) -> Target:
    """The target's metadata (UserError when it cannot be had)."""
    parsed = parse_target(text)
    if isinstance(parsed, Path):
        static = _static_project(parsed)
        if static is not None:
            name, version, requires, extras = static
        else:
            name, version, requires, extras = _built(str(parsed.resolve()), index, python, text)
        pin = Pin(canonicalize_name(name), PinKind.PATH, text).anchored(Path.cwd())
        return Target(pin.package, version, text, pin, requires, extras)
    name, version = parsed
    _, found, requires, extras = _built(f"{name}=={version}", index, python, text)
    return Target(name, found, text, Pin(name, PinKind.EXACT, version), requires, extras)


def marker_environment(python_version: str) -> dict[str, str]:
    """This machine's marker environment, for the cells' Python."""
    environment = dict(default_environment())
    environment["python_full_version"] = python_version
    environment["python_version"] = ".".join(python_version.split(".")[:2])
    return environment


def direct_dependencies(
    target: Target, extras: Sequence[str], python_version: str
) -> tuple[list[Declared], list[tuple[str, str]]]:
    """(the direct dependencies here, [(requirement, why it is left out)])."""
    environment = marker_environment(python_version)
    chosen = [canonicalize_name(x) for x in extras]
    unknown = [x for x in chosen if x not in {canonicalize_name(e) for e in target.extras}]
    if unknown:
        offered = ", ".join(target.extras) or "none"
        raise UserError(
            f"--extra {unknown[0]}: {target.name} has no such extra (its extras: {offered})"
        )
    kept: dict[str, list[tuple[Requirement, str, str | None]]] = {}
    left: list[tuple[str, str]] = []
    for line in target.requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement as err:
            left.append((line, f"not a PEP 508 requirement ({err})"))
            continue
        name = canonicalize_name(requirement.name)
        if name == target.name:
            continue  # an extra that pulls in the target's own other extras
        why, extra = _scope(requirement, chosen, target.extras, environment)
        if why:
            left.append((line, why))
        else:
            kept.setdefault(name, []).append((requirement, line, extra))
    declared = []
    for name, found in kept.items():
        specifier = SpecifierSet()
        for requirement, _, _ in found:
            specifier &= requirement.specifier
        extra = None if any(e is None for _, _, e in found) else found[0][2]
        url = next((r.url for r, _, _ in found if r.url), None)
        lines = tuple(line for _, line, _ in found)
        declared.append(Declared(name, ordered(str(specifier)), lines, extra, url))
    return declared, left


def _scope(
    requirement: Requirement, chosen: list[str], offered: Iterable[str], environment: dict
) -> tuple[str, str | None]:
    """("", extra) when the requirement applies here, else (why not, None)."""
    marker = requirement.marker
    if marker is None or marker.evaluate({**environment, "extra": ""}):
        return "", None
    for extra in chosen:
        if marker.evaluate({**environment, "extra": extra}):
            return "", extra
    for extra in offered:
        if marker.evaluate({**environment, "extra": extra}):
            return f"extra {extra} (--extra {extra} tests it)", None
    return f"its marker is false here (Python {environment['python_full_version']})", None


def _static_project(folder: Path) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    """pyproject.toml's [project] when its name and dependencies are static."""
    import tomllib

    path = folder / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: not TOML ({err})") from None
    if not isinstance(project, dict) or not isinstance(project.get("name"), str):
        return None
    dynamic = project.get("dynamic") or []
    if "dependencies" in dynamic or "optional-dependencies" in dynamic:
        return None
    requires = [str(r) for r in project.get("dependencies") or []]
    optional = project.get("optional-dependencies") or {}
    for extra, lines in optional.items():
        for line in lines:
            requires.append(_with_extra(str(line), extra))
    version = project.get("version") if isinstance(project.get("version"), str) else ""
    return project["name"], version, tuple(requires), tuple(optional)


def _with_extra(line: str, extra: str) -> str:
    """An optional dependency as Requires-Dist writes it: ``; extra == "x"`` added."""
    requirement = Requirement(line)
    condition = f'extra == "{extra}"'
    marker = f"({requirement.marker}) and {condition}" if requirement.marker else condition
    requirement.marker = None
    return f"{requirement}; {marker}"


def _built(
    requirement: str, index: IndexSettings, python: str, shown: str
) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """The METADATA of what uv installs for ``requirement`` alone (no dependencies)."""
    with tempfile.TemporaryDirectory(prefix="repromatrix-bounds-") as folder:
        command = [
            uv_binary(), "pip", "install", "--quiet", "--no-deps", "--target", folder,
            "--python", python, *index.uv_args(), requirement,
        ]  # fmt: skip
        done = procs.run(command, timeout=METADATA_TIMEOUT)
        if done.timed_out or done.returncode != 0:
            why = "timed out" if done.timed_out else uv_message(done.stderr)
            raise UserError(f"TARGET {shown}: cannot fetch its metadata: {why}")
        found = sorted(Path(folder).glob("*.dist-info/METADATA"))
        if not found:
            raise UserError(f"TARGET {shown}: uv installed no *.dist-info/METADATA")
        raw, _ = parse_email(found[0].read_bytes())
    requires = tuple(raw.get("requires_dist", []) or ())
    # Provides-Extra, and the extras the markers name (older metadata lists none).
    named = [m for line in requires for m in _EXTRA.findall(line)]
    extras = tuple(dict.fromkeys([*(raw.get("provides_extra", []) or ()), *named]))
    return str(raw.get("name", "")), str(raw.get("version", "")), requires, extras
