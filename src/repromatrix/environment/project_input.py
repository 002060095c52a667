"""What uv reads besides its flags: a cell's requirements when a package has an index
of its own (a project file), the lock ``uv pip sync`` installs, the overrides file.

``package_indexes: {torch: "https://download.pytorch.org/whl/cpu"}`` must apply to
torch alone: as an extra index, uv would ask it first for every package (so an
unreachable CPU index broke the install of pytest). uv's way is an *explicit* index,
which serves only the packages whose source names it; ``uv pip`` reads indexes and
sources from a project file, not from flags. So the requirements go into a small
pyproject.toml (content-named, in the store), with

    [[tool.uv.index]]   name, url, explicit = true   (one per index)
    [tool.uv.sources]   torch = { index = "..." }     (each package it serves)

and ``uv pip compile`` / ``install -r`` / ``sync`` read that file instead of the
requirements text. A source applies to a requirement of the file (uv's rule): a
package named in ``package_indexes`` comes from its index when the cell pins it
(matrix.yaml's defaults usually do, for torch); one only a dependency pulls in
resolves from the other indexes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from repromatrix.environment.indexes import IndexSettings
from repromatrix.names import canonicalize_name

PROJECTS = "_projects"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(requirement: str) -> str | None:
    found = _NAME.match(requirement)
    return canonicalize_name(found.group(1)) if found else None


def project_file(
    store: Path, requirements: list[str], index: IndexSettings, held: frozenset[str] = frozenset()
) -> Path | None:
    """The pyproject.toml that asks for ``requirements`` with each package that has
    an index of its own taken from it alone; None when no requirement has one (uv
    then reads the requirements as text, as before). ``held``: packages that keep
    no index of their own (a ``system`` pin: the resolver sees a stub of the base
    interpreter's copy, on no index)."""
    named = {requirement_name(r) for r in requirements} - held
    sourced = {p: url for p, url in index.package_indexes if p in named}
    if not sourced:
        return None
    text = project_text(requirements, sourced)
    folder = store / PROJECTS / hashlib.sha256(text.encode()).hexdigest()[:16]
    path = folder / "pyproject.toml"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"pyproject.{os.getpid()}.tmp"
        tmp.write_text(text)
        tmp.replace(path)
    return path


def project_text(requirements: list[str], sourced: dict[str, str]) -> str:
    """The file itself: a project of no code, its dependencies the requirements."""

    def quoted(text: str) -> str:
        return json.dumps(text)  # a TOML basic string: JSON's escapes are TOML's

    urls = list(dict.fromkeys(sourced.values()))
    names = {url: f"repromatrix-index-{number}" for number, url in enumerate(urls, 1)}
    lines = ["[project]", 'name = "repromatrix-cell"', 'version = "0"', "dependencies = ["]
    lines += [f"  {quoted(r)}," for r in requirements]
    lines.append("]")
    for url in urls:
        lines += ["", "[[tool.uv.index]]", f"name = {quoted(names[url])}"]
        lines += [f"url = {quoted(url)}", "explicit = true"]
    lines += ["", "[tool.uv.sources]"]
    lines += [f"{quoted(p)} = {{ index = {quoted(names[url])} }}" for p, url in sourced.items()]
    return "\n".join(lines) + "\n"


def lock_input(store: Path, home: Path, index: IndexSettings) -> Path:
    """What ``uv pip sync`` reads: the lock, or, where a package has an index of its
    own, the lock as a project file that says so."""
    lock = (home / "lock.txt").read_text().splitlines()
    lines = [line.strip() for line in lock if line.strip() and not line.startswith("#")]
    return project_file(store, lines, index) or home / "lock.txt"


def overrides_file(folder: Path, overrides: tuple[str, ...]) -> Path:
    """The overrides as a requirements file for uv, named by its content (runs in
    parallel never write each other's)."""
    text = "".join(f"{line}\n" for line in sorted(overrides))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"overrides-{hashlib.sha256(text.encode()).hexdigest()[:16]}.txt"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path
