"""The stored results: the contract between a run and everything that reads it.

Layout of a results directory (reports/latest/ by default)::

    results.json                 merged, schema below
    combinations/<id>.json       one per combination, written as soon as it completes
    records/<id>.jsonl           live per-case records (resume reads these)
    logs/<id>.install.log        uv's output, redacted
    logs/<id>.cases.log          pytest's output, redacted

results.json (schema 1)::

    {"schema": 1, "run": {...metadata},
     "combinations": [{"id", "tier", "requested": {pkg: spec}, "resolved": {pkg: version},
                       "status", "verdict", "verdict_reason",
                       "cases": [{"id", "status", "outcome", "seconds", "message",
                                  "signature": {"key", "exception", "frames", "message"},
                                  "known_issue", "change", "transitions", ...}]}],
     "summary": {"verdicts": {...}, "statuses": {...}, "exit_code", "baseline", ...},
     "regressions": [{"combination", "case", "source", "text", "transition", "repro"}],
     "fixed": [...same shape...]}

The verdict fields (a case's status, known_issue, change, transitions; a
combination's verdict; summary, regressions, fixed) are written by verdicts/judge.py
from the raw outcomes, and rewritten whenever the reports are re-rendered.

Other tools read these names: fields are added, never renamed. Readers ignore
fields they do not know, and keep them when they rewrite a file.

A failing case's ``signature`` (execution/_cell/signature.py) is written by the run
since signatures exist; a file written before has none, and reading leaves it None
(gathering stays a validation, no parsing): ``CaseResult.cause()`` derives one from
the stored traceback where a reader groups failures.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic_core import from_json

from repromatrix.errors import UserError, key_path
from repromatrix.execution._cell.signature import Signature, signature_of_traceback
from repromatrix.outcomes import CaseOutcome, CaseStatus, CombinationStatus, Verdict
from repromatrix.results.bulk import without_cycle_collection

SCHEMA_VERSION = 1
# A combination id (matrix.model.ID_PATTERN): it names files, so never a path.
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")

Direction = Literal["regressed", "fixed"]
# A case against the baseline run (verdicts/judge.py).
CaseChange = Literal["regressed", "fixed", "still-failing", "new"]


class _Model(BaseModel):
    # validate_assignment: a word assigned later is checked like one read from a file.
    # ser_json_inf_nan: an infinite number (read from a file) written back as Python's
    # json reads it, never as a null the schema would refuse.
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        validate_assignment=True,
        ser_json_inf_nan="constants",
    )


def set_fields(model: BaseModel, **values: Any) -> None:
    """Set declared fields of ``model`` as a model without validate_assignment does:
    for the judge's hot loop (2,000 combinations x their cases), whose values are the
    vocabulary's own enums and the models it built. What a file holds is validated
    when it is read, and an assignment anywhere else is still validated; a name that
    is not a field of the model is refused here too."""
    if not _field_names(type(model)).issuperset(values):  # no set built when all are fields
        unknown = sorted(values.keys() - _field_names(type(model)))
        raise AttributeError(f"{type(model).__name__} has no field {unknown[0]!r}")
    model.__dict__.update(values)
    model.__pydantic_fields_set__.update(values)


@functools.cache
def _field_names(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(model.model_fields)


class Transition(_Model):
    """One package's version step between a pass and a failure of the same case, all
    other packages equal: a neighbour in the same run, or the same combination in
    the baseline run. ``bisect`` is the command that finds the culprit release."""

    direction: Direction  # regressed (the older version passes) | fixed (the newer one passes)
    package: str
    good: str  # the version where the case passes
    bad: str  # the version where it fails
    held: dict[str, str] = {}  # the other packages, as resolved (shown in ``text``)
    source: Literal["neighbour", "baseline"] = "neighbour"
    good_combination: str = ""
    bad_combination: str = ""
    text: str = ""  # "regressed between transformers 4.52.4 and 4.53.0 (torch 2.13.0, ...)"
    bisect: str = ""
    # What the bisect holds fixed, as its --pin arguments (verdicts.held_pins):
    # "torch=system", "peft==0.17.1", "unsloth=null".
    pins: list[str] = []
    case: str = ""  # the case the bisect runs ("" when none can: then no ``bisect`` either)


# A signature's parts are short by construction (signature.py bounds them); these
# bounds refuse a file that holds something else under that name.
_Part = Annotated[str, StringConstraints(max_length=1000)]


class FailureSignature(_Model):
    """What a failing case died of: the exception's type, the innermost frames in
    installed packages (``package/file.py:function``), the message with what varies
    masked, and ``key``, the hash of the three. Equal keys: one cause
    (``same_failure``); grouping is a lookup of ``key``."""

    key: str = Field(pattern=r"^[0-9a-f]{8,64}$")
    exception: _Part = ""
    frames: list[_Part] = Field(default=[], max_length=16)
    message: _Part = ""

    @classmethod
    def of(cls, signature: Signature) -> FailureSignature:
        return cls(**signature.as_dict())

    def line(self) -> str:
        """One line for a person: ``RuntimeError: message (at file.py:function)``."""
        return Signature(self.exception, tuple(self.frames), self.message).line()


class CaseResult(_Model):
    id: str
    status: CaseStatus  # after verdicts: an outcome, or known-broken / possibly-fixed
    seconds: float = 0.0
    message: str = ""
    outcome: CaseOutcome | Literal[""] = ""  # what the run saw, before verdicts ("": older files)
    error_type: str | None = None
    traceback: str = ""
    attempts: list[CaseOutcome] = []  # the outcome of each run, the first included
    known_issue: dict[str, Any] | None = None
    # Against the baseline run; None without one.
    change: CaseChange | None = None
    baseline_status: CaseStatus | None = None
    transitions: list[Transition] = []  # nearest first; the first is the one reported
    # Kept from an earlier run by a run of only some cases of this combination
    # (run --update CASE): that run's start time. None: this run measured it.
    from_run: str | None = None
    # What a failing case died of; None for one that passed or was skipped, and in
    # files written before signatures (``cause()`` derives one for those).
    signature: FailureSignature | None = None

    def cause(self) -> FailureSignature | None:
        """The signature of this case's failure: the stored one, or, for a failure
        stored without one (an older file), one derived from its traceback, else from
        its type and message. None for a case that did not fail."""
        if self.signature is not None:
            return self.signature
        seen = self.outcome or self.status
        if seen in (CaseOutcome.PASSED, CaseOutcome.SKIPPED, CaseStatus.POSSIBLY_FIXED):
            return None
        found = signature_of_traceback(self.traceback) if self.traceback else None
        return FailureSignature.of(
            found or Signature.of(self.error_type or str(seen), (), self.message)
        )


class EnvironmentInfo(_Model):
    identity: str = ""
    reused: bool = False
    build_seconds: float = 0.0
    python: str = ""
    system: dict[str, str] = {}
    index: dict[str, Any] = {}
    # Packages built from a folder: {"mylib": {"path", "digest", "commit", "dirty"}}
    sources: dict[str, dict[str, Any]] = {}


class CombinationResult(_Model):
    # A file name in combinations/, records/ and logs/: a safe name, never a path.
    id: str = Field(pattern=ID_PATTERN.pattern)
    tier: str
    requested: dict[str, str]
    resolved: dict[str, str] = {}
    status: CombinationStatus
    cases: list[CaseResult] = []
    message: str = ""  # why it did not run (install error, skipped cell)
    seconds: float = 0.0
    started: str = ""
    finished: str = ""
    device: str = "cpu"
    tags: list[str] = []
    env: dict[str, str] = {}
    environment: EnvironmentInfo = Field(default_factory=EnvironmentInfo)
    repro: str = ""  # one-line command that reruns this combination
    verdict: Verdict | None = None
    visible_devices: str | None = None  # CUDA_VISIBLE_DEVICES its cases saw (--jobs N)
    verdict_reason: str = ""


class RunInfo(_Model):
    id: str = ""
    started: str = ""
    finished: str = ""
    tier: str | None = None
    matrix: str = ""
    matrix_sha256: str = ""
    repromatrix: str = ""
    cases_commit: str | None = None
    command: str = ""
    host: dict[str, Any] = {}


class Change(_Model):
    """A case that changed state: a regression (or a fix) worth a line in a report."""

    combination: str
    case: str
    source: Literal["baseline", "neighbour", "known-issue"]
    text: str
    transition: Transition | None = None
    repro: str = ""


class Summary(_Model):
    verdicts: dict[Verdict, int] = {}
    statuses: dict[CaseStatus, int] = {}
    exit_code: int = 0
    baseline: dict[str, Any] | None = None  # which run the baseline was (id, started)
    known_issues: str | None = None  # the registry file that was applied


class Results(_Model):
    schema_: Literal[1] = Field(default=SCHEMA_VERSION, alias="schema")
    run: RunInfo = Field(default_factory=RunInfo)
    combinations: list[CombinationResult] = []
    summary: Summary | None = None
    regressions: list[Change] = []
    fixed: list[Change] = []

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def find(self, combination_id: str) -> CombinationResult | None:
        return next((c for c in self.combinations if c.id == combination_id), None)


# --------------------------------------------------------------------------- reading


@without_cycle_collection
def load_results(path: str | Path) -> Results:
    """results.json, or a directory holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    if not path.exists():
        raise UserError(f"{path}: no such results file")
    data = read_json(path)
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != SCHEMA_VERSION:
        raise UserError(
            f"{path}: schema: {schema!r} is not a results schema this version reads "
            f"({SCHEMA_VERSION})"
        )
    return validate(Results, data, path)


