"""Where this repromatrix was installed from, as the pip requirement a CI job installs
it with (``repromatrix init`` writes it into the workflows as their default).

PEP 610: an installer records a distribution installed from a URL in its
``direct_url.json``: a VCS URL and the commit it checked out, an archive's URL, or a
local folder. Installed from an index, there is none, and the release is named
(``repromatrix==0.1.0``). A folder or file of this machine is no use to a CI runner,
and its path is never written: the requirement is then None, and init ships a wheel
of this repromatrix into the repository instead (install_wheel.py). Credentials in a
URL are dropped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from repromatrix.redact import URL_CREDENTIALS

DISTRIBUTION = "repromatrix"
# A URL's characters (RFC 3986) without ' and $: the requirement is written inside a
# workflow expression's quoted string and a YAML scalar.
_URL_CHARACTERS = re.compile(r"^[A-Za-z0-9._~:/?#\[\]@!&()*+,;=%-]+$")


@dataclass(frozen=True)
class InstallSource:
    # What the workflows pip install unless told otherwise; None: nothing CI can reach,
    # so a wheel of this repromatrix is shipped in the repository (``local`` says why).
    requirement: str | None
    local: str | None = None


def installed_source(distribution: str = DISTRIBUTION) -> InstallSource:
    """The source of the installed ``repromatrix`` distribution."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return _local("repromatrix runs from a source tree, not an installed package")
    text = dist.read_text("direct_url.json")
    if text is None:  # from an index
        return InstallSource(f"{DISTRIBUTION}=={dist.version}")
    try:
        recorded = json.loads(text)
    except ValueError:
        recorded = None
    return from_direct_url(recorded)


def from_direct_url(recorded: Any) -> InstallSource:
    """The requirement for a PEP 610 record (``direct_url.json``'s content)."""
    url = recorded.get("url") if isinstance(recorded, dict) else None
    if not isinstance(url, str) or "://" not in url:
        return _local("its direct_url.json names no URL")
    if url.startswith("file:"):
        return _local("this repromatrix was installed from a folder or file of this machine")
    url = _without_credentials(url)
    vcs = recorded.get("vcs_info")
    if isinstance(vcs, dict):
        kind, commit = vcs.get("vcs"), vcs.get("commit_id")
        if not (isinstance(kind, str) and isinstance(commit, str)):
            return _local("its direct_url.json names no VCS or commit")
        url = f"{kind}+{url}@{commit}"
    subdirectory = recorded.get("subdirectory")
    if isinstance(subdirectory, str) and subdirectory:
        url += f"#subdirectory={subdirectory}"
    if not _URL_CHARACTERS.match(url):
        return _local("its URL holds characters a workflow cannot quote")
    return InstallSource(f"{DISTRIBUTION} @ {url}")


def _without_credentials(url: str) -> str:
    # PEP 610 keeps ssh's conventional `git@` user: it is not a secret, and the URL
    # does not work without it.
    if url.startswith("ssh://git@"):
        return url
    return URL_CREDENTIALS.sub("://", url, count=1)


def _local(why: str) -> InstallSource:
    return InstallSource(None, why)
