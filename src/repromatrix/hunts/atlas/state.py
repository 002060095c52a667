"""reports/atlas/atlas.json: what the atlas has learnt, kept from night to night.

    {"schema": 1, "axes": {package: [versions]}, "held": {package: pin},
     "cases": [case ids], "strength": 2,
     "cells": [{"pins": {package: version}, "outcome": "works" | "breaks" | "conflict"
                | "error", "cases": {case id: status}, "failures": [{"case", "error",
                "link"}], "reason", "tested", "seconds", "repro", "message"}],
     "resolutions": [{"pins": {a: x, b: y}, "conflict": uv's message or ""}],
     "audits": [{"pins", "inferred", "found"}], "runs": [{"started", "cells", ...}]}

A cell's answer stands while the held pins and the cases it ran are the atlas's own
(``stands``): such a cell is never tested again. Fields are added, never renamed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from repromatrix.errors import UserError
from repromatrix.results.folder import write_json_atomic

SCHEMA = 1
FILE_NAME = "atlas.json"

CellOutcome = Literal["works", "breaks", "conflict", "error"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Failure(_Model):
    case: str
    error: str = ""  # the case's one-line message
    link: str = ""  # a registered known issue's link (cases/known_issues.yaml)


class CellRecord(_Model):
    pins: dict[str, str]  # axis package -> version
    outcome: CellOutcome
    cases: dict[str, str] = {}  # case id -> status (after verdicts)
    failures: list[Failure] = []
    reason: str = ""  # why it was planned
    tested: str = ""  # when (UTC, ISO 8601)
    seconds: float = 0.0
    repro: str = ""  # one line that reruns it
    message: str = ""  # an install error's line
    held: dict[str, str] = {}  # the held pins it ran with
    resolved: dict[str, str] = {}  # the matrix's packages as the cell installed them


class Resolution(_Model):
    pins: dict[str, str]  # two axes' versions
    conflict: str = ""  # uv's reason when they cannot be installed together


class Audit(_Model):
    pins: dict[str, str]  # the inferred pair
    inferred: str  # works | breaks
    found: str  # what the audit cell showed


class RunRecord(_Model):
    started: str
    cells: int = 0
    seconds: float = 0.0
    jobs: int = 1
    lower_bound: int = 0


class AtlasState(_Model):
    schema_: int = SCHEMA
    axes: dict[str, list[str]] = {}
    held: dict[str, str] = {}
    cases: list[str] = []
    strength: int = 2
    cells: list[CellRecord] = []
    resolutions: list[Resolution] = []
    audits: list[Audit] = []
    runs: list[RunRecord] = []

    def standing(self) -> list[CellRecord]:
        """The cells whose answer stands: same held pins, and every case asked run."""
        return [cell for cell in self.cells if stands(cell, self.held, self.cases)]

    def dump(self) -> dict:
        data = self.model_dump(mode="json")
        data.pop("schema_")
        return {"schema": SCHEMA, **data}


def stands(cell: CellRecord, held: dict[str, str], cases: list[str]) -> bool:
    if cell.held != held:
        return False
    if cell.outcome in ("conflict", "error"):
        return cell.outcome == "conflict"  # an error is retried; a conflict is metadata
    return not cases or all(any(c == k or c.startswith(k) for c in cell.cases) for k in cases)


def read_state(folder: Path) -> AtlasState:
    """The atlas in ``folder`` (an empty one when there is none yet)."""
    path = folder / FILE_NAME
    if not path.exists():
        return AtlasState()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: not an atlas file ({err})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UserError(f"{path}: not an atlas file of schema {SCHEMA}")
    try:
        return AtlasState.model_validate({k: v for k, v in data.items() if k != "schema"})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: {where}: {first['msg']}") from None


def write_state(folder: Path, state: AtlasState) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    write_json_atomic(path, state.dump())
    return path