# results.json is a dozen levels deep; anything far deeper was not written by a run.
MAX_DEPTH = 64


def read_json(path: Path) -> Any:
    return read_json_text(path)[0]


def read_json_text(path: Path) -> tuple[Any, str]:
    """A JSON file's data, its nesting bounded, and its text: read once (a merge
    writes the text it validated as it is)."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        data = _parsed(raw, text)
    except json.JSONDecodeError as err:
        raise UserError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except RecursionError:
        raise UserError(f"{path}: nested more than {MAX_DEPTH} deep") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read ({err.strerror})") from None
    check_depth(data, path)
    return data, text


def _parsed(raw: bytes, text: str) -> Any:
    """pydantic's JSON parser (Rust, twice json.loads's speed on a merge's thousands of
    files): what it reads, json.loads reads the same (numbers, NaN, a key twice: the
    last). What it refuses (a lone surrogate escape json accepts; its nesting limit,
    200) goes to json.loads, whose error names the line."""
    try:
        return from_json(raw)
    except ValueError:
        return json.loads(text)


_CONTAINERS = (dict, list)  # what json.loads nests (never a subclass)


def check_depth(data: Any, path: Path, where: tuple[str | int, ...] = ()) -> None:
    """No container of ``data`` (found at ``where`` in the file) more than MAX_DEPTH
    below the file's top."""
    if not _within([data], len(where)):
        _name_too_deep(data, path, where)


