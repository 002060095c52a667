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

import base64
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

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.redact import redact_text

PYPI_SIMPLE = "https://pypi.org/simple/"
# PEP 691 content negotiation: JSON preferred, HTML accepted from older servers.
ACCEPT = (
    "application/vnd.pypi.simple.v1+json, "
    "application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
)
FETCH_TIMEOUT = 60.0


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


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Source:
    kind: str  # index | find-links
    location: str

    def __str__(self) -> str:
        return f"{self.kind} {redact_text(self.location)}"


def sources(index: IndexSettings) -> list[Source]:
    """Where uv will look, in its order: the default index (unless --no-index),
    extra indexes, then find-links; UV_* variables count as uv reads them."""
    uv = dict(index.uv_variables)
    no_index = index.no_index or _truthy(uv.get("UV_NO_INDEX", ""))
    found: list[Source] = []
    if not no_index:
        default = uv.get("UV_DEFAULT_INDEX") or uv.get("UV_INDEX_URL") or index.index_url
        found.append(Source("index", default or PYPI_SIMPLE))
        extra = [*index.extra_index_urls, *uv.get("UV_EXTRA_INDEX_URL", "").split()]
        # UV_INDEX holds `name=url` or `url` entries, separated by spaces.
        extra += [entry.split("=", 1)[-1] for entry in uv.get("UV_INDEX", "").split()]
        found += [Source("index", url) for url in extra]
    links = [*index.find_links, *uv.get("UV_FIND_LINKS", "").replace(",", " ").split()]
    found += [Source("find-links", link) for link in links]
    return list(dict.fromkeys(found))


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
    context = _ssl_context(os.environ if environ is None else environ)
    for source in sources(index):
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


def version_of(filename: str, name: str) -> Version | None:
    """The version of a distribution file of package ``name`` (None: another
    package's file, or not a distribution)."""
    try:
        if filename.endswith(".whl"):
            dist, version, _build, _tags = parse_wheel_filename(filename)
        elif filename.endswith((".tar.gz", ".zip")):
            dist, version = parse_sdist_filename(filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if canonicalize_name(dist) == name else None


# --------------------------------------------------------------------------- reading


FileEntry = tuple[str, bool]  # (filename, yanked)


def _index_files(index_url: str, name: str, context: ssl.SSLContext) -> list[FileEntry]:
    """The files of one project page of a simple index (PEP 503 / 691)."""
    base = index_url if index_url.endswith("/") else index_url + "/"
    page = urllib.parse.urljoin(base, f"{name}/")
    if page.startswith("file:"):
        folder = _local_path(page)
        for candidate in (folder / "index.json", folder / "index.html"):
            if candidate.is_file():
                text = candidate.read_text(encoding="utf-8")
                if candidate.suffix == ".json":
                    return _json_files(text, page)
                return _html_files(text)
        if not _local_path(base).is_dir():
            raise UserError(f"index {redact_text(index_url)}: no such folder")
        return []  # the index does not have this project
    body, content_type = _fetch(page, context, missing_ok=True)
    if body is None:
        return []
    if "json" in content_type:
        return _json_files(body, page)
    return _html_files(body)


def _find_links_files(location: str, context: ssl.SSLContext) -> list[FileEntry]:
    if location.startswith(("http://", "https://")):
        body, _ = _fetch(location, context, missing_ok=False)
        return _html_files(body or "")
    folder = _local_path(location)
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


def _fetch(url: str, context: ssl.SSLContext, *, missing_ok: bool) -> tuple[str | None, str]:
    """GET ``url``; credentials in it are sent as HTTP basic auth, never shown."""
    parts = urllib.parse.urlsplit(url)
    headers = {"Accept": ACCEPT, "User-Agent": "repromatrix-bisect"}
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT, context=context) as response:
            charset = response.headers.get_content_charset() or "utf-8"
            return response.read().decode(charset), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        if missing_ok and err.code == 404:
            return None, ""
        raise UserError(f"cannot read {redact_text(url)}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise UserError(f"cannot read {redact_text(url)}: {redact_text(str(reason))}") from None


def _local_path(location: str) -> Path:
    if location.startswith("file:"):
        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(location).path))
    return Path(location).expanduser()


def _ssl_context(environ: Mapping[str, str]) -> ssl.SSLContext:
    # pip's own CA setting wins, as it does for pip (uv reads SSL_CERT_FILE itself).
    cafile = environ.get("PIP_CERT")
    if cafile and Path(cafile).is_file():
        return ssl.create_default_context(cafile=cafile)
    return ssl.create_default_context()


def _truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "yes", "on")
