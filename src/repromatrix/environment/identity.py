"""What names a cell, as sha256 of a JSON document.

- request_document: an exact request before resolving, the key of fast reuse
  (``_requests/``): it resolves the same way every time;
- identity_document: a built cell, by its lock, interpreter, indexes, variables
  and overrides: the name of its folder.

Bump STORE_FORMAT when the layout of a stored environment changes: every cell is
then rebuilt once.
"""

from __future__ import annotations

import hashlib
import json
import re

from repromatrix.environment.request import EnvRequest
from repromatrix.environment.uv import Interpreter
from repromatrix.matrix.pins import PinKind

STORE_FORMAT = 1


def request_document(request: EnvRequest, interpreter: Interpreter, system: dict) -> dict:
    """What an all-exact request is, before resolving: its fast-reuse key."""
    return {
        "format": STORE_FORMAT,
        "pins": sorted(str(p.requirement() or f"{p.package}:{p.kind.value}") for p in request.pins),
        "python": [interpreter.executable, interpreter.version, interpreter.implementation],
        "system": {k: [v["version"], v["site"]] for k, v in sorted(system.items())},
        "index": request.index.identity(),
        "exclude_newer": request.exclude_newer,
        "overrides": sorted(request.overrides),
        "env": sorted(request.env),
        "tooling": list(request.tooling),
        "as_of": [request.as_of, list(request.stack)],
        **_sources(request),
    }


def _sources(request: EnvRequest) -> dict:
    """The digests of the packages built from a folder: only when there are some, so
    that the identity of every other environment stays as it was."""
    if not request.sources:
        return {}
    return {"sources": sorted([tree.package, tree.digest] for tree in request.sources)}


def identity_document(
    request: EnvRequest,
    interpreter: Interpreter,
    system: dict,
    lock: str,
    exclusions: tuple[tuple[str, str], ...] = (),
) -> dict:
    return {
        "format": STORE_FORMAT,
        "python": [interpreter.executable, interpreter.version, interpreter.implementation],
        "lock": lock,
        "system": {k: [v["version"], v["site"]] for k, v in sorted(system.items())},
        "absent": sorted(p.package for p in request.pins if p.kind is PinKind.ABSENT),
        "index": request.index.identity(),
        "exclude_newer": request.exclude_newer,
        "env": sorted(request.env),
        # Only when set, so that the identity of every other environment stays as it was.
        **({"overrides": sorted(request.overrides)} if request.overrides else {}),
        **({"exclude_newer_packages": sorted(exclusions)} if exclusions else {}),
        **_sources(request),
    }


def cell_identity(
    request: EnvRequest,
    interpreter: Interpreter,
    system: dict,
    lock: str,
    exclusions: tuple[tuple[str, str], ...] = (),
) -> str:
    document = identity_document(request, interpreter, system, lock, exclusions)
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def is_exact(request: EnvRequest) -> bool:
    """Whether the request resolves the same way every time: exact pins (a git URL
    at a full sha counts), no floating tooling beyond the cell's own."""
    for pin in request.pins:
        if pin.kind is PinKind.DIRECT:
            if not re.search(r"@[0-9a-f]{40}$", pin.spec):
                return False
        elif pin.kind not in (PinKind.EXACT, PinKind.SYSTEM, PinKind.ABSENT, PinKind.PATH):
            return False  # a folder counts: its source digest is in the request
    return True


def installable_first(request: EnvRequest) -> bool:
    """A request that `uv pip install` can build directly: exact pins only, nothing
    linked from the base interpreter or kept out (those need the resolver's
    --no-emit-package and stubs)."""
    return is_exact(request) and all(
        p.kind not in (PinKind.SYSTEM, PinKind.ABSENT) for p in request.pins
    )
