"""reports/atlas/atlas.json: what the atlas has learnt, kept from night to night.

    {schema: 2, axes: {package: [versions]}, optional: [packages],
     held: {package: pin}, cases: [case ids], strength: 2,
     cells: [CellRecord: {pins: {package: version}, outcome: a CellOutcome,
                          cases: {case id: CaseRecord}, reason, tested (when),
                          seconds, repro, message, held, resolved, plan}],
     resolutions: [Resolution: {pins: {a: x, b: y}, conflict: uv's message or ""}],
     audits: [Audit], runs: [RunRecord], plan: Plan or null}

Each record's fields are its dataclass's, read by name (``_read``).

A cell's answer stands while the held pins and the cases it ran are the atlas's own
(``stands``): such a cell is never tested again. A held folder pin's value names the
tree it was built from (``mylib: ". [source abc1234 + edits, sha256:0f1e2d3c4b5a]"``,
``held_text``): after an edit the atlas's held value changes, so the cells tested on
the old tree stop standing (``old_source``), are re-planned, and no answer counts
them. A state without folder pins keeps its plain pin texts. Fields are added, never renamed;
readers ignore unknown ones. A schema 1 file (before failure signatures) is read
with each failure's cause taken from its error line.

Everything a cell wrote is bounded when it is kept (``bounded``: messages, links
that are http(s) or nothing) and read back under the same rules, and the file is
strict JSON (NaN and Infinity are refused, never written).

Plain dataclasses with a reader that checks each field's type (one line naming the
field on a mistake), not pydantic models: ``atlas query`` reads this file and must
answer in well under 0.2 s, and pydantic's import alone costs more than that.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError
from repromatrix.outcomes import AnswerStatus, CellOutcome

SCHEMA = 2
READABLE = (1, 2)
FILE_NAME = "atlas.json"
MAX_FILE_BYTES = 64 * 1024 * 1024
TEXT_CHARS = 300  # an error line, a cause, an install message
LONG_CHARS = 2000  # a repro line, a reason


def bounded(text: Any, limit: int = TEXT_CHARS) -> str:
    """One line of at most ``limit`` characters (control characters dropped)."""
    if type(text) is str and len(text) <= limit and text.isprintable():
        return text  # already one bounded line (the usual case: read back)
    line = " ".join(str(text).split())
    line = "".join(ch for ch in line if ch.isprintable())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def safe_link(text: Any) -> str:
    """A registered issue's link if it is an http(s) URL of sensible length, else ""
    (a ``javascript:`` or ``data:`` link never reaches the page)."""
    link = str(text).strip()
    ok = link.lower().startswith(("https://", "http://")) and len(link) <= 500
    return link if ok and not any(ch.isspace() or ch in "\"'<>`" for ch in link) else ""


def finite(value: Any) -> float:
    number = float(value)
    return round(number, 2) if math.isfinite(number) and number >= 0 else 0.0


@dataclass
class CaseRecord:
    """One case in one cell, after verdicts (a case status word), over its runs."""

    status: str
    runs: int = 1
    passed: int = 0
    signature: str = ""  # the failure's key (execution/_cell/signature.py); "" if none
    cause: str = ""  # the signature as one line: Type: masked message (at file:function)
    error: str = ""  # the case's own first message line
    link: str = ""  # a registered known issue's link (http(s) only)


@dataclass
class CellRecord:
    pins: dict[str, str]  # axis package -> version (universe.ABSENT: not installed)
    outcome: str  # a CellOutcome
    cases: dict[str, CaseRecord] = field(default_factory=dict)
    reason: str = ""  # why it was planned
    tested: str = ""  # when (UTC, ISO 8601)
    seconds: float = 0.0
    repro: str = ""  # one line that reruns it
    message: str = ""  # an install error's line
    held: dict[str, str] = field(default_factory=dict)  # the held pins it ran with
    resolved: dict[str, str] = field(default_factory=dict)  # the matrix's packages installed
    plan: str = ""  # the digest of the nightly plan it was folded from ("": a local run)


@dataclass
class Resolution:
    pins: dict[str, str]  # two axes' versions
    conflict: str = ""  # uv's reason when they cannot be installed together


@dataclass
class Audit:
    pins: dict[str, str]  # the inferred pair
    inferred: str  # the inferred AnswerStatus
    found: str  # what the audit cell showed (AnswerStatus)
    kind: str = ""  # the inference rule (knowledge.Rule) it checked
    case: str = ""


@dataclass
class RunRecord:
    started: str
    cells: int = 0
    seconds: float = 0.0
    jobs: int = 1
    lower_bound: int = 0


@dataclass
class PlannedCell:
    """A cell of a nightly plan: its job's id, pins and why (an audit's pair, case,
    rule and inferred answer ride along, for the fold to record how it came out)."""

    id: str
    pins: dict[str, str]
    reason: str
    audit: Audit | None = None


@dataclass
class Plan:
    digest: str  # sha256 of the tier file the cells run (their results carry it)
    cells: list[PlannedCell] = field(default_factory=list)


@dataclass
class AtlasState:
    axes: dict[str, list[str]] = field(default_factory=dict)
    optional: list[str] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)
    strength: int = 2
    cells: list[CellRecord] = field(default_factory=list)
    resolutions: list[Resolution] = field(default_factory=list)
    audits: list[Audit] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    plan: Plan | None = None

    def standing(self) -> list[CellRecord]:
        """The cells whose answer stands: same held pins, and every case asked run."""
        return [cell for cell in self.cells if stands(cell, self.held, self.cases)]

    def dump(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **dataclasses.asdict(self)}


SOURCE_MARK = " [source "


def held_text(pin: str, source: str) -> str:
    """A held pin's value as the atlas keeps it: the pin's text, and for a folder pin
    the tree it was built from (``abc1234 + edits, sha256:0f1e2d3c4b5a``)."""
    return f"{pin}{SOURCE_MARK}{source}]" if source else pin


def held_pin(value: str) -> str:
    """The pin's own text of a held value (what ``--pin`` takes)."""
    return value.split(SOURCE_MARK, 1)[0]


