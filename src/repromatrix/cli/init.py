"""``repromatrix init [DIR]``: scaffold a project of one's own into an existing folder.

It writes matrix.yaml (one CPU smoke combination), cases/ (an example case with the
markers, a GPU-marked one, an empty known_issues.yaml), a thin noxfile.py and the
GitHub workflows (.github/workflows, installing repromatrix as a tool). The files
are the package's own (repromatrix/scaffold/); an existing file is never replaced
without --force.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

# scaffold/<source> -> <DIR>/<target>
FILES = {
    "matrix.yaml": "matrix.yaml",
    "noxfile.py": "noxfile.py",
    "cases/test_example.py": "cases/test_example.py",
    "cases/known_issues.yaml": "cases/known_issues.yaml",
    "workflows/nightly.yml": ".github/workflows/nightly.yml",
    "workflows/nightly-combination.yml": ".github/workflows/nightly-combination.yml",
    "workflows/bisect.yml": ".github/workflows/bisect.yml",
    "workflows/culprit.yml": ".github/workflows/culprit.yml",
}


def add_commands(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        "init",
        help="scaffold matrix.yaml, cases/, a noxfile and the workflows into a folder",
    )
    init.add_argument(
        "folder", nargs="?", type=Path, default=Path("."), help="(default: this folder)"
    )
    init.add_argument("--force", action="store_true", help="overwrite files that exist")


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "init":
        return None
    for line in scaffold(args.folder, force=args.force):
        print(line)
    return 0


def _source(name: str) -> Traversable:
    from importlib import resources

    node = resources.files("repromatrix") / "scaffold"
    for part in name.split("/"):
        node = node / part
    return node


def scaffold(folder: Path, *, force: bool = False) -> list[str]:
    """Write the scaffold into ``folder`` (which must exist); the lines to print."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder (init scaffolds into an existing one)")
    if not force:
        for target in FILES.values():
            if (folder / target).exists():
                raise UserError(f"{folder / target}: exists; init overwrites nothing (--force)")
    written = []
    for source, target in FILES.items():
        path = folder / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_source(source).read_bytes())
        written.append(f"wrote {target}")
    return [
        *written,
        "next: repromatrix list --cases; repromatrix run (the smoke tier; reports in "
        "reports/latest/)",
    ]
