"""Many results directories -> one (``repromatrix merge --into DIR SOURCE...``).

The nightly workflow runs each combination as its own CI job, each uploading its
own results directory; the gathering job downloads them all and merges them here
before rendering one report. Safely:

- the target is claimed like a run claims it (a run or another merge writing
  there gets a one-line error, never interleaved files);
- every source file is validated against the schema before anything is written;
- a combination found twice with different results is an error naming both
  places (a re-run job's artifact and the original, say), unless ``replace``;
  the same file twice (an artifact downloaded twice) is fine;
- each combination file is written atomically, results.json last, in matrix order;
- given the combinations the tier holds (``expected``: ``merge --tier``), one that no
  source holds (its job was killed, lost its runner, was cancelled) is written as a
  ``lost`` result naming that job, never left out; a real result replaces a lost one
  in a later merge (a re-run job's artifact). With ``expected``, a source that holds
  nothing (every job lost) is not an error: its combinations are lost.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repromatrix import __version__
from repromatrix.errors import UserError
from repromatrix.outcomes import CombinationStatus
from repromatrix.redact import json_redactor
from repromatrix.results.bulk import without_cycle_collection
from repromatrix.results.folder import (
    ResultsDir,
    combination_path,
    one_line,
    read_combination_files,
    read_combinations,
    write_json_atomic,
    write_json_text,
)
from repromatrix.results.schema import (
    SCHEMA_VERSION,
    CombinationResult,
    Results,
    RunInfo,
    load_results,
    read_json,
    text_within,
    validate,
)


@dataclass(frozen=True)
class Expected:
    """A combination the tier holds, and the CI job that was to run it."""

    id: str
    tier: str
    requested: dict[str, str]
    job: str  # as a person finds it in the run's page: "slice_1 / part 3 (c0042, c0043)"
    device: str = "cpu"
    repro: str = ""

    def lost(self) -> CombinationResult:
        # Everything the tier says of it; the job's name goes into the message.
        known = ("id", "tier", "requested", "device", "repro")
        return CombinationResult(
            **{name: getattr(self, name) for name in known},
            status=CombinationStatus.LOST,
            message=f"no result came back from its job, {self.job}: the job was killed "
            "(out of memory?), lost its runner or was cancelled",
        )


@dataclass(frozen=True)
class Source:
    path: Path
    run: RunInfo | None
    combinations: dict[str, CombinationResult]
    texts: dict[str, str]  # combinations/<id>.json as read here (validated), by id


def is_results_dir(path: Path) -> bool:
    return (path / "combinations").is_dir() or (path / "results.json").is_file()


def find_results_dirs(path: Path) -> list[Path]:
    """``path`` itself when it is a results directory, else the results
    directories inside it, two levels deep at most (actions/download-artifact
    puts each artifact in a folder of its own)."""
    if not path.exists():
        raise UserError(f"{path}: no such results directory")
    if is_results_dir(path):
        return [path]
    found: list[Path] = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        if is_results_dir(child):
            found.append(child)
        else:
            found += [g for g in sorted(child.iterdir()) if g.is_dir() and is_results_dir(g)]
    if not found:
        raise UserError(f"{path}: holds no results (no combinations/ or results.json)")
    return found


def read_source(path: Path) -> Source:
    """A results directory's combinations (each file read once and validated) and run.
    Its results.json holds them again: only those without a file of their own are
    validated from it (combinations/<id>.json is the newer copy when both exist)."""
    files = read_combination_files(path)
    combinations = {cid: combination for cid, (combination, _text) in files.items()}
    run = None
    if (path / "results.json").is_file():
        run = _run_of_copies(path / "results.json", combinations)
    if run is None and (path / "results.json").is_file():
        data = read_json(path / "results.json")
        schema = data.get("schema") if isinstance(data, dict) else None
        if schema != SCHEMA_VERSION:
            load_results(path)  # its one line: not a results schema this version reads
        listed = data.get("combinations") or []
        others = [
            c
            for c in (listed if isinstance(listed, list) else [listed])
            if not isinstance(c, dict) or c.get("id") not in combinations
        ]
        try:
            results = validate(Results, {**data, "combinations": others}, path / "results.json")
        except UserError:
            load_results(path)  # the same mistake, named where it is in the file
            raise
        run = results.run
        for combo in results.combinations:
            combinations.setdefault(combo.id, combo)
    texts = {cid: text for cid, (_combination, text) in files.items()}
    return Source(path=path, run=run, combinations=combinations, texts=texts)


class _Copy(BaseModel):
    """A combination in a job's results.json that has a file of its own: its id read."""

    model_config = ConfigDict(extra="ignore")
    id: str


class _Copies(Results):
    combinations: list[_Copy] = Field(default_factory=list)  # type: ignore[assignment]


def _run_of_copies(file: Path, have: Mapping[str, CombinationResult]) -> RunInfo | None:
    """A job's results.json read the short way when every combination it holds has a
    file of its own (as every job writes it): validated from its bytes by pydantic, the
    copies parsed but not kept, the depth bounded from its text (text_within), as the
    long way bounds it. None: read it the long way (a combination only it holds, or
    anything refused, whose one line the long way writes)."""
    try:
        raw = file.read_bytes()
        raw.decode("utf-8")
        listing = _Copies.model_validate_json(raw)
    except (OSError, UnicodeDecodeError, ValidationError):
        return None
    if not all(copy.id in have for copy in listing.combinations) or not text_within(raw):
        return None
    return listing.run


