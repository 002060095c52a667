"""Reading the indexes uv reads: where they are (the user's settings, in uv's order)
and one project page of a simple repository (PEP 503 HTML / PEP 691 JSON).

bisect lists candidate releases through it; the time-travel of ``as_of`` reads the
upload time of one release through it (PEP 691 JSON ``upload-time``, which PEP 503
pages, find-links folders and wheelhouses do not have).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from repromatrix.environment.indexes import IndexSettings
from repromatrix.errors import UserError
from repromatrix.redact import redact_text

if TYPE_CHECKING:
    import ssl

PYPI_SIMPLE = "https://pypi.org/simple/"
# PEP 691 content negotiation: JSON preferred, HTML accepted from older servers.
ACCEPT = (
    "application/vnd.pypi.simple.v1+json, "
    "application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
)
FETCH_TIMEOUT = 60.0


@dataclass(frozen=True)
class Source:
    kind: str  # index | find-links
    location: str

    def __str__(self) -> str:
        return f"{self.kind} {redact_text(self.location)}"


def sources(index: IndexSettings, package: str | None = None) -> list[Source]:
    """Where uv will look, in its order: the default index (unless --no-index),
    extra indexes, then find-links; UV_* variables count as uv reads them. For a
    ``package`` with an index of its own (package_indexes), that index alone."""
    own = index.index_of(canonicalize_name(package)) if package else None
    if own is not None:
        return [Source("index", own)]
    uv = dict(index.uv_variables)
    no_index = index.no_index or truthy(uv.get("UV_NO_INDEX", ""))
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


def fetch(url: str, context: ssl.SSLContext, *, missing_ok: bool) -> tuple[str | None, str]:
    """GET ``url``; credentials in it are sent as HTTP basic auth, never shown."""
    # Here, not at the top: urllib.request and ssl cost a command that reads no index
    # (check, run) tens of milliseconds of start-up.
    import base64
    import urllib.error
    import urllib.request

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


def local_path(location: str) -> Path:
    if location.startswith("file:"):
        import urllib.request

        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(location).path))
    return Path(location).expanduser()


def ssl_context(environ: Mapping[str, str]) -> ssl.SSLContext:
    import ssl

    # pip's own CA setting wins, as it does for pip (uv reads SSL_CERT_FILE itself).
    cafile = environ.get("PIP_CERT")
    if cafile and Path(cafile).is_file():
        return ssl.create_default_context(cafile=cafile)
    return ssl.create_default_context()


def truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "yes", "on")


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