def _within(values: list[Any], depth: int) -> bool:
    """Whether no container among ``values`` (found ``depth`` below the file's top), nor
    any inside them, lies more than MAX_DEPTH below it. A level at a time, each by a
    comprehension: a results.json of 2,000 combinations holds a million values, most of
    them not containers."""
    level = [value for value in values if value.__class__ in _CONTAINERS]
    while level:
        if depth > MAX_DEPTH:
            return False
        below: list[Any] = []
        for value in level:
            items = value.values() if value.__class__ is dict else value
            below += [child for child in items if child.__class__ in _CONTAINERS]
        level, depth = below, depth + 1
    return True


def text_within(raw: bytes) -> bool:
    """check_depth's answer for the JSON text ``raw`` (one that parses), from the text:
    its brackets outside strings, the innermost pairs taken out a level at a time. Each
    step is one pass of C over bytes: for a file whose data is not kept (a copy of what
    a merge reads from elsewhere), no Python data is built only to be walked."""
    if b"\\" in raw:  # each escape (a quote, a backslash, \n...) is inside a string
        raw = _ESCAPES.sub(b"", raw)
    marks = raw.translate(None, _NOT_MARKS)  # quotes and brackets: a short text
    brackets = b"".join(marks.split(b'"')[::2])
    levels = 0
    while brackets:
        levels += 1
        if levels > MAX_DEPTH + 1:  # the file's top is level 1, check_depth's 0
            return False
        inner = _PAIRS.sub(b"", brackets)
        if inner == brackets:  # not JSON: the parser has refused it already
            return True
        brackets = inner
    return True


