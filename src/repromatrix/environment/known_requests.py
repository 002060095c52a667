"""Fast reuse: the identity an exact request was built as, kept under the request
itself (``_requests/`` of the store).

A request of exact pins only (a git URL at a full sha counts) resolves the same way
every time, so finding the cell it was built as needs no resolve and no child
process at all: the cell of a bisect step that was probed before, or of a `check`
run again. Floating pins, ranges and branches move, and are never kept here.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from repromatrix.environment.identity import is_exact, request_document

if TYPE_CHECKING:
    from repromatrix.environment.as_of import TimeTravel
    from repromatrix.environment.request import EnvRequest
    from repromatrix.environment.uv import Interpreter

REQUESTS = "_requests"


class Known(NamedTuple):
    identity: str
    home: Path  # the cell's folder in the store
    packages: dict  # resolved.json: name -> [version, origin]
    time_travel: TimeTravel | None


def _request_file(root: Path, request: EnvRequest, interpreter: Interpreter, system: dict) -> Path:
    key = hashlib.sha256(
        json.dumps(request_document(request, interpreter, system), sort_keys=True).encode()
    ).hexdigest()
    return root / REQUESTS / f"{key[:24]}.json"


def known_cell(
    root: Path, request: EnvRequest, interpreter: Interpreter, system: dict
) -> Known | None:
    """The complete cell an exact request was built as before, if there is one."""
    if not is_exact(request):
        return None
    try:
        saved = json.loads(_request_file(root, request, interpreter, system).read_text())
        home = root / saved["identity"][:16]
        if not (home / "complete").exists():
            return None
        packages = json.loads((home / "resolved.json").read_text())
    except (OSError, ValueError, KeyError):
        return None
    travel = None
    if saved.get("time_travel"):
        from repromatrix.environment.as_of import TimeTravel

        travel = TimeTravel(**saved["time_travel"])
    return Known(saved["identity"], home, packages, travel)


def remember_cell(
    root: Path,
    request: EnvRequest,
    interpreter: Interpreter,
    system: dict,
    identity: str,
    travel: TimeTravel | None,
) -> None:
    """Keep ``identity`` under an exact request (written whole or not at all)."""
    if not is_exact(request):
        return
    path = _request_file(root, request, interpreter, system)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"identity": identity, "time_travel": travel.__dict__ if travel else None}
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(document))
    tmp.replace(path)
