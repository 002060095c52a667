"""A package built from a folder (a ``mylib: "."`` pin): what exactly was built.

A cell that installs a folder is keyed on the folder's source, not its version:
an edit without a commit or a version bump must rebuild that package (and only it:
the rest of the cell links from uv's cache), and the results must tell the two
trees apart. The source is what the package's build sees: the project root (the
folder of the pyproject.toml that owns the pin) minus what is not the package's:

- repromatrix's own files there: matrix.yaml and reports/ (at the project root and
  beside the matrix.yaml the pin was read from), so adding an ``atlas:`` block or
  a run's output is no edit of the package;
- build outputs: build/ and dist/ at the root, ``*.egg-info``, ``__pycache__``;
- files .gitignore hides (outside git: caches and environments, SKIPPED_FOLDERS).

``source_tree(package, folder, shown)`` gives

- ``digest``: sha256 of that source. In git: the tracked files' blobs at HEAD plus
  the content of every file ``git status`` lists (uncommitted edits, deletions and
  untracked files), so only edited files are read. Outside git: every file;
- ``commit``: HEAD's sha (None outside git or before the first commit);
- ``dirty``: whether the source differs from HEAD.

``stage_source`` copies that source into the store (a folder named by its digest),
where uv builds it: a build's ``build/`` and ``*.egg-info`` never land in the
user's tree, and the copy of one tree never changes, so uv's cached build of it
holds. A version read from git (setuptools-scm, hatch-vcs) needs the repository:
such a project is built in place (``builds_in_place``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix import procs

if TYPE_CHECKING:
    from repromatrix.matrix.pins import Pin

# Never part of a package's source outside git (caches, environments, build outputs).
SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".nox",
        ".tox",
        ".venv",
        "venv",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        "node_modules",
        "build",
        "dist",
    }
)
GIT_TIMEOUT = 60.0
# What repromatrix reads and writes beside matrix.yaml: no part of the package.
MATRIX_FILE = "matrix.yaml"
OUTPUTS = "reports"
# Where a build writes at the project root (setuptools' build/, `python -m build`'s dist/).
ROOT_BUILD_OUTPUTS = ("build", "dist")
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
# A version read from the repository's history: the build needs .git beside the tree.
_VERSION_FROM_GIT = re.compile(
    r"setuptools[-_]scm|hatch[-_]vcs|versioningit|dunamai|pdm[-_]backend.*scm"
)
STAGED = "_sources"


@dataclass(frozen=True)
class SourceTree:
    package: str
    path: str  # as the pin wrote it ("." or "./pkgs/mylib"), never this machine's
    digest: str  # "sha256:<hex>"
    commit: str | None = None
    dirty: bool = False

    def record(self) -> dict[str, object]:
        """As results.json stores it."""
        return {
            "path": self.path,
            "digest": self.digest,
            "commit": self.commit,
            "dirty": self.dirty,
        }

    @classmethod
    def of_record(cls, package: str, record: dict) -> SourceTree:
        """Back from results.json's ``record()`` (a hand-edited file: what is there)."""
        commit = record.get("commit")
        return cls(
            package,
            str(record.get("path") or ""),
            str(record.get("digest") or ""),
            str(commit) if commit else None,
            bool(record.get("dirty")),
        )

    def short(self) -> str:
        """``abc1234`` / ``abc1234 + edits`` / ``no commit``: which tree, as a reader
        compares two (a regression's "your source changed: abc1234 -> def5678 + edits")."""
        at = self.commit[:7] if self.commit else "no commit"
        return f"{at} + edits" if self.dirty else at

    def label(self) -> str:
        """``mylib . abc1234 + edits, sha256:0f1e2d3c4b5a``: the package, the folder,
        the commit, the dirty flag and the short digest, as every report shows them."""
        return f"{self.package} {self.path} {self.short()}, {self.digest[:19]}"

    def line(self) -> str:
        """``mylib .: commit 1a2b3c4d5e6f + uncommitted edits, source sha256:0f1e2d3c4b5a``"""
        at = f"commit {self.commit[:12]}" if self.commit else "no commit"
        edits = " + uncommitted edits" if self.dirty else ""
        return f"{self.package} {self.path}: {at}{edits}, source {self.digest[:19]}"


