"""``repromatrix init [DIR]``: scaffold a project of one's own into an existing folder.

It writes matrix.yaml (one CPU smoke combination), cases/ (an example case with the
markers, a GPU-marked one, an empty known_issues.yaml), a thin noxfile.py, the
GitHub workflows (.github/workflows, installing repromatrix as a tool from where this
one was installed: install_source.py) and the .gitignore lines for what a run leaves
(merged into an existing .gitignore, never replacing it). The files are the
package's own (repromatrix/scaffold/); an existing file is never replaced without
--force.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from repromatrix.install_source import InstallSource

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
    "workflows/issue-repro.yml": ".github/workflows/issue-repro.yml",
    "workflows/smoke.yml": ".github/workflows/smoke.yml",
    # Green with one notice until matrix.yaml has an atlas: block (docs/atlas.md).
    "workflows/atlas.yml": ".github/workflows/atlas.yml",
    # Weekly, green with one notice until the REPROMATRIX_BOUNDS variable says what to
    # test (docs/bounds.md).
    "workflows/bounds.yml": ".github/workflows/bounds.yml",
    # The workflows' one install step (uses: ./.github/actions/install-repromatrix).
    "actions/install-repromatrix/action.yml": ".github/actions/install-repromatrix/action.yml",
    "actions/install-repromatrix/install.sh": ".github/actions/install-repromatrix/install.sh",
    "actions/install-repromatrix/digest.sh": ".github/actions/install-repromatrix/digest.sh",
}
WORKFLOWS = "workflows/"
# Scaffold files whose one source is this repository's .github/ folder.
FROM_GITHUB = (WORKFLOWS, "actions/")


# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("init",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        "init",
        help="scaffold matrix.yaml, cases/, a noxfile and the workflows into a folder",
    )
    init.add_argument(
        "folder", nargs="?", type=Path, default=Path("."), help="(default: this folder)"
    )
    init.add_argument("--force", action="store_true", help="overwrite files that exist")


GITIGNORE = ".gitignore"
# What the shipped workflows install when neither their `repromatrix` input nor the
# REPROMATRIX_SOURCE variable says otherwise: init puts this repromatrix's source there.
WORKFLOW_FALLBACK = "|| 'repromatrix' }}"
DESCRIBED_FALLBACK = "else repromatrix)"


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "init":
        return None
    from repromatrix.install_source import installed_source

    for line in scaffold(args.folder, force=args.force, source=installed_source()):
        print(line)
    return 0


def _source(name: str) -> Traversable | Path:
    """A scaffold file. The workflows and their install action have one source, this
    repository's .github/workflows and .github/actions: a wheel carries them as
    scaffold/workflows and scaffold/actions (pyproject.toml's force-include); a source
    checkout (an editable install, src/ on the path) reads them where they are."""
    from importlib import resources

    node = resources.files("repromatrix") / "scaffold"
    for part in name.split("/"):
        node = node / part
    if name.startswith(FROM_GITHUB) and not node.is_file():
        checkout = Path(__file__).resolve().parents[3] / ".github" / name
        if checkout.is_file():
            return checkout
    return node


def scaffold(
    folder: Path, *, force: bool = False, source: InstallSource | None = None
) -> list[str]:
    """Write the scaffold into ``folder`` (which must exist); the lines to print. The
    workflows install repromatrix from ``source`` by default (None: as shipped)."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder (init scaffolds into an existing one)")
    if not force:
        for target in FILES.values():
            if (folder / target).exists():
                raise UserError(f"{folder / target}: exists; init overwrites nothing (--force)")
    written = []
    for name, target in FILES.items():
        path = folder / target
        path.parent.mkdir(parents=True, exist_ok=True)
        text = _source(name).read_text(encoding="utf-8")
        if name.startswith("workflows/") and source is not None:
            text = with_install_source(text, source.requirement)
        path.write_text(text, encoding="utf-8")
        written.append(f"wrote {target}")
    if source is not None:
        written.append(
            f"note: {source.note}"
            if source.note
            else f"the workflows install {source.requirement} (unless their repromatrix input "
            "or the REPROMATRIX_SOURCE variable says otherwise)"
        )
    written.append(merge_gitignore(folder / GITIGNORE, _source("gitignore").read_text()))
    return [
        *written,
        "next: repromatrix list --cases; repromatrix run (the smoke tier; reports in "
        "reports/latest/)",
    ]


def with_install_source(workflow: str, requirement: str) -> str:
    """A shipped workflow whose default install source is ``requirement``."""
    if WORKFLOW_FALLBACK not in workflow:
        return workflow  # nightly-combination.yml: its caller passes the source
    quoted = requirement.replace("'", "''")  # a workflow expression's string
    return workflow.replace(WORKFLOW_FALLBACK, f"|| '{quoted}' }}}}").replace(
        DESCRIBED_FALLBACK, f"else {requirement})"
    )


def merge_gitignore(path: Path, lines: str) -> str:
    """Append to ``path`` the lines of ``lines`` it lacks (comments only with them);
    an existing .gitignore keeps everything it had. The line to print."""
    existing = path.read_text(encoding="utf-8") if path.exists() else None
    have = {line.strip() for line in (existing or "").splitlines()}
    patterns = [line for line in lines.splitlines() if line and not line.startswith("#")]
    missing = [line for line in patterns if line not in have]
    if existing is None:
        path.write_text(lines, encoding="utf-8")
        return f"wrote {GITIGNORE}"
    if not missing:
        return f"left {GITIGNORE} as it was: it ignores what a run leaves already"
    block = [line for line in lines.splitlines() if line.startswith("#") or line in missing]
    separator = "" if existing.endswith("\n") or not existing else "\n"
    path.write_text(existing + separator + "\n" + "\n".join(block) + "\n", encoding="utf-8")
    return f"added {len(missing)} lines to {GITIGNORE} (what a run leaves); kept the rest"
