"""Time travel: the rest of the stack resolved as it stood on one day.

``as_of`` is a date (``2024-11-22``, or an RFC 3339 time) or a package name, which
means the upload time of that package's pinned release (``--as-of transformers``
with ``transformers==4.46.3``: the day 4.46.3 reached the index).

What travels: the packages of the *stack* (the matrix's ``packages:`` list plus the
ones pinned) that are not pinned exactly, ``latest`` and ranges included. Each gets
uv's ``--exclude-newer-package PKG=CUTOFF``. Exact pins, and everything outside the
stack (the requirements of a pinned newer package: torch 2.13.0 needs a setuptools
of 2025), resolve as today: a global ``--exclude-newer`` would make torch 2.13.0
unresolvable on any date before it.

The upload time comes from the PEP 691 JSON page of the first index that has the
release (``upload-time`` of its earliest file). Find-links folders, wheelhouses and
PEP 503 HTML pages carry none: then nothing travels and the reason is said in one
line (``TimeTravel.note``), so a report never claims a stack of a day it did not get.
"""

from __future__ import annotations

import functools
import json
import os
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.simple_index import (
    fetch,
    local_path,
    sources,
    ssl_context,
    version_of,
)
from repromatrix.errors import UserError
from repromatrix.matrix.pins import Pin, PinKind

NONE = "none"  # --as-of none: today's stack
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def parse_as_of(text: str | None, where: str = "--as-of") -> str | None:
    """A checked ``as_of`` value: None (``none`` or absent), an ISO date / RFC 3339
    time, or a canonical package name. UserError naming ``where`` otherwise."""
    if text is None or text.strip().lower() in ("", NONE):
        return None
    text = text.strip()
    if text[:1].isdigit():
        if is_date(text):
            return text
        raise UserError(f"{where} {text!r}: not a date (2024-11-22) nor a package name")
    if not _NAME.match(text):
        raise UserError(f"{where} {text!r}: not a date (2024-11-22) nor a package name")
    return canonicalize_name(text)


def is_date(text: str) -> bool:
    try:
        (datetime if "T" in text else date).fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class TimeTravel:
    """``as_of`` made concrete for one pin set."""

    as_of: str  # as asked: a date or a package name
    cutoff: str | None  # what uv gets; None: no date could be found (see note)
    packages: tuple[str, ...]  # the stack packages that resolve as of the cutoff
    source: str = ""  # "transformers 4.46.3 uploaded to index https://pypi.org/simple/"
    note: str = ""  # why nothing travels, in one line

    def exclusions(self) -> tuple[tuple[str, str], ...]:
        if self.cutoff is None:
            return ()
        return tuple((package, self.cutoff) for package in self.packages)

    def describe(self) -> dict[str, object]:
        """For reports: what was asked, the date used, what travelled."""
        out: dict[str, object] = {"as_of": self.as_of, "date": self.cutoff}
        if self.source:
            out["from"] = self.source
        out["packages"] = list(self.packages) if self.cutoff else []
        if self.note:
            out["note"] = self.note
        return out

    def line(self) -> str:
        if self.cutoff is None:
            return self.note
        what = ", ".join(self.packages) or "nothing else"
        return f"as of {self.cutoff} ({self.source or 'given'}): {what}"


def time_travel(
    as_of: str, pins: Iterable[Pin], stack: Iterable[str], index: IndexSettings
) -> TimeTravel:
    """The cutoff and the packages it applies to. UserError when ``as_of`` names a
    package without an exact pin (its release, hence its date, is unknown)."""
    pins = list(pins)
    pinned = {p.package: p for p in pins}
    fixed = {p.package for p in pins if p.kind not in (PinKind.LATEST, PinKind.RANGE)}
    names = dict.fromkeys(canonicalize_name(s) for s in [*stack, *pinned])
    travelling = tuple(n for n in names if n not in fixed)
    if is_date(as_of):
        return TimeTravel(as_of, as_of, travelling, "given")
    package, version = dated_release(as_of, pins)
    uploaded, where, why = upload_time(package, version, index)
    if uploaded is None:
        note = f"as of {package}: no upload date for {package} {version} ({why}); today's stack"
        return TimeTravel(package, None, (), note=note)
    return TimeTravel(package, uploaded, travelling, f"{package} {version} uploaded to {where}")


def dated_release(as_of: str, pins: Iterable[Pin]) -> tuple[str, Version]:
    """The release whose upload date ``as_of`` (a package name) stands for: the exact
    pin of that package. UserError when there is none (its date would be unknown)."""
    package = canonicalize_name(as_of)
    pin = next((p for p in pins if p.package == package), None)
    if pin is None or pin.kind is not PinKind.EXACT:
        raise UserError(
            f"--as-of {as_of}: {package} has no exact pin, so its release date is unknown "
            f"(pin it: {package}==VERSION, or give a date)"
        )
    try:
        return package, Version(pin.spec)
    except InvalidVersion:
        raise UserError(f"--as-of {as_of}: {pin.spec!r} is not a version") from None


def upload_time(
    package: str, version: Version, index: IndexSettings
) -> tuple[str | None, str, str]:
    """(the upload time of the release's first file, the source, why none)."""
    name = canonicalize_name(package)
    looked: list[str] = []
    for source in sources(index):
        if source.kind != "index":
            looked.append(f"{source} has no upload dates")
            continue
        try:
            files = _project_files(source.location, name)
        except UserError as err:
            looked.append(str(err))
            continue
        if files is None:
            looked.append(f"{source} is not a PEP 691 JSON index")
            continue
        times = [t for filename, t in files if version_of(filename, name) == version]
        stamps = sorted(t for t in times if t)
        if stamps:
            return stamps[0], str(source), ""
        if times:
            looked.append(f"{source} gives no upload-time for it")
    return None, "", "; ".join(looked) or "no index"


@functools.lru_cache(maxsize=256)
def _project_files(index_url: str, name: str) -> tuple[tuple[str, str | None], ...] | None:
    """(filename, upload-time) of one project page; None when the page is not
    PEP 691 JSON (no upload times there). Read once per process."""
    base = index_url if index_url.endswith("/") else index_url + "/"
    page = urllib.parse.urljoin(base, f"{name}/")
    if page.startswith("file:"):
        candidate = local_path(page) / "index.json"
        if not candidate.is_file():
            return None
        body: str | None = candidate.read_text(encoding="utf-8")
        content_type = "json"
    else:
        body, content_type = fetch(page, ssl_context(os.environ), missing_ok=True)
    if body is None:
        return ()
    if "json" not in content_type:
        return None
    try:
        files = json.loads(body)["files"]
        return tuple((f["filename"], f.get("upload-time")) for f in files)
    except (json.JSONDecodeError, KeyError, TypeError):
        return None
