"""bounds.json: what a bounds hunt found, rewritten as it goes (schema 1).

    {"schema", "target", "name", "version", "source" (a folder's digest, commit,
     dirty), "python", "cells": N, "status": running | done | interrupted,
     "dependencies": [{"name", "declared", "requirements", "extra", "verdict",
                       "suggested", "floor": End, "ceiling": End}],
     "left_out": [{"requirement", "why"}], "working_set": {dep: version},
     "working_from", "notes", "runs": [Run], "diff", "summary",
     + what reproduces it (command, pins, probe, index, repromatrix, started, ...)}

    End: {verdict, tested, outcome, works, fails, excluded, excluded_outcome,
          untested, together, evidence, reason, cells: [Run]}   (the cells that
          show it)
    Run: {"cell", "role", "pins", "outcome", "error", "signature", "repro",
          "seconds", "environment"}

Fields are added, never renamed. A reader validates what it reads (the posting job
reads what a job running the probe wrote: data, never instructions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repromatrix.errors import UserError
from repromatrix.execution._cell.signature import is_signature
from repromatrix.outcomes import BoundVerdict, ProbeOutcome
from repromatrix.redact import redact

SCHEMA_VERSION = 1
MAX_RECORD_BYTES = 20_000_000


class Run(BaseModel):
    """One cell: the tested dependencies' versions, what the probe said, the command
    that reruns it."""

    model_config = ConfigDict(extra="allow")

    cell: int
    role: str = ""
    pins: dict[str, str] = {}  # the tested dependencies -> version
    outcome: ProbeOutcome
    error: str = ""  # one line ("" when good)
    # What a bad cell died of (execution/_cell/signature.py's as_dict: key, exception,
    # frames, message); None when good, or when nothing ran to die.
    signature: dict[str, Any] | None = None

    @field_validator("signature")
    @classmethod
    def _a_signature(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if not is_signature(value):
            raise ValueError("not a signature (exception, frames, message)")
        return value

    repro: str = ""  # repromatrix check ... (or nox -s check -- ...)
    seconds: float = 0.0
    environment: str | None = None  # the cell's identity (16 hex digits)


class EndRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    verdict: BoundVerdict = BoundVerdict.OK
    tested: str | None = None
    outcome: ProbeOutcome | None = None
    works: str | None = None
    fails: str | None = None
    excluded: str | None = None
    excluded_outcome: ProbeOutcome | None = None
    untested: list[str] = []
    together: list[str] = []
    evidence: str = ""
    reason: str = ""
    cells: list[Run] = []


class DependencyRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    declared: str  # the specifier as declared ("" for any release)
    requirements: list[str] = []  # its Requires-Dist lines
    extra: str | None = None
    verdict: BoundVerdict
    suggested: str
    releases: int = 0  # how many its range admits
    floor: EndRecord = EndRecord()
    ceiling: EndRecord = EndRecord()


class BoundsRecord(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: int = Field(default=SCHEMA_VERSION, alias="schema")
    target: str
    name: str
    version: str = ""
    source: dict[str, Any] | None = None
    python: str
    cells: int = 0
    status: str = "running"  # running | done | interrupted
    dependencies: list[DependencyRecord] = []
    left_out: list[dict[str, str]] = []
    working_set: dict[str, str] = {}
    working_from: str = ""
    notes: list[str] = []
    runs: list[Run] = []
    diff: str = ""
    summary: str = ""
    seconds: float = 0.0
    started: str = ""
    finished: str = ""
    jobs: int = 1
    pins: list[str] = []
    probe: dict[str, Any] = {}
    index: dict[str, Any] = {}
    command: str = ""
    repromatrix: str = ""

    def dump(self) -> dict[str, Any]:
        return redact(self.model_dump(mode="json", by_alias=True))

    @property
    def wrong(self) -> list[DependencyRecord]:
        """The dependencies whose declared bound was shown wrong."""
        from repromatrix.outcomes import BOUNDS

        return [d for d in self.dependencies if BOUNDS[d.verdict].wrong]

    @property
    def holds(self) -> bool:
        """Every declared bound holds: each dependency ``ok`` (exit status 0)."""
        return self.status == "done" and all(
            d.verdict is BoundVerdict.OK for d in self.dependencies
        )


def read_record(path: Path) -> BoundsRecord:
    """bounds.json (a file, or the folder holding it), validated; UserError naming the
    file otherwise."""
    if path.is_dir():
        path = path / "bounds.json"
    if not path.is_file():
        raise UserError(f"{path}: no bounds.json")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise UserError(f"{path}: over {MAX_RECORD_BYTES} bytes; not a bounds record")
    try:
        return BoundsRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise UserError(f"{path}: not JSON ({err})") from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: {where}: {first['msg']}") from None