def held_source(value: str) -> str:
    """The tree a held folder pin names ("" for a pin of a release)."""
    _, mark, rest = value.partition(SOURCE_MARK)
    return rest.removesuffix("]") if mark else ""


def old_source(cell: CellRecord, held: dict[str, str]) -> dict[str, str]:
    """The folder pins whose tree changed since ``cell`` was tested, each with the
    tree it was tested on; empty where the cell's held pins are the atlas's, or
    differ in something else than a tree (then it is stale for another reason)."""
    if set(cell.held) != set(held) or any(
        held_pin(cell.held[p]) != held_pin(held[p]) for p in held
    ):
        return {}
    return {p: held_source(cell.held[p]) or "no source" for p in held if cell.held[p] != held[p]}


def stands(cell: CellRecord, held: dict[str, str], cases: list[str]) -> bool:
    if cell.held != held:
        return False
    if cell.outcome in (CellOutcome.CONFLICT, CellOutcome.ERROR):
        return cell.outcome == CellOutcome.CONFLICT  # an error is retried; a conflict is metadata
    return not cases or all(any(c == k or c.startswith(k) for c in cell.cases) for k in cases)


def with_held(cell: CellRecord, held: dict[str, str]) -> CellRecord:
    """The cell as the atlas keeps it: with the held pins it ran with, every field
    bounded as it is read back (a cell runner's record is data like any other)."""
    kept = cell if cell.held else dataclasses.replace(cell, held=dict(held))
    try:
        return read_cell(dataclasses.asdict(kept), "cell")
    except Bad as bad:
        raise UserError(f"a cell's record: {bad}") from None


# --------------------------------------------------------------------------- reading


