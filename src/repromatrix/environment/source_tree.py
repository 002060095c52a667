"""A package built from a folder (a ``mylib: "."`` pin): what exactly was built.

A cell that installs a folder is keyed on the folder's source, not its version:
an edit without a commit or a version bump must rebuild that package (and only it:
the rest of the cell links from uv's cache), and the results must tell the two
trees apart. ``source_tree(folder)`` gives

- ``digest``: sha256 of what a build sees. In git: the folder's tree at HEAD plus
  the content of every file ``git status`` lists (uncommitted edits, deletions and
  untracked files that .gitignore does not hide, but those under reports/, where
  runs, bisects and sweeps write), so only edited files are read.
  Outside git: every file under the folder but caches and build outputs;
- ``commit``: HEAD's sha (None outside git or before the first commit);
- ``dirty``: whether the folder differs from HEAD.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from repromatrix import procs

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
# Where repromatrix writes (reports/latest, reports/bisect, ...): an untracked file
# there is a run's output, not source (a bisect of `mylib=.` writes there as it goes).
OUTPUTS = "reports/"


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

    def line(self) -> str:
        """``mylib .: commit 1a2b3c4d5e6f + uncommitted edits, source sha256:0f1e2d3c4b5a``"""
        at = f"commit {self.commit[:12]}" if self.commit else "no commit"
        edits = " + uncommitted edits" if self.dirty else ""
        return f"{self.package} {self.path}: {at}{edits}, source {self.digest[:19]}"


def source_tree(package: str, folder: Path, shown: str) -> SourceTree:
    """The source of ``folder`` (it must be a folder: a missing one is the
    installer's to report, by its own message)."""
    git = shutil.which("git")
    if git is not None and folder.is_dir():
        found = _git_tree(git, folder)
        if found is not None:
            digest, commit, dirty = found
            return SourceTree(package, shown, digest, commit, dirty)
    return SourceTree(package, shown, _walk_digest(folder))


def _git(git: str, folder: Path, *args: str) -> procs.Completed | None:
    done = procs.run([git, *args], cwd=folder, timeout=GIT_TIMEOUT)
    return done if done.returncode == 0 and not done.timed_out else None


def _git_tree(git: str, folder: Path) -> tuple[str, str | None, bool] | None:
    top = _git(git, folder, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    root = Path(top.stdout.strip())
    outputs = (Path(folder).resolve() / OUTPUTS).relative_to(root.resolve()).as_posix() + "/"
    head = _git(git, folder, "rev-parse", "--verify", "--quiet", "HEAD")
    commit = head.stdout.strip() if head is not None else None
    tree = _git(git, folder, "rev-parse", "HEAD:./") if commit else None
    # Paths relative to the repository root, NUL-separated; a rename's entry is
    # followed by its old path.
    status = _git(
        git, folder, "status", "--porcelain=v1", "-z", "--untracked-files=all",
        "--ignored=no", "--", ".",
    )  # fmt: skip
    if status is None:
        return None
    changed: dict[str, str] = {}
    entries = iter(status.stdout.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??" and path.startswith(outputs):
            continue
        if "R" in code or "C" in code:
            old = next(entries, "")
            changed[old] = _file_digest(root / old)
        changed[path] = _file_digest(root / path)
    document = {"tree": tree.stdout.strip() if tree else None, "changed": sorted(changed.items())}
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
            return f"folder:{_walk_digest(path)}"
        mode = "x" if os.access(path, os.X_OK) else "f"
        return f"{mode}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
    except OSError as err:
        return f"unreadable:{err.errno}"


def _walk_digest(folder: Path) -> str:
    files: list[tuple[str, str]] = []
    for top, folders, names in os.walk(folder):
        folders[:] = sorted(
            f for f in folders if f not in SKIPPED_FOLDERS and not f.endswith(".egg-info")
        )
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(top) / name
            files.append((path.relative_to(folder).as_posix(), _file_digest(path)))
    return "sha256:" + hashlib.sha256(json.dumps(files).encode()).hexdigest()