@without_cycle_collection
def merge(
    into: Path,
    sources: Sequence[Path],
    *,
    order: Sequence[str] = (),
    replace: bool = False,
    expected: Sequence[Expected] = (),
) -> Results:
    read = [read_source(d) for path in sources for d in _results_dirs(path, bool(expected))]
    target = ResultsDir(into.resolve())
    with target.claimed("update"):
        chosen: dict[str, tuple[CombinationResult, Path]] = {
            cid: (combo, target.path) for cid, combo in read_combinations(target.path).items()
        }
        incoming: set[str] = set()
        texts: dict[Path, dict[str, str]] = {source.path: source.texts for source in read}
        for source in read:
            for cid, combo in source.combinations.items():
                if cid in chosen and _same(chosen[cid][0], combo):
                    incoming.add(cid)
                    continue
                lost = chosen[cid][0].status == CombinationStatus.LOST if cid in chosen else False
                if cid in chosen and not (replace or lost):
                    raise UserError(
                        f"{source.path}: combination {cid!r} is also in {chosen[cid][1]} with "
                        "different results (pass --replace to keep the last one given)"
                    )
                chosen[cid] = (combo, source.path)
                incoming.add(cid)
        # Each file as a run writes it, but not flushed one by one (thousands, in a
        # nightly of a large tier): results.json, written last, is; a merge cut off
        # before it is done again from its sources.
        redactor = json_redactor()
        listed: dict[Path, dict] = {}  # each source's logs, listed once
        lines: dict[str, str] = {}  # each file as written, masked: results.json's lines
        for cid in sorted(incoming):
            combo, origin = chosen[cid]
            if origin == target.path:
                continue
            path = combination_path(target.path, cid)
            if cid in texts[origin]:  # read and validated: written as it is
                written = write_json_text(path, texts[origin][cid], redactor)
            else:
                written = write_json_atomic(path, combo, durable=False, redactor=redactor)
            lines[cid] = one_line(written)
            _copy_logs(origin, target, cid, listed)
        for wanted in expected:
            if wanted.id not in chosen or chosen[wanted.id][0].status == CombinationStatus.LOST:
                lost = wanted.lost()
                path = combination_path(target.path, lost.id)
                written = write_json_atomic(path, lost, durable=False, redactor=redactor)
                lines[lost.id] = one_line(written)
                chosen[wanted.id] = (lost, target.path)
        order = list(order) or [wanted.id for wanted in expected]
        found = {cid: combo for cid, (combo, _origin) in chosen.items()}
        return target.merge(_merged_run(read), order, found, lines)


def _results_dirs(path: Path, tolerate_none: bool) -> list[Path]:
    """find_results_dirs; with the tier's combinations known, a source that holds none
    (no artifact came back) gives none: each of its combinations is then lost."""
    try:
        return find_results_dirs(path)
    except UserError:
        if tolerate_none and (not path.exists() or path.is_dir()):
            return []
        raise


def _same(a: CombinationResult, b: CombinationResult) -> bool:
    return a.model_dump(mode="json") == b.model_dump(mode="json")


def _copy_logs(
    origin: Path, target: ResultsDir, combination_id: str, listed: dict[Path, dict]
) -> None:
    if origin not in listed:
        listed[origin] = _logs(origin)
    for log in listed[origin].get(combination_id, ()):
        destination = target.path / "logs" / log.name
        destination.parent.mkdir(parents=True, exist_ok=True)
        tmp = destination.with_name(f".{log.name}.tmp")
        shutil.copyfile(log, tmp)
        tmp.replace(destination)


def _logs(origin: Path) -> dict[str, list[Path]]:
    """A results directory's logs by combination id (<id>.<kind>.log), listed once."""
    found: dict[str, list[Path]] = {}
    folder = origin / "logs"
    if folder.is_dir():
        for log in sorted(folder.iterdir()):
            combination_id, _, kind = log.name.rpartition(".")[0].rpartition(".")
            if combination_id and kind and log.name.endswith(".log"):
                found.setdefault(combination_id, []).append(log)
    return found


def _merged_run(sources: Sequence[Source]) -> RunInfo:
    """One run record for results that many jobs produced: the common facts where
    they agree, the span of time, and where each part came from."""
    runs = [s.run for s in sources if s.run is not None]

    def common(field: str) -> object:
        values = {getattr(r, field) for r in runs}
        return values.pop() if len(values) == 1 else None

    info = RunInfo(
        id=uuid.uuid4().hex[:12],
        started=min((r.started for r in runs if r.started), default=""),
        finished=max((r.finished for r in runs if r.finished), default=""),
        tier=common("tier"),  # type: ignore[arg-type]
        matrix=common("matrix") or "",  # type: ignore[arg-type]
        matrix_sha256=common("matrix_sha256") or "",  # type: ignore[arg-type]
        repromatrix=__version__,
        cases_commit=common("cases_commit"),  # type: ignore[arg-type]
        command="repromatrix merge",
        host=runs[0].host if runs else {},
    )
    info.merged_from = [  # type: ignore[attr-defined]
        {
            "run": s.run.id if s.run else None,
            "host": s.run.host if s.run else {},
            "combinations": sorted(s.combinations),
        }
        for s in sources
    ]
    return info