_PAIRS = re.compile(rb"\[\]|\{\}")
_ESCAPES = re.compile(rb"\\.", re.DOTALL)
_NOT_MARKS = bytes(c for c in range(256) if c not in b'[]{}"')


def _name_too_deep(data: Any, path: Path, where: tuple[str | int, ...]) -> None:
    # Only for a file refused: the walk again, keeping the first keys of each
    # container's path (all the message shows).
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(data, len(where), where)]
    while stack:
        value, depth, at = stack.pop()
        if depth > MAX_DEPTH:
            raise UserError(f"{path}: {key_path(at)}...: nested more than {MAX_DEPTH} deep")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            if isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1, (*at, key) if depth < 4 else at))


def read_model(path: Path, model: type[M]) -> tuple[M, str]:
    """A JSON file of one ``model`` (a combination's file), validated and its nesting
    bounded as ``validate(model, read_json_text(path))`` does, and its text, the short
    way: validated straight from its bytes by pydantic (no Python data built and walked
    again), and the depth walked only where the schema leaves it open (extra fields,
    ``Any``): the rest is as deep as the schema. A file refused either way is read the
    long way, whose one line names the file, key and value."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        found = model.model_validate_json(raw)
    except (OSError, UnicodeDecodeError, ValidationError):
        found = None
    if found is None or not _open_within(found, 0):
        data, text = read_json_text(path)
        return validate(model, data, path), text
    return found, text


M = TypeVar("M", bound=BaseModel)


def _open_within(model: BaseModel, depth: int) -> bool:
    """check_depth's answer for a validated ``model`` found ``depth`` below the file's
    top, from what its schema leaves open (False also where the schema holds what this
    walk does not know: the caller then takes the long way)."""
    plan = _open_fields(type(model))
    if plan is None:
        return False
    extra = model.__pydantic_extra__
    if extra and not _within(list(extra.values()), depth + 1):
        return False
    values = model.__dict__
    for name, shape in plan:
        value = values[name]
        if value is None:
            continue
        if shape == "open":
            if not _within([value], depth + 1):
                return False
        elif shape == "model":
            if not _open_within(value, depth + 1):
                return False
        elif not all(_open_within(item, depth + 2) for item in value):  # models
            return False
    return True


@functools.cache
def _open_fields(model: type[BaseModel]) -> tuple[tuple[str, str], ...] | None:
    """The fields of ``model`` that may hold more than the schema's own depth, each with
    its shape ("open": JSON of any depth, "model", "models": a list of them); None when
    a field mixes them (a model inside a dict)."""
    shapes = {name: _shape(field.annotation) for name, field in model.model_fields.items()}
    if "mixed" in shapes.values():
        return None
    return tuple((name, shape) for name, shape in shapes.items() if shape != "flat")


def _shape(annotation: Any) -> str:
    """flat (no container below its own), open, model, models, or mixed."""
    if annotation is Any:
        return "open"
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return "model"
        return "flat" if issubclass(annotation, (str, int, float, bool)) else "mixed"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return "flat"
    if origin is Annotated:
        return _shape(args[0])
    if origin in (Union, UnionType):
        shapes = {_shape(arg) for arg in args if arg is not type(None)}
        return shapes.pop() if len(shapes) == 1 else "flat" if not shapes else "mixed"
    inner = _shape(args[-1]) if origin in (list, dict) and args else "mixed"
    if inner == "model":
        return "models" if origin is list else "mixed"
    return "mixed" if inner == "models" else inner


def validate(model: type[BaseModel], data: Any, path: Path) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        value = repr(first.get("input"))
        value = value if len(value) <= 80 else value[:79] + "…"
        raise UserError(f"{path}: {key_path(first['loc'])}: {first['msg']} (got {value})") from None


def utc_now() -> str:
    """A timestamp as results files spell it (UTC, seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