def read_state(folder: Path) -> AtlasState:
    """The atlas in ``folder`` (an empty one when there is none yet)."""
    path = folder / FILE_NAME
    if not path.exists():
        return AtlasState()
    return parse_state(path)


def parse_state(path: Path) -> AtlasState:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise UserError(f"{path}: over {MAX_FILE_BYTES // 2**20} MiB: not an atlas file")
        data = strict_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        # RecursionError: nesting too deep for json (a garbage file, never an atlas).
        raise UserError(f"{path}: not an atlas file ({err})") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if isinstance(schema, bool) or schema not in READABLE:
        raise UserError(f"{path}: not an atlas file of schema {SCHEMA}")
    try:
        return _state(data)
    except Bad as bad:
        raise UserError(f"{path}: {bad.where}: {bad.what}") from None


def strict_json(text: str) -> Any:
    """JSON with NaN, Infinity and -Infinity refused (Python's reader takes them)."""

    def refuse(word: str) -> Any:
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


class Bad(Exception):
    """A field that is not what it must be: ``where`` names it."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, str, Any, Any], ...]:
    """(name, type, default, default factory) of each field of a record."""
    return tuple(
        (item.name, str(item.type), item.default, item.default_factory)
        for item in dataclasses.fields(cls)
    )


def _read(cls: type, data: Any, where: str, **given: Any) -> Any:
    """A record of dataclass ``cls`` from ``data``: each field by its name, of its
    type (text bounded), its default where absent; ``given`` fields read elsewhere."""
    values: dict[str, Any] = {}
    missing = dataclasses.MISSING
    for name, kind, plain, factory in _fields(cls):
        if name in given:
            continue
        default = (
            plain if plain is not missing else factory() if factory is not missing else _MISSING
        )
        if kind == "str":
            values[name] = bounded(_value(data, name, where, str, default), LONG_CHARS)
        elif kind == "int":
            values[name] = _value(data, name, where, int, default)
        elif kind == "float":
            values[name] = finite(_value(data, name, where, (int, float), default))
        elif kind == "dict[str, str]":
            values[name] = _mapping(data, name, where)
        else:
            raise AssertionError(f"{cls.__name__}.{name}: {kind}")
    return cls(**values, **given)


def _state(data: dict[str, Any]) -> AtlasState:
    axes = _mapping(data, "axes", "", list)
    for package, versions in axes.items():
        if not all(isinstance(v, str) for v in versions):
            raise Bad(f"axes.{package}", "a list of versions (text)")
    plan = data.get("plan")
    return AtlasState(
        axes=axes,
        optional=_texts(data, "optional", ""),
        held=_mapping(data, "held", ""),
        cases=_texts(data, "cases", ""),
        strength=_value(data, "strength", "", int, 2),
        cells=[read_cell(c, f"cells[{i}]") for i, c in enumerate(_list(data, "cells", ""))],
        resolutions=[
            _read(Resolution, r, f"resolutions[{i}]")
            for i, r in enumerate(_list(data, "resolutions", ""))
        ],
        audits=[_audit(a, f"audits[{i}]") for i, a in enumerate(_list(data, "audits", ""))],
        runs=[_read(RunRecord, r, f"runs[{i}]") for i, r in enumerate(_list(data, "runs", ""))],
        plan=None if plan is None else _plan(plan),
    )


def _audit(data: Any, where: str) -> Audit:
    words = set(AnswerStatus)
    audit: Audit = _read(Audit, data, where)
    if audit.inferred not in words or audit.found not in words:
        raise Bad(where, f"{audit.inferred!r} / {audit.found!r}: not answers")
    return audit


def _plan(data: Any) -> Plan:
    cells = []
    for i, c in enumerate(_list(data, "cells", "plan")):
        where = f"plan.cells[{i}]"
        audit = c.get("audit") if isinstance(c, dict) else None
        cells.append(
            PlannedCell(
                _value(c, "id", where, str),
                _mapping(c, "pins", where),
                bounded(_value(c, "reason", where, str, ""), LONG_CHARS),
                None if audit is None else _audit(audit, f"{where}.audit"),
            )
        )
    return Plan(_value(data, "digest", "plan", str), cells)


def read_cell(data: Any, where: str) -> CellRecord:
    """One cell as atlas.json keeps it (schema 1's ``failures`` folded into its cases)."""
    if not isinstance(data, dict):
        raise Bad(where, "not a mapping")
    outcome = _value(data, "outcome", where, str)
    if outcome not in set(CellOutcome):
        raise Bad(f"{where}.outcome", f"{outcome!r} is not one of {', '.join(CellOutcome)}")
    raw = _value(data, "cases", where, dict, {})
    failures = {
        _value(f, "case", w, str): f
        for i, f in enumerate(_list(data, "failures", where))
        if (w := f"{where}.failures[{i}]")
    }
    cases = {
        bounded(name, LONG_CHARS): _case(value, failures.get(name), f"{where}.cases.{name}")
        for name, value in raw.items()
    }
    return _read(CellRecord, data, where, outcome=outcome, cases=cases)


def _case(value: Any, failure: Any, where: str) -> CaseRecord:
    from repromatrix.outcomes import PASSING, CaseStatus

    if isinstance(value, str):  # schema 1: the status alone, its failure beside
        if value not in set(CaseStatus):
            raise Bad(where, f"{value!r} is not a case status")
        error = bounded(_value(failure, "error", where, str, "")) if failure else ""
        return CaseRecord(
            status=value,
            passed=1 if value in PASSING or value == CaseStatus.SKIPPED else 0,
            signature=f"error:{error}" if failure else "",
            cause=error,
            error=error,
            link=safe_link(_value(failure, "link", where, str, "")) if failure else "",
        )
    record: CaseRecord = _read(CaseRecord, value, where)
    if record.status not in set(CaseStatus):
        raise Bad(f"{where}.status", f"{record.status!r} is not a case status")
    if not 0 <= record.passed <= record.runs <= 1000:
        raise Bad(where, f"passed {record.passed} of {record.runs} runs")
    record.link = safe_link(record.link)
    record.signature = bounded(record.signature, 80)
    record.cause, record.error = bounded(record.cause), bounded(record.error)
    return record


_MISSING = object()


def _value(data: Any, key: str, where: str, kind: Any, default: Any = _MISSING) -> Any:
    if not isinstance(data, dict):
        raise Bad(where or "(top)", "not a mapping")
    value = data.get(key, default)
    if value is _MISSING:
        raise Bad(f"{where}.{key}" if where else key, "required field is missing")
    if isinstance(value, bool) or not isinstance(value, kind):
        raise Bad(f"{where}.{key}" if where else key, f"{str(value)[:80]!r} is of the wrong type")
    return value


def _list(data: Any, key: str, where: str) -> list[Any]:
    return _value(data, key, where, list, [])


def _texts(data: Any, key: str, where: str) -> list[str]:
    found = _list(data, key, where)
    if not all(isinstance(item, str) for item in found):
        raise Bad(f"{where}.{key}" if where else key, "a list of text")
    return found


def _mapping(data: Any, key: str, where: str, kind: type = str) -> dict[str, Any]:
    found = _value(data, key, where, dict, {})
    for name, value in found.items():
        if not isinstance(value, kind):
            at = f"{where}.{key}.{name}" if where else f"{key}.{name}"
            raise Bad(at, f"{str(value)[:80]!r} is of the wrong type")
    return dict(found)


def write_state(folder: Path, state: AtlasState) -> Path:
    from repromatrix.results.folder import write_json_atomic  # writing only: queries skip it

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    data = state.dump()
    json.dumps(data, allow_nan=False)  # strict JSON: a NaN that slipped in fails here
    write_json_atomic(path, data)
    return path
