"""Which matrix.yaml a command means when --matrix is not given: the nearest one in
the working directory or a folder above it, the way git finds .git (a command run
from cases/ or a subfolder of the project uses the project's matrix); and the
project's other default places (reports/, cases/) beside that matrix.yaml."""

from __future__ import annotations

import os
from pathlib import Path

from repromatrix.matrix.defaults import MATRIX_FILE as FILE_NAME


def find_matrix(start: Path | None = None) -> Path | None:
    """The nearest matrix.yaml at or above ``start`` (default: the working directory)."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / FILE_NAME).is_file():
            return candidate / FILE_NAME
    return None


def shown(path: Path) -> str:
    """The matrix file as the run facts name it: relative to the working directory
    (``matrix.yaml``, ``../matrix.yaml``), never an absolute path of this machine."""
    try:
        relative = os.path.relpath(Path(path).resolve(), Path.cwd())
    except ValueError:  # another drive (Windows)
        return Path(path).name
    *folders, _name = Path(relative).parts
    # Below here, or found upward (only '..' steps): the user can type it. A path that
    # climbs out and down again spells this machine's folders: the name alone.
    if ".." not in folders or all(part == ".." for part in folders):
        return relative
    return Path(path).name


def beside(matrix: Path, default: Path) -> Path:
    """A default place (``reports/latest``, ``cases``) in the folder of ``matrix``, as
    a path relative to the working directory (``../reports/latest``): what the
    console shows is what the user can type, never an absolute path of this machine."""
    place = Path(matrix).resolve().parent / default
    try:
        return Path(os.path.relpath(place, Path.cwd()))
    except ValueError:  # another drive (Windows)
        return place
