"""``repromatrix gc``: the store's cells pruned, least recently used first, never one
in use.

Every new pin set is a new cell, so a store grows by the hour (208 cells, 942 MB
after an hour of sweeps). A cell in use holds a shared lock (``in_use``: the matrix
run and every probe take it through EnvStore.use while the cell runs) and gets its
``used`` stamp; gc takes the same lock exclusively, without waiting, before it
removes a cell, so a cell that runs is never removed, and one removed is never
handed out (EnvStore.use builds it again). A cell is first renamed out of its
identity's folder (one step), then deleted.

What goes: cells last used more than ``keep_days`` ago; then, while the store is
over ``max_size``, the least recently used of the rest; an interrupted build (no
``complete``, no builder holding its lock); the staged copies of folder pins
(``_sources``) and fast-reuse entries (``_requests``) that no cell left names.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.environment.known_requests import REQUESTS
from repromatrix.environment.source_tree import STAGED
from repromatrix.environment.uv import InstallError
from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.environment.request import Environment

IN_USE = "_inuse"
TRASH = "_trash"
USED = "used"  # touched at each use: the least recently used goes first
STAGED_GRACE = 86400.0  # seconds a staged source is kept unnamed (a build may be under way)
_CELL = re.compile(r"^[0-9a-f]{16}$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``500M``, ``5G``, ``1.5GB``, ``2GiB``, ``1024`` (bytes) as bytes; UserError
    otherwise."""
    found = _SIZE.match(text)
    if found is None:
        raise UserError(f"--max-size {text!r}: expected a size such as 500M, 5G or 1024")
    number, unit = found.groups()
    return int(float(number) * 1024 ** "bkmgt".index((unit or "b").lower()))


def size_text(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} B"


@contextmanager
def in_use(root: Path, identity: str, *, wait: bool = True) -> Iterator[bool]:
    """The cell's use lock: shared (``wait``: a user, waiting out a gc that is removing
    it), or exclusive without waiting (gc: yields False when a user holds it)."""
    folder = root / IN_USE
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{identity[:16]}.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def used_cell(root: Path, build: Callable[[], Environment]) -> Iterator[Environment]:
    """The cell ``build`` gives (built or reused) in the store at ``root``, held in use
    (its shared lock, its ``used`` stamp) until the block ends: gc leaves it alone
    meanwhile. (The store passes its build in: gc sits below the store.)"""
    for _attempt in (1, 2):
        env = build()
        with in_use(root, env.identity):
            if env.python.exists():  # not removed (gc) between the build and the lock
                if env.root.is_dir():
                    (env.root / USED).touch()
                yield env
                return
    raise InstallError("install", "the environment was removed as it was taken (gc); run again")


@dataclass(frozen=True)
class Cell:
    home: Path
    last_used: float  # seconds since the epoch
    size: int  # bytes on disk, each file once
    complete: bool


@dataclass
class Pruned:
    removed: list[Cell] = field(default_factory=list)
    kept: list[Cell] = field(default_factory=list)
    busy: list[Cell] = field(default_factory=list)  # in use (or being built): kept

    def line(self) -> str:
        freed = size_text(sum(c.size for c in self.removed))
        left = size_text(sum(c.size for c in [*self.kept, *self.busy]))
        busy = f", {len(self.busy)} in use kept" if self.busy else ""
        return (
            f"gc: removed {len(self.removed)} environment{'s' * (len(self.removed) != 1)} "
            f"({freed}); {len(self.kept) + len(self.busy)} left ({left}){busy}"
        )


def cells(root: Path) -> list[Cell]:
    """The store's cells, least recently used first."""
    found = []
    for home in root.iterdir() if root.is_dir() else ():
        if not (home.is_dir() and _CELL.match(home.name)):
            continue
        stamps = [p.stat().st_mtime for p in (home / USED, home / "complete") if p.exists()]
        last = max(stamps) if stamps else home.stat().st_mtime
        found.append(Cell(home, last, _disk_size(home), (home / "complete").exists()))
    return sorted(found, key=lambda c: (c.last_used, c.home.name))


def collect(
    root: Path,
    *,
    keep_days: float | None = 14.0,
    max_size: int | None = None,
    now: float | None = None,
    say: Callable[[str], None] = lambda _line: None,
) -> Pruned:
    """Prune ``root`` (see the module's docstring); what was removed and kept."""
    now = time.time() if now is None else now
    found = cells(root)
    total = sum(c.size for c in found)
    pruned = Pruned()
    for cell in found:  # least recently used first
        old = keep_days is not None and now - cell.last_used > keep_days * 86400
        over = max_size is not None and total > max_size
        if not (old or over or not cell.complete):
            pruned.kept.append(cell)
            continue
        if _remove(root, cell):
            pruned.removed.append(cell)
            total -= cell.size
            day = time.strftime("%Y-%m-%d", time.localtime(cell.last_used))
            say(f"removed {cell.home.name}: last used {day}, {size_text(cell.size)}")
        else:
            pruned.busy.append(cell)
    _forget_removed(root, {c.home.name for c in [*pruned.kept, *pruned.busy]}, now)
    shutil.rmtree(root / TRASH, ignore_errors=True)
    return pruned


def _remove(root: Path, cell: Cell) -> bool:
    """Move the cell out of its identity's folder under its use lock (False: in use,
    or a builder holds it), then delete it."""
    with in_use(root, cell.home.name, wait=False) as free:
        if not free or _building(root, cell.home.name):
            return False
        stamp = cell.home / USED
        if stamp.exists() and stamp.stat().st_mtime > cell.last_used:
            return False  # used since it was listed
        trash = root / TRASH / f"{cell.home.name}.{os.getpid()}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(trash, ignore_errors=True)
        cell.home.rename(trash)
    shutil.rmtree(trash, ignore_errors=True)
    return True


def _building(root: Path, name: str) -> bool:
    """Whether a build holds the identity's lock (store._locked) right now."""
    path = root / f"{name}.lock"
    if not path.exists():
        return False
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _forget_removed(root: Path, left: set[str], now: float) -> None:
    """Fast-reuse entries of removed cells, and staged sources no cell's lock names
    (but a day old at least: a build may be about to use a new one)."""
    for entry in (root / REQUESTS).glob("*.json") if (root / REQUESTS).is_dir() else ():
        try:
            identity = json.loads(entry.read_text())["identity"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if identity[:16] not in left:
            entry.unlink(missing_ok=True)
    staged = root / STAGED
    if not staged.is_dir():
        return
    locks = "".join(
        (root / name / "lock.txt").read_text(errors="replace")
        for name in left
        if (root / name / "lock.txt").exists()
    )
    for copy in staged.iterdir():
        young = now - copy.stat().st_mtime < STAGED_GRACE
        if copy.is_dir() and copy.name not in locks and not young:
            shutil.rmtree(copy, ignore_errors=True)


def _disk_size(folder: Path) -> int:
    """Bytes on disk under ``folder``, each inode once (uv links files from its cache)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for top, _folders, names in os.walk(folder):
        for name in names:
            try:
                info = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
    return total
