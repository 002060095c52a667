"""This repromatrix as a wheel, with its sha256 and the hashed lock of its dependencies:
the folder ``repromatrix init`` ships into a repository (``.github/repromatrix/``) when
CI cannot install repromatrix from where it came (a folder or file of this machine;
install_source.py). The install action (.github/actions/install-repromatrix) installs
the lock with ``--require-hashes``, checks the wheel against SHA256SUMS and installs it
with ``--no-deps``: nothing resolved when the job runs.

The wheel is what runs here: a non-editable install is repacked from its installed
files (its RECORD), whatever became of the folder or file it came from; an editable
install or a source tree (src/ on the path) is built from its folder with ``uv
build``. The lock comes with the package (this repository's
.github/repromatrix/requirements.txt, packed into the wheel: ``nox -s lock`` refreshes
it), so init resolves nothing and needs no network for it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import zipfile
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.install_source import DISTRIBUTION

FOLDER = ".github/repromatrix"  # in the repository init writes into
LOCK = "requirements.txt"
SUMS = "SHA256SUMS"  # `sha256sum -c` reads it
# What an installer adds to a wheel's .dist-info, which a wheel does not hold.
_INSTALLER_FILES = frozenset({"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"})
# A zip entry's time in the repacked wheel: the same bytes from the same install.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def shipped_files(wheel: Path | None, lock: str) -> dict[str, bytes]:
    """The files of FOLDER: the lock, and the wheel with its SHA256SUMS line."""
    files = {LOCK: lock.encode()}
    if wheel is not None:
        data = wheel.read_bytes()
        files[wheel.name] = data
        files[SUMS] = f"{hashlib.sha256(data).hexdigest()}  {wheel.name}\n".encode()
    return files


def this_wheel(out: Path) -> Path:
    """A wheel of the installed repromatrix, written into ``out``."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    folder = _editable_folder(dist) if dist is not None else _source_tree()
    if folder is not None:
        return _build(folder, out)
    assert dist is not None
    return repack(dist, out)


def repack(dist: metadata.Distribution, out: Path) -> Path:
    """The wheel an installed distribution came from, made again from its files: its
    modules and .dist-info as RECORD lists them, without what the installer added
    (scripts, byte code, INSTALLER, direct_url.json...) and with a new RECORD."""
    name, version = dist.metadata["Name"], dist.version
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    if not dist.files:
        raise UserError(
            f"{name} {version}: its installation lists no files (no RECORD), so init cannot "
            "ship a wheel of it: reinstall it, or set the REPROMATRIX_SOURCE repository variable"
        )
    entries: dict[str, bytes] = {}
    for path in dist.files:
        text = path.as_posix()
        parts = text.split("/")
        if text.startswith("..") or "__pycache__" in parts or text.endswith(".pyc"):
            continue
        if parts[0] == info and (parts[-1] in _INSTALLER_FILES or _by_uv(parts)):
            continue
        entries[text] = Path(str(dist.locate_file(path))).read_bytes()
    record = [
        f"{path},sha256={_urlsafe_sha256(data)},{len(data)}" for path, data in entries.items()
    ]
    entries[f"{info}/RECORD"] = "".join(
        f"{line}\n" for line in [*sorted(record), f"{info}/RECORD,,"]
    ).encode()
    wheel = out / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    out.mkdir(parents=True, exist_ok=True)
    # The .dist-info last, as the wheel format recommends.
    order = sorted(entries, key=lambda path: (path.startswith(f"{info}/"), path))
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in order:
            entry = zipfile.ZipInfo(path, date_time=_EPOCH)
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, entries[path], zipfile.ZIP_DEFLATED)
    return wheel


def _by_uv(parts: list[str]) -> bool:
    # uv_cache.json, uv_build.json: uv's own notes beside an install.
    return len(parts) == 2 and parts[1].startswith("uv_") and parts[1].endswith(".json")


def _urlsafe_sha256(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _editable_folder(dist: metadata.Distribution) -> Path | None:
    """The folder an editable install runs from (PEP 610: dir_info.editable)."""
    try:
        recorded = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        return None
    if not isinstance(recorded, dict):
        return None
    editable = (recorded.get("dir_info") or {}).get("editable") is True
    url = recorded.get("url")
    if not (editable and isinstance(url, str) and url.startswith("file:")):
        return None
    return Path(unquote(urlsplit(url).path))


def _source_tree() -> Path | None:
    """The project folder of a source tree this package runs from (src/ on the path)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


def _build(folder: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    done = procs.run([_uv(), "build", "--wheel", "--quiet", "--out-dir", str(out), str(folder)],
                     timeout=600)  # fmt: skip
    wheels = sorted(out.glob(f"{DISTRIBUTION}-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
        raise UserError(f"uv build of this repromatrix's folder failed, so init cannot ship a "
                        f"wheel of it: {last}")  # fmt: skip
    return wheels[0]


def _uv() -> str:
    try:
        from uv import find_uv_bin  # the `uv` wheel, a dependency, ships the binary

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise UserError(
                "uv is not installed: pip install uv (init builds the wheel with it)"
            ) from None
        return found
