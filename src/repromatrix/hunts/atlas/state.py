"""reports/atlas/atlas.json: what the atlas has learnt, kept from night to night.

    {"schema": 1, "axes": {package: [versions]}, "held": {package: pin},
     "cases": [case ids], "strength": 2,
     "cells": [{"pins": {package: version}, "outcome": "works" | "breaks" | "conflict"
                | "error", "cases": {case id: status}, "failures": [{"case", "error",
                "link"}], "reason", "tested", "seconds", "repro", "message", "held",
                "resolved"}],
     "resolutions": [{"pins": {a: x, b: y}, "conflict": uv's message or ""}],
     "audits": [{"pins", "inferred", "found"}], "runs": [{"started", "cells", ...}]}

A cell's answer stands while the held pins and the cases it ran are the atlas's own
(``stands``): such a cell is never tested again. Fields are added, never renamed;
readers ignore unknown ones.

Plain dataclasses with a reader that checks each field's type (one line naming the
field on a mistake), not pydantic models: ``atlas query`` reads this file and must
answer in well under 0.2 s, and pydantic's import alone costs more than that.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError

SCHEMA = 1
FILE_NAME = "atlas.json"
OUTCOMES = ("works", "breaks", "conflict", "error")


@dataclass
class Failure:
    case: str
    error: str = ""  # the case's one-line message
    link: str = ""  # a registered known issue's link (cases/known_issues.yaml)


@dataclass
class CellRecord:
    pins: dict[str, str]  # axis package -> version
    outcome: str  # works | breaks | conflict | error
    cases: dict[str, str] = field(default_factory=dict)  # case id -> status (after verdicts)
    failures: list[Failure] = field(default_factory=list)
    reason: str = ""  # why it was planned
    tested: str = ""  # when (UTC, ISO 8601)
    seconds: float = 0.0
    repro: str = ""  # one line that reruns it
    message: str = ""  # an install error's line
    held: dict[str, str] = field(default_factory=dict)  # the held pins it ran with
    resolved: dict[str, str] = field(default_factory=dict)  # the matrix's packages installed


@dataclass
class Resolution:
    pins: dict[str, str]  # two axes' versions
    conflict: str = ""  # uv's reason when they cannot be installed together


@dataclass
class Audit:
    pins: dict[str, str]  # the inferred pair
    inferred: str  # works | breaks
    found: str  # what the audit cell showed


@dataclass
class RunRecord:
    started: str
    cells: int = 0
    seconds: float = 0.0
    jobs: int = 1
    lower_bound: int = 0


@dataclass
class AtlasState:
    axes: dict[str, list[str]] = field(default_factory=dict)
    held: dict[str, str] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)
    strength: int = 2
    cells: list[CellRecord] = field(default_factory=list)
    resolutions: list[Resolution] = field(default_factory=list)
    audits: list[Audit] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)

    def standing(self) -> list[CellRecord]:
        """The cells whose answer stands: same held pins, and every case asked run."""
        return [cell for cell in self.cells if stands(cell, self.held, self.cases)]

    def dump(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **dataclasses.asdict(self)}


def stands(cell: CellRecord, held: dict[str, str], cases: list[str]) -> bool:
    if cell.held != held:
        return False
    if cell.outcome in ("conflict", "error"):
        return cell.outcome == "conflict"  # an error is retried; a conflict is metadata
    return not cases or all(any(c == k or c.startswith(k) for c in cell.cases) for k in cases)


def with_held(cell: CellRecord, held: dict[str, str]) -> CellRecord:
    return cell if cell.held else dataclasses.replace(cell, held=dict(held))


# --------------------------------------------------------------------------- reading


def read_state(folder: Path) -> AtlasState:
    """The atlas in ``folder`` (an empty one when there is none yet)."""
    path = folder / FILE_NAME
    if not path.exists():
        return AtlasState()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        # RecursionError: nesting too deep for json (a garbage file, never an atlas).
        raise UserError(f"{path}: not an atlas file ({err})") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if isinstance(schema, bool) or schema != SCHEMA:
        raise UserError(f"{path}: not an atlas file of schema {SCHEMA}")
    try:
        return _state(data)
    except _Bad as bad:
        raise UserError(f"{path}: {bad.where}: {bad.what}") from None


class _Bad(Exception):
    def __init__(self, where: str, what: str) -> None:
        super().__init__(where)
        self.where, self.what = where, what


def _state(data: dict[str, Any]) -> AtlasState:
    axes = _mapping(data, "axes", "", list)
    for package, versions in axes.items():
        if not all(isinstance(v, str) for v in versions):
            raise _Bad(f"axes.{package}", "a list of versions (text)")
    return AtlasState(
        axes=axes,
        held=_mapping(data, "held", ""),
        cases=_texts(data, "cases", ""),
        strength=_value(data, "strength", "", int, 2),
        cells=[_cell(c, f"cells[{i}]") for i, c in enumerate(_list(data, "cells", ""))],
        resolutions=[
            Resolution(_mapping(r, "pins", w), _value(r, "conflict", w, str, ""))
            for i, r in enumerate(_list(data, "resolutions", ""))
            if (w := f"resolutions[{i}]")
        ],
        audits=[
            Audit(_mapping(a, "pins", w), _value(a, "inferred", w, str), _value(a, "found", w, str))
            for i, a in enumerate(_list(data, "audits", ""))
            if (w := f"audits[{i}]")
        ],
        runs=[
            RunRecord(
                _value(r, "started", w, str),
                _value(r, "cells", w, int, 0),
                float(_value(r, "seconds", w, (int, float), 0.0)),
                _value(r, "jobs", w, int, 1),
                _value(r, "lower_bound", w, int, 0),
            )
            for i, r in enumerate(_list(data, "runs", ""))
            if (w := f"runs[{i}]")
        ],
    )


def _cell(data: Any, where: str) -> CellRecord:
    if not isinstance(data, dict):
        raise _Bad(where, "not a mapping")
    outcome = _value(data, "outcome", where, str)
    if outcome not in OUTCOMES:
        raise _Bad(f"{where}.outcome", f"{outcome!r} is not one of {', '.join(OUTCOMES)}")
    return CellRecord(
        pins=_mapping(data, "pins", where),
        outcome=outcome,
        cases=_mapping(data, "cases", where),
        failures=[
            Failure(
                _value(f, "case", w, str),
                _value(f, "error", w, str, ""),
                _value(f, "link", w, str, ""),
            )
            for i, f in enumerate(_list(data, "failures", where))
            if (w := f"{where}.failures[{i}]")
        ],
        reason=_value(data, "reason", where, str, ""),
        tested=_value(data, "tested", where, str, ""),
        seconds=float(_value(data, "seconds", where, (int, float), 0.0)),
        repro=_value(data, "repro", where, str, ""),
        message=_value(data, "message", where, str, ""),
        held=_mapping(data, "held", where),
        resolved=_mapping(data, "resolved", where),
    )


_MISSING = object()


def _value(data: Any, key: str, where: str, kind: Any, default: Any = _MISSING) -> Any:
    at = f"{where}.{key}" if where else key
    if not isinstance(data, dict):
        raise _Bad(where or "(top)", "not a mapping")
    value = data.get(key, default)
    if value is _MISSING:
        raise _Bad(at, "required field is missing")
    if isinstance(value, bool) or not isinstance(value, kind):
        raise _Bad(at, f"{value!r} is of the wrong type")
    return value


def _list(data: Any, key: str, where: str) -> list[Any]:
    return _value(data, key, where, list, [])


def _texts(data: Any, key: str, where: str) -> list[str]:
    found = _list(data, key, where)
    if not all(isinstance(item, str) for item in found):
        raise _Bad(f"{where}.{key}" if where else key, "a list of text")
    return found


def _mapping(data: Any, key: str, where: str, kind: type = str) -> dict[str, Any]:
    found = _value(data, key, where, dict, {})
    for name, value in found.items():
        if not isinstance(value, kind):
            at = f"{where}.{key}.{name}" if where else f"{key}.{name}"
            raise _Bad(at, f"{value!r} is of the wrong type")
    return dict(found)


def write_state(folder: Path, state: AtlasState) -> Path:
    from repromatrix.results.folder import write_json_atomic  # writing only: queries skip it

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    write_json_atomic(path, state.dump())
    return path
