"""``repromatrix init [DIR]``: scaffold a project of one's own into an existing folder.

It writes matrix.yaml (one CPU smoke combination; the folder's own package, where its
pyproject.toml names one, pinned to the folder in every combination), cases/ (an
example case with the markers, a GPU-marked one, one that the package is installed,
an empty known_issues.yaml), a thin noxfile.py, the GitHub workflows
(.github/workflows, with their install action), what CI installs repromatrix from
(docs/setup.md: the requirement it came from, install_source.py, or a wheel of it in
.github/repromatrix/, install_wheel.py; the hashed lock of its dependencies there
either way) and the .gitignore lines for what repromatrix writes (merged into an
existing .gitignore, never replacing it). The files are the package's own
(repromatrix/scaffold/); an existing file is never replaced without --force.
``--upgrade`` refreshes only what installs repromatrix in CI, from this repromatrix.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from repromatrix.install_source import InstallSource

ACTION = "actions/install-repromatrix/"
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
    f"{ACTION}action.yml": f".github/{ACTION}action.yml",
    f"{ACTION}install.sh": f".github/{ACTION}install.sh",
    f"{ACTION}digest.sh": f".github/{ACTION}digest.sh",
    f"{ACTION}pack.sh": f".github/{ACTION}pack.sh",
}
WORKFLOWS = "workflows/"
# The hashed lock of this repromatrix's dependencies: this repository's
# .github/repromatrix/requirements.txt (nox -s lock), packed into the wheel.
LOCK = "repromatrix/requirements.txt"
# Scaffold files whose one source is this repository's .github/ folder.
FROM_GITHUB = (WORKFLOWS, "actions/", "repromatrix/")
# Where the folder's own package gets a case of its own (made when init finds one).
PACKAGE_CASE = "cases/test_package.py"


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
    init.add_argument(
        "--upgrade",
        action="store_true",
        help="refresh only what installs repromatrix in CI, from this repromatrix: "
        ".github/repromatrix/ (its wheel, SHA256SUMS, the hashed lock), the install action, "
        "the workflows' default source",
    )


GITIGNORE = ".gitignore"
# The workflows' last word on where repromatrix comes from, when neither their
# `repromatrix` input nor the REPROMATRIX_SOURCE variable says: `.` (the checkout) in
# repromatrix's own repository; init writes this repromatrix's source there, or '' for
# the wheel it shipped (the install action's default).
_FALLBACK = re.compile(r"(\|\| vars\.REPROMATRIX_SOURCE \|\| )'(?:[^']|'')*'( \}\})")
_DESCRIBED = re.compile(r"(the REPROMATRIX_SOURCE variable, else )[^\"\n]*(\)\")")
SHIPPED_WORDS = "the wheel in .github/repromatrix"


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "init":
        return None
    from repromatrix.install_source import installed_source

    source = installed_source()
    if args.upgrade and not args.force:
        lines = upgrade(args.folder, source=source)
    else:
        lines = scaffold(args.folder, force=args.force, source=source)
    for line in lines:
        print(line)
    return 0


def _source(name: str) -> Traversable | Path:
    """A scaffold file. The workflows, their install action and the lock have one
    source, this repository's .github/ folder: a wheel carries them as scaffold/...
    (pyproject.toml's force-include); a source checkout (an editable install, src/ on
    the path) reads them where they are."""
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
    workflows install repromatrix from ``source`` by default, with what install_files
    ships (None: as this repository's own, nothing shipped)."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder (init scaffolds into an existing one)")
    package = own_package(folder)
    targets = [*FILES.values(), *([PACKAGE_CASE] if package else [])]
    if not force:
        for target in targets:
            if (folder / target).exists():
                raise UserError(
                    f"{folder / target}: exists; init overwrites nothing (--force; "
                    "--upgrade refreshes only what installs repromatrix in CI)"
                )
    install = install_files(source) if source is not None else {}  # before anything is written
    written = []
    for name, target in FILES.items():
        text = _source(name).read_text(encoding="utf-8")
        if name.startswith(WORKFLOWS) and source is not None:
            text = with_install_source(text, source.requirement)
        if name == "matrix.yaml" and package:
            text = with_own_package(text, package)
        _write(folder / target, text.encode())
        written.append(f"wrote {target}")
    if package:
        _write(folder / PACKAGE_CASE, package_case(package).encode())
        written.append(f"wrote {PACKAGE_CASE} (your package {package}, pinned to this folder)")
    if source is not None:
        written += _write_install(folder, install, source)
    written.append(merge_gitignore(folder / GITIGNORE, _source("gitignore").read_text()))
    return [
        *written,
        "next: repromatrix list --cases; repromatrix run (the smoke tier; reports in "
        "reports/latest/); commit, and the push runs it in CI (nothing to set: docs/setup.md)",
    ]


def upgrade(folder: Path, *, source: InstallSource) -> list[str]:
    """Refresh what installs repromatrix in CI: .github/repromatrix/, the install action,
    and the default source in the workflows init wrote (their other lines kept)."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    if own_package(folder) == "repromatrix":
        raise UserError(
            f"{folder}: repromatrix's own repository: its workflows install the checkout (.), "
            "and python3 -m nox -s lock refreshes its lock"
        )
    install = install_files(source)
    written = []
    for name, target in FILES.items():
        if name.startswith(ACTION):
            _write(folder / target, _source(name).read_bytes())
            written.append(f"wrote {target}")
        elif name.startswith(WORKFLOWS) and (folder / target).is_file():
            text = (folder / target).read_text(encoding="utf-8")
            new = with_install_source(text, source.requirement)
            if new != text:
                (folder / target).write_text(new, encoding="utf-8")
                written.append(f"updated the default install source in {target}")
    return written + _write_install(folder, install, source)


