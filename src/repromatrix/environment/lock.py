"""A cell's lock (``lock.txt``: one ``name==version`` line per distribution, sorted):
read from what a new venv holds, and read back as versions."""

from __future__ import annotations

import re
from pathlib import Path

from repromatrix.names import canonicalize_name

LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*$")


def lock_versions(lock: str) -> dict[str, str] | None:
    """name -> version of a lock of exact pins only (None when a line is not one)."""
    found: dict[str, str] = {}
    for line in lock.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "-")):  # comments, --find-links lines
            continue
        match = LOCK_LINE.match(line)
        if match is None:
            return None
        found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def lock_of_venv(venv: Path) -> str | None:
    """What ``uv pip freeze`` prints for a venv of index releases, sorted, read from
    its ``*.dist-info`` folders (``{name}-{version}.dist-info``) without starting uv
    again: a new cell's last step of 20-40 ms. None when a distribution came from a
    URL (PEP 610 ``direct_url.json``): its line (``name @ url``) names the commit,
    and the cell's identity must too."""
    lines = []
    for info in venv.glob("lib/*/site-packages/*.dist-info"):
        if (info / "direct_url.json").exists():
            return None
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        lines.append(f"{canonicalize_name(name)}=={version}\n")
    return "".join(sorted(lines))


def packages_of_lock(lock: str) -> dict | None:
    listed = lock_versions(lock)
    return None if listed is None else {name: [v, "env"] for name, v in listed.items()}
