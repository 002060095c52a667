"""A culprit hunt's input: the two locks (files, or one combination in two results
folders), the probe and the cell held on every side, checked before anything is
built (``plan``), with the indexes the locks were resolved from and the folder the
report goes to; and the command that reruns it (``reproduce_command``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.culprit.locks import Change, Lock, diff, lock_from_resolved
from repromatrix.hunts.rerun import shown_path
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin
from repromatrix.matrix.sessions import command_line
from repromatrix.probe.spec import Probe
from repromatrix.results import load_results


@dataclass
class CulpritOptions:
    good: Lock
    bad: Lock
    probe: Probe
    # Held on every side: the user's --pin (over --cell's null, system and git pins),
    # Python, indexes, overrides and variables.
    cell: CellSpec = field(default_factory=CellSpec)
    name: str | None = None  # the report folder's name (default: from the locks)
    jobs: int = 1
    releases: bool = True  # bisect a single culprit's releases
    out: Path = Path("reports/culprit")
    index: IndexSettings | None = None  # given: these; else the user's (the cell's over them)
    command: str = ""  # the command that reruns it (cli builds it)

    @property
    def pins(self) -> tuple[Pin, ...]:
        return self.cell.pins


def locks_from_results(good: Path, bad: Path, combination: str) -> tuple[Lock, Lock]:
    """The resolved versions of one combination in two results folders, as locks."""
    locks = []
    for option, folder in (("--good-results", good), ("--bad-results", bad)):
        path = folder / "results.json"
        if not path.is_file():
            raise UserError(f"{option} {folder}: no results.json")
        found = load_results(path).find(combination)
        if found is None:
            raise UserError(f"{option} {folder}: no combination {combination!r} in results.json")
        locks.append(lock_from_resolved(found.resolved, f"{path} ({combination})"))
    return locks[0], locks[1]


# A report folder's name: one folder inside --out, nothing a shell or a URL trips on.
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")


def checked_name(name: str | None) -> str | None:
    """--name as given, when it names one folder inside --out; bad input otherwise
    (``../../x`` would write the report outside it)."""
    if name is None or name == "":
        return None
    if not _FOLDER_NAME.fullmatch(name) or ".." in name:
        raise UserError(
            f"--name {name!r}: not a folder name (letters, digits, '.', '_', '+', '-'; "
            "no '/' or '..'; at most 100 characters)"
        )
    return name


def lock_index(base: IndexSettings, *locks: Lock) -> IndexSettings:
    """The indexes the locks were resolved from, over ``base`` (the user's
    configuration, or --wheelhouse): the first lock's --index-url replaces the default
    index, another lock's different one is added as an extra index; extra indexes and
    find-links of both come first. A lock's --no-index keeps only find-links."""
    urls = [lock.index.index_url for lock in locks if lock.index.index_url]
    extra = tuple(dict.fromkeys([*urls[1:], *(u for k in locks for u in k.index.extra_index_urls)]))
    merged = base.overlaid(
        index_url=urls[0] if urls else None,
        extra_index_urls=tuple(u for u in extra if u != (urls[0] if urls else None)),
        find_links=tuple(dict.fromkeys(f for k in locks for f in k.index.find_links)),
    )
    if any(lock.index.no_index for lock in locks):
        merged = replace(merged, no_index=True)
    return merged


def default_name(options: CulpritOptions) -> str:
    """<good>-to-<bad>, from the lock files' names (a hash when they say nothing)."""
    stems = [
        re.sub(r"[^A-Za-z0-9._-]+", "-", Path(lock.source.split(" ")[0]).stem)
        for lock in (options.good, options.bad)
    ]
    if stems[0] and stems[1] and stems[0] != stems[1]:
        return f"{stems[0]}-to-{stems[1]}"
    digest = hashlib.sha256(
        repr((sorted(options.good.pins.items()), sorted(options.bad.pins.items()))).encode()
    ).hexdigest()
    return f"locks-{digest[:10]}"


@dataclass
class Plan:
    """A checked culprit hunt, ready to run."""

    probe: Probe  # validated: absolute paths, a case its file defines
    changes: list[Change]  # the packages that differ between the locks (--pin's aside)
    index: IndexSettings  # the locks' indexes over the cell's and the user's
    folder: Path
    options: CulpritOptions  # as given
    command: str = ""  # the command that reruns it

    @property
    def by_name(self) -> dict[str, Change]:
        return {c.package: c for c in self.changes}


def plan(options: CulpritOptions, note: Callable[[str], None] | None = None) -> Plan:
    """Everything that can be wrong with the input, found before anything is built;
    ``note`` gets a line on a case whose parameter id cannot be read before it runs."""
    probe = options.probe.defined(note)
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be 1 or more")
    held = frozenset(pin.package for pin in options.pins)
    changes = diff(options.good, options.bad, held=held)
    if not changes:
        raise UserError(
            f"{options.good.source} and {options.bad.source}: no package differs "
            "(outside --pin); nothing to hunt"
        )
    base = options.index or IndexSettings.from_environment().for_cell(options.cell)
    index = lock_index(base, options.good, options.bad)
    folder = options.out / (checked_name(options.name) or default_name(options))
    return Plan(probe, changes, index, folder, options, options.command)


def shown_source(source: str) -> str:
    """A path relative to the working folder when it is inside it, else its name
    (no path of this machine in a report)."""
    path_text, paren, rest = source.partition(" (")  # "results.json (combination id)"
    return shown_path(Path(path_text)) + paren + rest


def reproduce_command(args: list[str]) -> str:
    """The command that reruns this hunt from the working folder: the nox session where
    its noxfile has one, else repromatrix itself."""
    return command_line("culprit", args, folder=Path.cwd())