def changed_text(before: SourceTree, after: SourceTree) -> str:
    """``abc1234 -> def5678 + edits``; with the digests where the words alone are the
    same (two different sets of edits on one commit)."""
    old, new = before.short(), after.short()
    if old == new:
        old, new = f"{old} ({before.digest[:19]})", f"{new} ({after.digest[:19]})"
    return f"{old} -> {new}"


def pin_sources(pins: Iterable[Pin]) -> tuple[SourceTree, ...]:
    """The source of each package the pins build from a folder: a path pin, or a
    ``file:`` URL of a folder (keyed on its text alone, an edit would reuse the old
    build). What names a folder pin's tree wherever a cell is keyed (the store, a
    hunt's record, the atlas)."""
    from repromatrix.matrix.pins import PinKind

    trees = []
    for pin in pins:
        if pin.kind is PinKind.PATH:
            trees.append(source_tree(pin.package, pin.location, pin.spec, beside=pin.base))
        elif pin.kind is PinKind.DIRECT and pin.spec.startswith("file:"):
            from urllib.parse import unquote, urlsplit

            folder = Path(unquote(urlsplit(pin.spec).path))
            if folder.is_dir():
                trees.append(source_tree(pin.package, folder, pin.spec))
    return tuple(trees)


def project_root(folder: Path) -> Path:
    """The folder of the pyproject.toml (or setup.py) that owns ``folder``: itself,
    or the nearest folder above it that has one; ``folder`` when none does."""
    folder = Path(folder)
    for place in (folder, *folder.parents):
        if any((place / name).is_file() for name in PROJECT_FILES):
            return place
    return folder


def source_tree(package: str, folder: Path, shown: str, *, beside: str | Path = "") -> SourceTree:
    """The source of the project that owns ``folder`` (it must be a folder: a missing
    one is the pin's to report). ``beside``: the folder of the matrix.yaml the pin was
    read from (its matrix.yaml and reports/ are not the package's)."""
    root = project_root(folder)
    outside = _not_source(root, beside)
    git = shutil.which("git")
    if git is not None and root.is_dir():
        found = _git_tree(git, root, outside)
        if found is not None:
            digest, commit, dirty = found
            return SourceTree(package, shown, digest, commit, dirty)
    return SourceTree(package, shown, _walk_digest(root, outside))


def _not_source(root: Path, beside: str | Path) -> tuple[str, ...]:
    """Paths relative to ``root`` that are no part of the package (a folder ends in /)."""
    places = [""]
    if beside:
        try:
            inside = Path(beside).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            inside = None
        if inside not in (None, "."):
            places.append(f"{inside}/")
    out = [f"{place}{MATRIX_FILE}" for place in places]
    out += [f"{place}{OUTPUTS}/" for place in places]
    out += [f"{name}/" for name in ROOT_BUILD_OUTPUTS]
    return tuple(out)


def is_source(relative: str, outside: tuple[str, ...]) -> bool:
    """Whether a file (posix, relative to the project root) is the package's."""
    if any(relative == o or (o.endswith("/") and relative.startswith(o)) for o in outside):
        return False
    parts = relative.split("/")
    if any(p == "__pycache__" or p.endswith(".egg-info") for p in parts[:-1]):
        return False
    return not parts[-1].endswith((".pyc", ".pyo"))


def _git(git: str, folder: Path, *args: str) -> procs.Completed | None:
    done = procs.run([git, *args], cwd=folder, timeout=GIT_TIMEOUT)
    return done if done.returncode == 0 and not done.timed_out else None


def _prefix(git: str, root: Path) -> str | None:
    """``root`` relative to its repository's top ("" at the top, "pkgs/mylib/" below)."""
    found = _git(git, root, "rev-parse", "--show-prefix")
    return found.stdout.strip() if found is not None else None


