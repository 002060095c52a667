"""Time travel: the rest of the stack resolved as it stood on one day.

``as_of`` is a date (``2024-11-22``, or an RFC 3339 time) or a package name, which
means the upload time of that package's pinned release (``--as-of transformers``
with ``transformers==4.46.3``: the day 4.46.3 reached the index).

What travels: the packages of the *stack* (the default ML stack, the matrix's
``packages:`` list and the ones pinned) that are not pinned exactly, ``latest`` and
ranges included. A project's ``packages:`` adds to the default stack and never
narrows it: a list of report columns (torch, transformers, peft) would otherwise
give an old transformers today's tokenizers and huggingface-hub inside that project
and the stack of its day outside it, two answers to one command. Each gets
uv's ``--exclude-newer-package PKG=CUTOFF``. Exact pins, and what a pinned release
newer than the cutoff needs (its dependency closure: transformers 4.56.2 needs a
huggingface-hub of 2025-07 or later), resolve as today (``keep_what_newer_pins_need``):
a global ``--exclude-newer`` would make torch 2.13.0 unresolvable on any date before it.

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
from dataclasses import dataclass, replace
from datetime import date, datetime, timezone

from packaging.version import InvalidVersion, Version

from repromatrix import procs
from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.simple_index import (
    fetch,
    local_path,
    sources,
    ssl_context,
    version_of,
)
from repromatrix.errors import UserError
from repromatrix.matrix.defaults import DEFAULT_PACKAGES
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.names import canonicalize_name

NONE = "none"  # --as-of none: today's stack
CLOSURE_TIMEOUT = 300.0  # seconds for the compile that finds what newer exact pins need
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def parse_as_of(text: str | None, where: str = "--as-of") -> str | None:
    """A checked ``as_of`` value: None (``none`` or absent), an ISO date / RFC 3339
    time, or a canonical package name. UserError naming ``where`` otherwise."""
    if text is None or text.strip().lower() in ("", NONE):
        return None
    text = text.strip()
    if text[:1].isdigit():
        if not is_date(text):
            raise UserError(f"{where} {text!r}: not a date (2024-11-22) nor a package name")
        today = datetime.now(timezone.utc)
        if moment(text) > today:
            # The stack of a day to come is today's: a typo, never what was meant.
            raise UserError(
                f"{where} {text}: a date in the future (today is {today.date()}); "
                "give a past date, a package or none"
            )
        return text
    if not _NAME.match(text):
        raise UserError(f"{where} {text!r}: not a date (2024-11-22) nor a package name")
    return canonicalize_name(text)


def is_date(text: str) -> bool:
    try:
        (datetime if "T" in text else date).fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def moment(text: str) -> datetime:
    """A date (its first instant, UTC) or an RFC 3339 time, comparable with others."""
    if "T" not in text:
        return datetime.combine(date.fromisoformat(text), datetime.min.time(), timezone.utc)
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class TimeTravel:
    """``as_of`` made concrete for one pin set."""

    as_of: str  # as asked: a date or a package name
    cutoff: str | None  # what uv gets; None: no date could be found (see note)
    packages: tuple[str, ...]  # the stack packages that resolve as of the cutoff
    source: str = ""  # "transformers 4.46.3 uploaded to index https://pypi.org/simple/"
    note: str = ""  # why nothing travels, in one line
    # Stack packages kept at today's because an exact pin newer than the cutoff needs
    # them, and those pins ("transformers 4.56.2").
    kept: tuple[str, ...] = ()
    kept_for: tuple[str, ...] = ()

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
        if self.kept:
            out["today"] = list(self.kept)
            out["needed_by"] = list(self.kept_for)
        if self.note:
            out["note"] = self.note
        return out

    def line(self) -> str:
        if self.cutoff is None:
            return self.note
        what = ", ".join(self.packages) or "nothing else"
        line = f"as of {self.cutoff} ({self.source or 'given'}): {what}"
        if self.kept:
            line += (
                f"; today's {', '.join(self.kept)} "
                f"(needed by {', '.join(self.kept_for)}, released after)"
            )
        return line

    def capped_in(self, message: str) -> tuple[str, ...]:
        """The travelling packages a resolver's refusal names: the caps that did it
        ("only huggingface-hub<=0.30.2 is available and transformers==4.56.2 depends
        on huggingface-hub>=0.34.0" names huggingface-hub)."""
        if self.cutoff is None:
            return ()
        return tuple(
            package
            for package in self.packages
            if re.search(rf"(?<![A-Za-z0-9._-]){_spelled(package)}(?![A-Za-z0-9_-])", message, re.I)
        )


def _spelled(package: str) -> str:
    """A canonical name as a pattern for any spelling of it (huggingface_hub)."""
    return "[-_.]+".join(re.escape(part) for part in package.split("-"))


def time_travel(
    as_of: str, pins: Iterable[Pin], stack: Iterable[str], index: IndexSettings
) -> TimeTravel:
    """The cutoff and the packages it applies to. UserError when ``as_of`` names a
    package without an exact pin (its release, hence its date, is unknown)."""
    pins = list(pins)
    pinned = {p.package: p for p in pins}
    fixed = {p.package for p in pins if p.kind not in (PinKind.LATEST, PinKind.RANGE)}
    names = dict.fromkeys(canonicalize_name(s) for s in [*DEFAULT_PACKAGES, *stack, *pinned])
    travelling = tuple(n for n in names if n not in fixed)
    if is_date(as_of):
        return TimeTravel(as_of, as_of, travelling, "given")
    package, version = dated_release(as_of, pins)
    uploaded, where, why = upload_time(package, version, index)
    if uploaded is None:
        note = f"as of {package}: no upload date for {package} {version} ({why}); today's stack"
        return TimeTravel(package, None, (), note=note)
    return TimeTravel(package, uploaded, travelling, f"{package} {version} uploaded to {where}")


def keep_what_newer_pins_need(
    travel: TimeTravel,
    pins: Iterable[Pin],
    index: IndexSettings,
    *,
    uv: str,
    python: str,
) -> TimeTravel:
    """``travel`` less the stack packages that an exact pin newer than the cutoff
    needs: those resolve as today, with the pin (README's promise).

    Why the closure, computed up front: a release uploaded after the cutoff may need
    what did not exist on that day (transformers 4.56.2 needs huggingface-hub>=0.34,
    of 2025-07; capped at trl 0.17.0's day, 2025-04, no candidate installs). Its
    closure is what ``uv pip compile`` of the newer pins alone resolves today, read
    from the ``# via`` annotations: one compile of about a second, the same for every
    candidate of a bisect (cached), and none when no pin is newer than the cutoff
    (then every exact pin's needs were met on that day, since a cap keeps every older
    release). The other way, resolving capped and uncapping what a refusal names,
    would parse uv's prose (which changes between uv versions and names one conflict
    at a time: a failed resolve per package) and could not tell a cap from another
    conflict. Not descended into: exact pins not newer than the cutoff (the
    candidate of ``--as-of PACKAGE`` itself), whose own needs travel. A pin whose
    upload date no index gives counts as newer (it must install); a git URL pin
    travels (a commit bisect dates its candidate by the commit)."""
    if travel.cutoff is None or not travel.packages:
        return travel
    cutoff = moment(travel.cutoff)
    exact = {p.package: p for p in pins if p.kind is PinKind.EXACT}
    newer = [p for p in exact.values() if _newer(p, cutoff, index)]
    if not newer:
        return travel
    requirements = tuple(sorted(f"{p.package}=={p.spec}" for p in newer))
    annotated = _annotated_lock(uv, python, tuple(index.uv_args()), requirements)
    if annotated is None:
        return travel  # the real resolve fails too, and says why
    needs = {p.package: _closure(annotated, {p.package}, set(exact)) for p in newer}
    kept = tuple(p for p in travel.packages if any(p in n for n in needs.values()))
    if not kept:
        return travel
    return replace(
        travel,
        packages=tuple(p for p in travel.packages if p not in kept),
        kept=kept,
        kept_for=tuple(f"{p.package} {p.spec}" for p in newer if needs[p.package] & set(kept)),
    )


def _newer(pin: Pin, cutoff: datetime, index: IndexSettings) -> bool:
    try:
        version = Version(pin.spec)
    except InvalidVersion:
        return True
    uploaded, _, _ = upload_time(pin.package, version, index)
    return uploaded is None or moment(uploaded) > cutoff


@functools.lru_cache(maxsize=64)
def _annotated_lock(
    uv: str, python: str, index_args: tuple[str, ...], requirements: tuple[str, ...]
) -> str | None:
    """``uv pip compile`` of some exact pins as today, ``# via`` on each line; None
    when they do not resolve together. Once per process for the same pins."""
    args = [uv, "pip", "compile", "-", "--python", python, "--no-header", "--quiet"]
    args += ["--annotation-style", "line", *index_args]
    done = procs.run(args, input="\n".join(requirements) + "\n", timeout=CLOSURE_TIMEOUT)
    if done.timed_out or done.returncode != 0:
        return None
    return done.stdout


_LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==|@)[^#]*(?:#\s*via\s+(.*))?$")


def _closure(annotated: str, roots: set[str], held: set[str]) -> set[str]:
    """Every package reachable from ``roots`` in an annotated lock, not going on
    through ``held`` packages other than the roots."""
    children: dict[str, set[str]] = {}
    for line in annotated.splitlines():
        match = _LOCK_LINE.match(line.strip())
        if match is None:
            continue
        child = canonicalize_name(match.group(1))
        for parent in (match.group(2) or "").split(","):
            parent = parent.strip()
            if parent and not parent.startswith("-"):  # "-r -": the input itself
                children.setdefault(canonicalize_name(parent), set()).add(child)
    found, todo = set(roots), list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                if child not in held:
                    todo.append(child)
    return found


def first_upload(package: str, index: IndexSettings) -> str | None:
    """The earliest upload time of any file of a project on the first PEP 691 index
    that lists it (None where no index gives one)."""
    name = canonicalize_name(package)
    for source in sources(index, name):
        if source.kind != "index":
            continue
        try:
            files = _project_files(source.location, name)
        except UserError:
            continue
        stamps = sorted(t for _, t in files or () if t)
        if stamps:
            return stamps[0]
    return None


def before_first_release(as_of: str | None, package: str, index: IndexSettings) -> str | None:
    """One line when ``as_of`` is a date before ``package`` was first uploaded (a
    typo, most often: the stack of that day never ran it); None otherwise."""
    if as_of is None or not is_date(as_of):
        return None
    first = first_upload(package, index)
    if first is None or moment(first) <= moment(as_of):
        return None
    return (
        f"warning: --as-of {as_of} is before {package}'s first release "
        f"(uploaded {first[:10]}): the rest of the stack is older than any {package}"
    )


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
    for source in sources(index, name):
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
