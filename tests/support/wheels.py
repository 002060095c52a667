"""Tiny installable pure-Python wheels for tests that must install a package offline
(no torch: seconds): METADATA, WHEEL and a RECORD with each file's sha256; and the
pyproject.toml of a tiny project built from its folder (hatchling)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def pure_wheel(
    folder: Path, name: str, version: str, modules: dict[str, str], requires: tuple[str, ...] = ()
) -> Path:
    """A ``py3-none-any`` wheel of ``name`` holding ``modules`` (path -> source)."""
    dist = f"{name.replace('-', '_')}-{version}"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        **modules,
        f"{dist}.dist-info/METADATA": metadata,
        f"{dist}.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    out = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return out


def version_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A wheel of ``name`` whose module holds ``VERSION`` (the atlas's fake axes)."""
    module = name.replace("-", "_")
    return pure_wheel(
        folder, name, version, {f"{module}/__init__.py": f"VERSION = {version!r}\n"}, requires
    )


# A project of one's own, built from its folder (a folder pin, a git repository).
PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "{version}"
"""


def project_toml(name: str = "tinylib", version: str = "0.1.0") -> str:
    return PYPROJECT.format(name=name, version=version)
