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
                                  "known_issue", "change", "transitions", ...}]}],
     "summary": {"verdicts": {...}, "statuses": {...}, "exit_code", "baseline", ...},
     "regressions": [{"combination", "case", "source", "text", "transition", "repro"}],
     "fixed": [...same shape...]}

The verdict fields (a case's status, known_issue, change, transitions; a
combination's verdict; summary, regressions, fixed) are written by verdicts.py
from the raw outcomes, and rewritten whenever the reports are re-rendered.

Other tools read these names: fields are added, never renamed. Readers ignore
fields they do not know, and keep them when they rewrite a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repromatrix.errors import UserError, key_path

SCHEMA_VERSION = 1

# Raw case outcomes, as the runner records them.
CASE_OUTCOMES = ("passed", "failed", "error", "skipped", "crashed", "timed-out", "flaky")
# A combination's status: how far it got and what its cases did.
COMBINATION_STATUSES = ("passed", "failed", "skipped", "install-error")


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Transition(_Model):
    """One package's version step between a pass and a failure of the same case, all
    other packages equal: a neighbour in the same run, or the same combination in
    the baseline run. ``bisect`` is the command that finds the culprit release."""

    direction: str  # regressed (the older version passes) | fixed (the newer one passes)
    package: str
    good: str  # the version where the case passes
    bad: str  # the version where it fails
    held: dict[str, str] = {}  # the other packages, as resolved (shown in ``text``)
    source: str = "neighbour"  # neighbour | baseline
    good_combination: str = ""
    bad_combination: str = ""
    text: str = ""  # "regressed between transformers 4.52.4 and 4.53.0 (torch 2.13.0, ...)"
    bisect: str = ""
    # What the bisect holds fixed, as its --pin arguments (verdicts.held_pins):
    # "torch=system", "peft==0.17.1", "unsloth=null".
    pins: list[str] = []
    case: str = ""  # the case the bisect runs ("" when none can: then no ``bisect`` either)


class CaseResult(_Model):
    id: str
    status: str  # after verdicts: an outcome, or known-broken / possibly-fixed
    seconds: float = 0.0
    message: str = ""
    outcome: str = ""  # what the run saw, before verdicts
    error_type: str | None = None
    traceback: str = ""
    attempts: list[str] = []
    known_issue: dict[str, Any] | None = None
    # Against the baseline run: regressed | fixed | still-failing | new; None without one.
    change: str | None = None
    baseline_status: str | None = None
    transitions: list[Transition] = []  # nearest first; the first is the one reported


class EnvironmentInfo(_Model):
    identity: str = ""
    reused: bool = False
    build_seconds: float = 0.0
    python: str = ""
    system: dict[str, str] = {}
    index: dict[str, Any] = {}


class CombinationResult(_Model):
    id: str
    tier: str
    requested: dict[str, str]
    resolved: dict[str, str] = {}
    status: str
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
    verdict: str | None = None
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
    source: str  # baseline | neighbour | known-issue
    text: str
    transition: Transition | None = None
    repro: str = ""


class Summary(_Model):
    verdicts: dict[str, int] = {}
    statuses: dict[str, int] = {}
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


def combination_status(cases: list[CaseResult]) -> str:
    outcomes = {c.outcome or c.status for c in cases}
    if outcomes & {"failed", "error", "crashed", "timed-out"}:
        return "failed"
    if not outcomes or outcomes <= {"skipped"}:
        return "skipped"
    return "passed"


# --------------------------------------------------------------------------- files


def write_text_atomic(path: Path, text: str) -> None:
    """Write-then-rename: a reader (or a kill -9) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private (0600); a report is for everyone to read.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def write_combination(results_dir: Path, result: CombinationResult) -> Path:
    path = results_dir / "combinations" / f"{result.id}.json"
    write_json_atomic(path, result.model_dump(mode="json"))
    return path


def read_combinations(results_dir: Path) -> dict[str, CombinationResult]:
    out: dict[str, CombinationResult] = {}
    folder = results_dir / "combinations"
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        data = _read_json(path)
        out[data.get("id", path.stem)] = _validate(CombinationResult, data, path)
    return out


def load_results(path: str | Path) -> Results:
    """results.json, or a directory holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    if not path.exists():
        raise UserError(f"{path}: no such results file")
    data = _read_json(path)
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != SCHEMA_VERSION:
        raise UserError(
            f"{path}: schema: {schema!r} is not a results schema this version reads "
            f"({SCHEMA_VERSION})"
        )
    return _validate(Results, data, path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read ({err.strerror})") from None


def _validate(model: type[BaseModel], data: Any, path: Path) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        raise UserError(f"{path}: {key_path(first['loc'])}: {first['msg']}") from None


# --------------------------------------------------------------------------- the directory


class ResultsDir:
    """A results directory that one run at a time writes.

    A fresh run moves the previous contents aside to ``<name>.previous`` (nothing
    recorded is thrown away by starting again); ``update`` replaces only the
    combinations it runs; ``resume`` keeps every finished combination and case.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def previous(self) -> Path:
        return self.path.with_name(f"{self.path.name}.previous")

    def combination_path(self, combination_id: str) -> Path:
        return self.path / "combinations" / f"{combination_id}.json"

    def records_path(self, combination_id: str) -> Path:
        return self.path / "records" / f"{combination_id}.jsonl"

    def log_path(self, combination_id: str, kind: str) -> Path:
        return self.path / "logs" / f"{combination_id}.{kind}.log"

    @contextlib.contextmanager
    def claimed(self, mode: Literal["fresh", "update", "resume"]) -> Iterator[ResultsDir]:
        """Hold the directory for one run; a second run gets a clear error instead
        of interleaving its files with ours."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(f".{self.path.name}.lock")
        with open(lock_path, "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise UserError(
                    f"{self.path}: another run is writing here ({holder}); "
                    "wait for it or pass a different --results directory"
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            try:
                if mode == "fresh" and self.path.exists() and any(self.path.iterdir()):
                    shutil.rmtree(self.previous, ignore_errors=True)
                    os.replace(self.path, self.previous)
                self.path.mkdir(parents=True, exist_ok=True)
                yield self
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)

    def merge(self, run: RunInfo, order: list[str]) -> Results:
        """results.json from the per-combination files, in matrix order."""
        found = read_combinations(self.path)
        ranked = sorted(
            found.values(), key=lambda c: (order.index(c.id) if c.id in order else len(order), c.id)
        )
        results = Results(run=run, combinations=ranked)
        write_json_atomic(self.path / "results.json", results.dump())
        return results
