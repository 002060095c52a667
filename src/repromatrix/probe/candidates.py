"""The released versions of one package, as the user's indexes list them.

Bisect candidates come from where the installs come from: the index the user's
pip/uv configuration points at (PIP_INDEX_URL, extra indexes, find-links; UV_*
variables where set), or only a wheelhouse folder. Each source is read once:

- an index, through the simple repository API: PEP 691 JSON when the server
  offers it, PEP 503 HTML otherwise (``file://`` indexes included);
- a find-links location: a local folder of distributions, or an HTML page of links.

Versions are the union over the sources, ordered by PEP 440. A version is yanked
(PEP 592) when every file of it is: yanked versions are not candidates, nor are
pre-releases unless asked for; the two ends a user names are always kept.
"""

from __future__ import annotations

import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from packaging.version import InvalidVersion, Version

from repromatrix.environment import IndexSettings
from repromatrix.environment.simple_index import (
    fetch,
    local_path,
    sources,
    ssl_context,
    version_of,
)
from repromatrix.errors import UserError
from repromatrix.matrix.cell import CellSpec
from repromatrix.names import canonicalize_name
from repromatrix.redact import redact_text


def version_option(option: str, text: str) -> Version:
    """An end of a searched range (``--good 4.46.3``, ``--from 0.13``) as a Version;
    UserError naming the option otherwise."""
    try:
        return Version(text)
    except InvalidVersion:
        raise UserError(f"{option} {text!r}: not a version (PEP 440)") from None


def searched_index(
    wheelhouse: Path | None, given: IndexSettings | None, cell: CellSpec
) -> IndexSettings:
    """Where a bisect or a sweep lists and installs its candidates: ``--wheelhouse``
    alone, else the indexes given, else the cell's own over the user's PIP_* / UV_*
    settings."""
    if wheelhouse is not None:
        return IndexSettings.wheelhouse(wheelhouse)
    return given or IndexSettings.from_environment().for_cell(cell)


@dataclass
class Release:
    version: Version
    files: int = 0
    yanked_files: int = 0
    sources: list[str] = field(default_factory=list)  # where it was listed (redacted)

    @property
    def yanked(self) -> bool:
        return self.files > 0 and self.yanked_files == self.files


@dataclass
class Listing:
    """Every version the sources list for one package."""

    package: str
    releases: dict[Version, Release]
    sources: list[str]  # each source read, credentials masked

    def versions(self) -> list[Version]:
        return sorted(self.releases)

    def find(self, version: Version) -> Release | None:
        return self.releases.get(version)

    def between(self, one: Version, other: Version, *, pre: bool = False) -> list[Version]:
        """Every candidate from one end to the other, inclusive, in PEP 440 order:
        no yanked release and no pre-release (unless ``pre``), but the two ends
        themselves always (the user named them)."""
        low, high = sorted((one, other))
        return [
            v
            for v in self.versions()
            if low <= v <= high
            and (v in (low, high) or (not self.releases[v].yanked and (pre or not v.is_prerelease)))
        ]

    def yanked_line(self, one: Version, other: Version) -> str | None:
        """One line naming the yanked releases ``between`` leaves out (None: none)."""
        low, high = sorted((one, other))
        left = [str(v) for v in self.versions() if low < v < high and self.releases[v].yanked]
        if not left:
            return None
        return f"skipping yanked {self.package} {', '.join(left)} (PEP 592: not a candidate)"


# --------------------------------------------------------------------------- sources


def list_releases(
    package: str,
    index: IndexSettings,
    *,
    environ: Mapping[str, str] | None = None,
) -> Listing:
    """Every version of ``package`` the configured sources list (UserError when a
    source cannot be read at all, or none of them knows the package)."""
    name = canonicalize_name(package)
    releases: dict[Version, Release] = {}
    read: list[str] = []
    context = ssl_context(os.environ if environ is None else environ)
    for source in sources(index, name):
        files = (
            _index_files(source.location, name, context)
            if source.kind == "index"
            else _find_links_files(source.location, context)
        )
        read.append(str(source))
        for filename, yanked in files:
            version = version_of(filename, name)
            if version is None:
                continue
            release = releases.setdefault(version, Release(version))
            release.files += 1
            release.yanked_files += bool(yanked)
            if str(source) not in release.sources:
                release.sources.append(str(source))
    if not releases:
        raise UserError(
            f"unknown package {package!r}: no release of it in {'; '.join(read) or 'no index'}"
        )
    return Listing(package=name, releases=releases, sources=read)


# --------------------------------------------------------------------------- reading


FileEntry = tuple[str, bool]  # (filename, yanked)


def _index_files(index_url: str, name: str, context: ssl.SSLContext) -> list[FileEntry]:
    """The files of one project page of a simple index (PEP 503 / 691)."""
    base = index_url if index_url.endswith("/") else index_url + "/"
    page = urllib.parse.urljoin(base, f"{name}/")
    if page.startswith("file:"):
        folder = local_path(page)
        for candidate in (folder / "index.json", folder / "index.html"):
            if candidate.is_file():
                text = candidate.read_text(encoding="utf-8")
                if candidate.suffix == ".json":
                    return _json_files(text, page)
                return _html_files(text)
        if not local_path(base).is_dir():
            raise UserError(f"index {redact_text(index_url)}: no such folder")
        return []  # the index does not have this project
    body, content_type = fetch(page, context, missing_ok=True)
    if body is None:
        return []
    if "json" in content_type:
        return _json_files(body, page)
    return _html_files(body)


def _find_links_files(location: str, context: ssl.SSLContext) -> list[FileEntry]:
    if location.startswith(("http://", "https://")):
        body, _ = fetch(location, context, missing_ok=False)
        return _html_files(body or "")
    folder = local_path(location)
    if folder.is_file() and folder.suffix in (".html", ".htm"):
        return _html_files(folder.read_text(encoding="utf-8"))
    if not folder.is_dir():
        raise UserError(f"find-links {redact_text(location)}: no such folder")
    return [(entry.name, False) for entry in sorted(folder.iterdir()) if entry.is_file()]


def _json_files(text: str, where: str) -> list[FileEntry]:
    try:
        document = json.loads(text)
        return [(f["filename"], bool(f.get("yanked", False))) for f in document["files"]]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise UserError(
            f"index page {redact_text(where)}: not a PEP 691 JSON project page ({err})"
        ) from None


class _Anchors(HTMLParser):
    """The anchors of a PEP 503 page: (file name, yanked)."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[FileEntry] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "a":
            return
        attributes = dict(attrs)
        href = attributes.get("href") or ""
        path = urllib.parse.urlsplit(href).path  # without #sha256=... fragments
        filename = urllib.parse.unquote(path.rstrip("/").rsplit("/", 1)[-1])
        if filename:
            # PEP 592: the attribute's presence marks the file yanked, whatever its value.
            self.files.append((filename, "data-yanked" in attributes))


def _html_files(text: str) -> list[FileEntry]:
    parser = _Anchors()
    parser.feed(text)
    return parser.files
