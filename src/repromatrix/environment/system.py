"""``system`` pins: a package taken from the base interpreter (a GPU image's CUDA torch)
instead of installed. Its installed closure is found here; the resolver sees it
through a metadata-only stub wheel, so local versions (2.11.0+cu128) resolve."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from repromatrix import procs
from repromatrix.environment.uv import InstallError, Interpreter
from repromatrix.matrix import Pin, PinKind
from repromatrix.names import canonicalize_name
from repromatrix.redact import redact_text

# Runs inside the base interpreter (stdlib only: it may have nothing else).
INSPECT_SYSTEM = r"""
import json, re, sys
import importlib.metadata as md
def canon(n): return re.sub(r"[-_.]+", "-", n).lower()
wanted = json.loads(sys.argv[1])
found, queue, missing = {}, list(wanted), []
while queue:
    name = queue.pop()
    if name in found:
        continue
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        if name in wanted:
            missing.append(name)
        continue
    site = str(dist.locate_file(""))
    tops = set()
    for f in dist.files or ():
        first = f.parts[0] if f.parts else ""
        if first and first not in ("..", "__pycache__") and not first.endswith(".pth"):
            tops.add(first)
    found[name] = {"name": dist.metadata["Name"], "version": dist.version, "site": site,
                   "tops": sorted(tops)}
    for req in dist.requires or ():
        if re.search(r"extra\s*==", req):
            continue
        queue.append(canon(re.match(r"[A-Za-z0-9._-]+", req).group(0)))
print(json.dumps({"found": found, "missing": missing}))
"""


def inspect_system(pins: Iterable[Pin], interpreter: Interpreter) -> dict:
    """Each ``system`` pin's distribution in the base interpreter, with its installed
    closure (what the cell links in after its own site-packages)."""
    wanted = [p.package for p in pins if p.kind is PinKind.SYSTEM]
    if not wanted:
        return {}
    done = procs.run(
        [interpreter.executable, "-c", INSPECT_SYSTEM, json.dumps(wanted)], timeout=120
    )
    if done.returncode != 0:
        raise InstallError(
            "python", "cannot inspect the base interpreter's packages", redact_text(done.stderr)
        )
    report = json.loads(done.stdout)
    if report["missing"]:
        raise InstallError(
            "resolve",
            f"'system' pin: {', '.join(report['missing'])} is not installed in the base "
            f"interpreter (Python {interpreter.version})",
        )
    return report["found"]


def write_stub_wheel(folder: Path, name: str, version: str) -> None:
    dist = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    if path.exists():
        return
    info = f"{dist}.dist-info"
    files = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: repromatrix\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
    # Here, not at the top: only a `system` pin writes a stub; a command that builds
    # no cell (check on a reused one) does not load zipfile at start-up.
    import tempfile
    import zipfile

    # A name of its own: two combinations (--jobs N) may write the same stub at once.
    fd, name = tempfile.mkstemp(dir=folder, prefix=f".{dist}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    with zipfile.ZipFile(tmp, "w") as wheel:
        for entry, text in {**files, f"{info}/RECORD": record}.items():
            wheel.writestr(entry, text)
    tmp.replace(path)