def install_files(source: InstallSource) -> dict[str, bytes]:
    """The files of .github/repromatrix/: the hashed lock of this repromatrix's
    dependencies, and, where CI cannot install it from where it came, its wheel and
    SHA256SUMS."""
    from repromatrix.install_wheel import shipped_files, this_wheel

    lock = _source(LOCK).read_text(encoding="utf-8")
    if source.requirement is not None:
        return shipped_files(None, lock)
    with tempfile.TemporaryDirectory(prefix="repromatrix-wheel-") as out:
        return shipped_files(this_wheel(Path(out)), lock)


def _write_install(folder: Path, files: dict[str, bytes], source: InstallSource) -> list[str]:
    from repromatrix.install_wheel import FOLDER, LOCK, SUMS

    shipped = folder / FOLDER
    for old in [*shipped.glob("repromatrix-*.whl"), shipped / SUMS]:
        old.unlink(missing_ok=True)  # an older wheel: the action installs exactly one
    for name, data in files.items():
        _write(shipped / name, data)
    if source.requirement is not None:
        return [
            f"wrote {FOLDER}/{LOCK} (the hashed lock of repromatrix's dependencies); the "
            f"workflows install {source.requirement} (unless their repromatrix input or the "
            "REPROMATRIX_SOURCE variable says otherwise)"
        ]
    (wheel,) = [name for name in files if name.endswith(".whl")]
    return [
        f"wrote {FOLDER}/{wheel}, its {SUMS} and {LOCK} (the hashed lock of its "
        f"dependencies): {source.local}, which CI cannot reach, so the workflows install this "
        "wheel (commit it; repromatrix init --upgrade refreshes it; the REPROMATRIX_SOURCE "
        "variable overrides it: docs/setup.md)"
    ]


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def with_install_source(workflow: str, requirement: str | None) -> str:
    """A workflow whose default install source is ``requirement`` (None: the wheel
    shipped in .github/repromatrix, the install action's default)."""
    quoted = (requirement or "").replace("'", "''")  # a workflow expression's string
    workflow = _FALLBACK.sub(lambda m: f"{m[1]}'{quoted}'{m[2]}", workflow)
    words = requirement or SHIPPED_WORDS
    return _DESCRIBED.sub(lambda m: f"{m[1]}{words}{m[2]}", workflow)


def own_package(folder: Path) -> str | None:
    """The package the folder's pyproject.toml names ([project] name), canonical."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: no TOML reader in the standard library
        return None
    from repromatrix.names import canonicalize_name

    try:
        with open(folder / "pyproject.toml", "rb") as handle:
            name = tomllib.load(handle).get("project", {}).get("name")
    except (OSError, ValueError):
        return None
    return canonicalize_name(name) if isinstance(name, str) and name.strip() else None


def with_own_package(matrix: str, package: str) -> str:
    """The scaffold's matrix.yaml with ``package`` among the columns and pinned to this
    folder in every combination (defaults)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", package):
        return matrix  # not a YAML key to write unquoted; the comment says how
    columns = f"# The report's columns, in order.\npackages: [torch, transformers, {package}]\n"
    matrix = matrix.replace("\nschema: 1\n", f"\nschema: 1\n{columns}", 1)
    return re.sub(
        r"(?m)^(defaults:\n(?:  .*\n)*?)(?=\S|\n)",
        lambda m: (
            f"{m[1]}  # Your package, built from this folder (relative to this file) in "
            "every combination,\n  # keyed on its source: an edit rebuilds it, not torch.\n"
            f'  {package}: "."\n'
        ),
        matrix,
        count=1,
    )


def package_case(package: str) -> str:
    function = re.sub(r"\W", "_", package)
    return (
        f'"""Your package, {package}, in every combination (made by `repromatrix init`):\n'
        'matrix.yaml pins it to this folder ("."), so each combination builds it from your\n'
        'working tree. Replace this with cases that use it."""\n\n'
        "from importlib import metadata\n\n\n"
        f"def test_{function}_is_installed_from_this_folder():\n"
        f'    assert metadata.version("{package}")\n'
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
        return f"left {GITIGNORE} as it was: it ignores what repromatrix writes already"
    block = [line for line in lines.splitlines() if line.startswith("#") or line in missing]
    separator = "" if existing.endswith("\n") or not existing else "\n"
    path.write_text(existing + separator + "\n" + "\n".join(block) + "\n", encoding="utf-8")
    return f"added {len(missing)} lines to {GITIGNORE} (what repromatrix writes); kept the rest"
