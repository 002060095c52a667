"""A bounds hunt's input: the target, the probe, the dependencies asked about, the cell
held around them, checked before anything is built (``plan``: the target's metadata
read, each dependency's releases listed), and the command that reruns it.

Everything wrong with the input is a UserError here (exit status 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.environment.uv import find_interpreter
from repromatrix.errors import UserError
from repromatrix.hunts.bounds.declared import Declared, Target, direct_dependencies, read_target
from repromatrix.hunts.bounds.ranges import Dependency, no_release_reason, split_releases
from repromatrix.hunts.rerun import rerun_command
from repromatrix.hunts.sweep.options import probe_args
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.names import canonicalize_name
from repromatrix.probe.candidates import list_releases, searched_index
from repromatrix.probe.spec import Probe
from repromatrix.redact import portable_path


@dataclass(kw_only=True)
class BoundsOptions:
    target: str  # "NAME==VERSION" or a folder ("." / "./pkgs/mylib")
    probe: Probe
    only: tuple[str, ...] = ()  # the dependencies asked about (default: every direct one)
    extras: tuple[str, ...] = ()  # the target's extras whose dependencies count too
    # Held in every cell: the user's --pin (torch==2.13.0), --cell's, Python, indexes.
    cell: CellSpec = field(default_factory=CellSpec)
    wheelhouse: Path | None = None  # releases and installs from this folder alone
    index: IndexSettings | None = None  # given: these; else the user's (the cell's over them)
    out: Path = Path("reports/bounds")
    jobs: int = 1
    json: bool = False  # stdout: bounds.json instead of the headline


@dataclass(kw_only=True)
class Plan:
    """A checked bounds hunt, ready to run."""

    options: BoundsOptions
    target: Target
    python: str  # the cells' interpreter's version
    interpreter: str  # its path (uv resolves for it)
    dependencies: list[Dependency]  # tested, in declared order
    # The untested dependencies of the extras asked for, as declared: the target alone
    # does not bring them (its other dependencies come with it, as declared).
    free: tuple[Pin, ...]
    left_out: list[tuple[str, str]]  # (requirement, why it does not apply here)
    index: IndexSettings
    probe: Probe
    folder: Path
    command: str = ""

    @property
    def held(self) -> tuple[Pin, ...]:
        return self.options.cell.pins


def plan(options: BoundsOptions) -> Plan:
    """The input checked, the target read, every tested dependency's releases listed."""
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: give 1 or more")
    probe = options.probe.defined()
    index = searched_index(options.wheelhouse, options.index, options.cell)
    interpreter = find_interpreter(options.cell.python)
    target = read_target(options.target, index, interpreter.executable)
    declared, left_out = direct_dependencies(target, options.extras, interpreter.version)
    by_name = {d.name: d for d in declared}
    only = [canonicalize_name(n) for n in options.only]
    for name in only:
        if name not in by_name:
            names = ", ".join(by_name) or "none"
            raise UserError(
                f"--only {name}: not a direct dependency of {target.name} here (its: {names})"
            )
    tested = [by_name[n] for n in dict.fromkeys(only)] if only else declared
    held = {pin.package for pin in options.cell.pins}
    for one in tested:
        if one.name in held:
            raise UserError(
                f"--pin {one.name}: its declared range is what bounds tests; leave it out of "
                "--pin (or --only the others)"
            )
    if target.name in held:
        raise UserError(f"--pin {target.name}: it is the target")
    dependencies = [_releases(one, index) for one in tested]
    names = {d.name for d in tested} | held
    free = tuple(_declared_pin(d) for d in declared if d.name not in names and d.extra)
    label = target.version if target.pin.kind is PinKind.EXACT else "tree"
    checked = Plan(
        options=options, target=target, python=interpreter.version,
        interpreter=interpreter.executable, dependencies=dependencies, free=free,
        left_out=left_out, index=index, probe=probe,
        folder=options.out / f"{target.name}-{label}",
    )  # fmt: skip
    checked.command = reproduce_command(checked)
    return checked


def _releases(declared: Declared, index: IndexSettings) -> Dependency:
    """The releases the declared range admits, or why there are none to test."""
    base = Dependency(declared.name, declared.specifier, declared.lines, extra=declared.extra)
    if declared.url:
        return _untestable(base, f"a direct reference ({declared.url}) has no releases")
    try:
        listing = list_releases(declared.name, index)
    except UserError as err:
        if str(err).startswith("unknown package"):
            return _untestable(base, str(err))
        raise
    yanked = [v for v, r in listing.releases.items() if r.yanked]
    admitted, excluded = split_releases(declared.specifier, listing.versions(), yanked)
    if not admitted:
        reason = no_release_reason(declared.name, declared.specifier, listing.versions())
        return _untestable(base, reason)
    return replace(base, admitted=admitted, excluded=excluded)


def _untestable(base: Dependency, reason: str) -> Dependency:
    return replace(base, reason=reason)


def _declared_pin(declared: Declared) -> Pin:
    """An untested dependency of an extra, as a cell asks for it: its declared range."""
    if declared.url:
        return Pin(declared.name, PinKind.DIRECT, declared.url)
    if declared.specifier:
        return Pin(declared.name, PinKind.RANGE, declared.specifier)
    return Pin(declared.name, PinKind.LATEST, "latest")


def reproduce_command(checked: Plan) -> str:
    """The command that reruns this hunt, without paths of this machine."""
    options = checked.options
    args = [options.target, *probe_args(checked.probe)]
    for name in options.only:
        args += ["--only", canonicalize_name(name)]
    for extra in options.extras:
        args += ["--extra", extra]
    for pin in options.cell.pins:
        args += ["--pin", pin_text(pin)]
    if options.cell.python:
        args += ["--python", options.cell.python]
    if options.wheelhouse is not None:
        args += ["--wheelhouse", portable_path(options.wheelhouse)]
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    return rerun_command("bounds", args)
