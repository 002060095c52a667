"""The release (.github/workflows/release.yml) builds an sdist and a wheel and checks
them with twine before publishing: the same here, so that a release does not find
out on the day that the README does not render or the metadata is refused. And the
wheel carries what init and the reports read from the package (scaffold/, assets/)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from repromatrix import __version__
from repromatrix.cli.init import FILES, LOCK

pytest.importorskip("twine", reason="twine is in the `test` dependency group")


def test_the_sdist_and_wheel_build_and_pass_twine_check(repo_root: Path, tmp_path: Path) -> None:
    from uv import find_uv_bin

    dist = tmp_path / "dist"
    subprocess.run(
        [find_uv_bin(), "build", "--quiet", "--out-dir", str(dist), str(repo_root)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob(f"repromatrix-{__version__}-py3-none-any.whl")
    (sdist,) = dist.glob(f"repromatrix-{__version__}.tar.gz")
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2

    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"repromatrix/scaffold/{source}" for source in FILES} | {
        f"repromatrix/scaffold/{LOCK}",  # the hashed lock init ships beside a wheel
        "repromatrix/scaffold/gitignore",
        "repromatrix/reports/assets/report.js",
        "repromatrix/execution/_cell/repromatrix_cell_plugin.py",
    }
    assert shipped <= names
    # The workflows' and their install action's one source is .github/, packed as the
    # scaffold's (built from the sdist, as uv build does): byte for byte this repository's.
    wheel_files = zipfile.ZipFile(wheel)
    for source, target in [*FILES.items(), (LOCK, f".github/{LOCK}")]:
        if source.startswith(("workflows/", "actions/", "repromatrix/")):
            packed = wheel_files.read(f"repromatrix/scaffold/{source}").decode()
            assert packed == (repo_root / target).read_text(), source
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n]
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[-1] for m in archive.getmembers()}
    assert {"pyproject.toml", "README.md", "src/repromatrix/__init__.py"} <= members
    assert not [m for m in members if m.startswith((".nox/", ".venv/", ".import_linter_cache"))]