def _git_tree(
    git: str, root: Path, outside: tuple[str, ...]
) -> tuple[str, str | None, bool] | None:
    prefix = _prefix(git, root)
    if prefix is None:
        return None
    top = root.resolve()
    for _ in range(prefix.count("/")):
        top = top.parent
    head = _git(git, root, "rev-parse", "--verify", "--quiet", "HEAD")
    commit = head.stdout.strip() if head is not None else None
    tracked: list[str] = []
    if commit:
        # "<mode> <type> <object>\t<path>", paths from the repository's top.
        listed = _git(git, root, "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", prefix or ".")
        if listed is None:
            return None
        for entry in listed.stdout.split("\0"):
            meta, _, path = entry.partition("\t")
            if path.startswith(prefix) and is_source(path[len(prefix) :], outside):
                tracked.append(f"{meta} {path[len(prefix) :]}")
    # Paths from the repository's top, NUL-separated; a rename's entry is followed by
    # its old path.
    status = _git(
        git, root, "status", "--porcelain=v1", "-z", "--untracked-files=all",
        "--ignored=no", "--", ".",
    )  # fmt: skip
    if status is None:
        return None
    changed: dict[str, str] = {}
    entries = iter(status.stdout.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, paths = entry[:2], [entry[3:]]
        if "R" in code or "C" in code:
            paths.append(next(entries, ""))
        for path in paths:
            relative = path[len(prefix) :] if path.startswith(prefix) else None
            if relative is not None and is_source(relative, outside):
                changed[relative] = _file_digest(top / path)
    document = {"tree": tracked, "changed": sorted(changed.items())}
    digest = hashlib.sha256(json.dumps(document).encode()).hexdigest()
    return f"sha256:{digest}", commit, bool(changed)


def _file_digest(path: Path) -> str:
    """A file's content (and whether it runs), or what stands in its place."""
    try:
        if path.is_symlink():
            return f"link:{os.readlink(path)}"
        if not path.exists():
            return "deleted"
        if path.is_dir():  # a nested repository, listed as one entry
            return f"folder:{_walk_digest(path, ())}"
        mode = "x" if os.access(path, os.X_OK) else "f"
        return f"{mode}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
    except OSError as err:
        return f"unreadable:{err.errno}"


def _walk(folder: Path, outside: tuple[str, ...]) -> list[str]:
    """Every file of the package under ``folder`` outside git, relative, in order."""
    found: list[str] = []
    for top, folders, names in os.walk(folder):
        folders[:] = sorted(
            f for f in folders if f not in SKIPPED_FOLDERS and not f.endswith(".egg-info")
        )
        for name in sorted(names):
            relative = (Path(top) / name).relative_to(folder).as_posix()
            if is_source(relative, outside):
                found.append(relative)
    return found


def _walk_digest(folder: Path, outside: tuple[str, ...]) -> str:
    files = [(relative, _file_digest(folder / relative)) for relative in _walk(folder, outside)]
    return "sha256:" + hashlib.sha256(json.dumps(files).encode()).hexdigest()


# --------------------------------------------------------------------------- staging


def source_files(folder: Path, *, beside: str | Path = "") -> tuple[Path, list[str]]:
    """The project root that owns ``folder`` and its source files (relative): git's
    tracked and untracked files that .gitignore does not hide, or outside git every
    file but caches and build outputs; what the digest covers."""
    root = project_root(folder)
    outside = _not_source(root, beside)
    git = shutil.which("git")
    if git is not None:
        listed = _git(
            git, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."
        )
        if listed is not None:
            names = dict.fromkeys(p for p in listed.stdout.split("\0") if p)
            return root, [p for p in names if is_source(p, outside) and (root / p).exists()]
    return root, _walk(root, outside)


def builds_in_place(root: Path) -> bool:
    """Whether the project takes its version from git (setuptools-scm, hatch-vcs ...):
    a copy without the repository could not build."""
    for name in PROJECT_FILES:
        try:
            text = (root / name).read_text(errors="replace")
        except OSError:
            continue
        if _VERSION_FROM_GIT.search(text):
            return True
    return False


def stage_source(store: Path, tree: SourceTree, folder: Path, *, beside: str | Path = "") -> Path:
    """``folder`` as a copy of its project's source under ``store/_sources``, named by
    the digest (made once, whole or not at all); the folder to build from in it."""
    root, files = source_files(folder, beside=beside)
    home = store / STAGED / f"{tree.package}-{tree.digest.removeprefix('sha256:')[:24]}"
    inner = home / Path(folder).resolve().relative_to(root.resolve())
    if home.is_dir():  # renamed into place whole: complete
        return inner
    tmp = home.with_name(f"{home.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for relative in files:
        target = tmp / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        source = root / relative
        if source.is_symlink() or source.is_file():
            shutil.copy2(source, target, follow_symlinks=False)
        elif source.is_dir():  # a submodule, listed as one entry
            ignore = shutil.ignore_patterns(".git", "__pycache__")
            shutil.copytree(source, target, symlinks=True, ignore=ignore)
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        tmp.rename(home)
    except OSError:  # another build staged the same tree first: theirs is the same
        shutil.rmtree(tmp, ignore_errors=True)
    return inner
