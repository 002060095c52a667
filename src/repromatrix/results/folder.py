"""A results directory on disk: atomic files, one run at a time, the previous run
kept aside. The layout and the schema of what is in it: schema.py.

What a fresh run keeps of the runs before it (``<name>`` is e.g. ``latest``):

- ``<name>.previous`` is always the last *complete* run before this one: a run
  marks its folder ``.unfinished`` while it writes and removes the mark when its
  body ends normally, and only a folder without the mark becomes ``.previous``;
- an interrupted run (Ctrl-C, SIGTERM, a kill: the mark is still there) stays in
  ``<name>`` for ``--resume``; a fresh run started over it moves it to
  ``<name>.interrupted`` (replacing an older interrupted one), not over the
  previous complete run. A complete run, then two interrupted ones: the complete
  one is still ``.previous``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from repromatrix.errors import UserError, writable_folder
from repromatrix.redact import JsonRedactor, json_redactor, masked_already, redact, redact_text
from repromatrix.results.schema import (
    ID_PATTERN,
    CombinationResult,
    Results,
    RunInfo,
    read_model,
)

# Inside a results folder while a run writes it; still there when the run was cut off.
UNFINISHED = ".unfinished"

# --------------------------------------------------------------------------- files


def write_text_atomic(
    path: Path,
    text: str,
    *,
    durable: bool = True,
    scrub: Callable[[str], str] | None = None,
) -> None:
    """Write-then-rename: a reader (or a kill -9) never sees half a file. The
    files' door out of the tool: every secret is masked here (redact.py; ``scrub``:
    the same, its secrets read once for many files).
    ``durable``: flushed to the disk before the rename (a power cut keeps it); a merge
    of thousands of files that it can redo from its sources skips that for each."""
    data = (scrub(text) if scrub is not None else redact_text(text)).encode("utf-8")
    try:
        fd, tmp = _temporary(path)
    except FileNotFoundError:  # its folder made only when missing (not once a file)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary(path)
    try:
        try:  # the descriptor itself: no buffered file object around one write
            os.fchmod(fd, 0o644)  # a report is for everyone to read, whatever the umask
            left = memoryview(data)
            while left:
                left = left[os.write(fd, left) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _temporary(path: Path) -> tuple[int, str]:
    """A new file beside ``path`` to write it in, named for this process and thread (a
    merge writes thousands: mkstemp's random names cost more than the writing)."""
    folder, name = os.path.split(path)
    folder = folder or os.curdir  # a bare name: here
    tmp = f"{folder}{os.sep}.{name}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:  # O_EXCL: never an existing file, nor a link planted under that name
        return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
    except FileExistsError:  # left by a process of the same id, killed mid-write
        return tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")


def write_json_atomic(
    path: Path,
    data: Any,
    *,
    durable: bool = True,
    redactor: JsonRedactor | None = None,
    masked: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """``data`` (plain JSON data, or a pydantic model: see model_text) as json_text lays
    it out; returns the text written.

    Masked value by value first: a secret holding a quote or a backslash is spelt
    differently once in JSON text. (Only where the text may hold one: the walk costs
    seconds on a results.json of 2,000 combinations.) ``masked``: a list field of the
    model as the JSON lines of its objects, masked already (a merge's combinations, as
    it has just written their files): the rest is scanned, they are not again."""
    redactor = redactor or json_redactor()
    if isinstance(data, BaseModel) and masked:
        rest = data.model_copy(update={name: [] for name in masked})
        if not redactor.may_hold_secrets(model_text(rest)):
            text = model_text(data, masked)
            write_text_atomic(path, text, durable=durable, scrub=masked_already)
            return text
    text = model_text(data) if isinstance(data, BaseModel) else json_text(data)
    if redactor.may_hold_secrets(text):
        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json", by_alias=True)
        text = redactor.scrub(json_text(redact(data)))
    write_text_atomic(path, text, durable=durable, scrub=masked_already)
    return text


# Compact and ASCII, as pydantic's serializer writes JSON here (model_text); NaN and
# infinities as Python's json writes and reads them.
_compact = json.JSONEncoder(separators=(",", ":")).encode


def json_text(data: Any) -> str:
    """JSON as the results files are written: the top level's keys one a line, and a
    list of objects there one object a line (a combination, a case, a change), each
    line compact, by json's C encoder (indent= takes its Python path: seconds for a
    results.json of 2,000 combinations)."""
    if not isinstance(data, dict):
        return _compact(data) + "\n"
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            body = "[\n    " + ",\n    ".join(map(_compact, value)) + "\n  ]"
        else:
            body = _compact(value)
        lines.append(f"  {_compact(key)}:{body}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def model_text(model: BaseModel, objects: Mapping[str, Sequence[str]] | None = None) -> str:
    """``json_text(model.model_dump(mode="json", by_alias=True))``, each object of a
    list of models written by pydantic's serializer (in Rust) instead of a dict built
    and then walked in Python: a second saved on a results.json of 2,000 combinations.
    The same JSON (a float may spell its exponent otherwise). ``objects``: a list
    field's objects as JSON text already (one_line), in its order."""
    objects = objects or {}
    fields = type(model).model_fields
    listed = {
        name
        for name, value in model
        if isinstance(value, list) and value and all(isinstance(v, BaseModel) for v in value)
    } | set(objects)
    rest = model.model_dump(mode="json", by_alias=True, exclude=listed)
    lines = []
    for name, value in model:  # the fields in order, then what the file held besides
        key = (fields[name].alias or name) if name in fields else name
        if name in listed:
            texts = objects.get(name) or [
                item.model_dump_json(by_alias=True, ensure_ascii=True) for item in value
            ]
            body = "[\n    " + ",\n    ".join(texts) + "\n  ]" if texts else "[]"
        else:
            body = _compact(rest[key])
        lines.append(f"  {_compact(key)}:{body}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def one_line(text: str) -> str:
    """A JSON text on one line: json_text's layout of a combination becomes the line
    results.json holds for it. (A line break inside a JSON string is escaped: one in
    the text is whitespace between its tokens.)"""
    if "\r" in text:
        text = text.replace("\r", "")
    return _NEWLINES.sub("", text.strip())


_NEWLINES = re.compile(r"\n[\t\n ]*")  # a literal first: a fast search


def write_json_text(path: Path, text: str, redactor: JsonRedactor) -> str:
    """JSON text another run wrote (read and validated here), written as it is unless
    it may hold a secret: then re-encoded, masked value by value; returns the text
    written. Not flushed one by one (merge)."""
    if redactor.may_hold_secrets(text):
        text = redactor.scrub(json_text(redact(json.loads(text))))
    write_text_atomic(path, text, durable=False, scrub=masked_already)
    return text


def write_combination(
    results_dir: Path,
    result: CombinationResult,
    *,
    durable: bool = True,
    redactor: JsonRedactor | None = None,
) -> Path:
    path = combination_path(results_dir, result.id)
    write_json_atomic(path, result, durable=durable, redactor=redactor)
    return path


def combination_path(results_dir: Path, combination_id: str) -> Path:
    # The schema holds ids to safe names; checked again where one becomes a path.
    if not ID_PATTERN.match(combination_id):
        raise UserError(f"combination id {combination_id!r} is not a safe file name")
    return results_dir / "combinations" / f"{combination_id}.json"


def read_combinations(results_dir: Path) -> dict[str, CombinationResult]:
    return {cid: found for cid, (found, _text) in read_combination_files(results_dir).items()}


def read_combination_files(results_dir: Path) -> dict[str, tuple[CombinationResult, str]]:
    """combinations/<id>.json, each read once and validated: its result and its text."""
    out: dict[str, tuple[CombinationResult, str]] = {}
    folder = results_dir / "combinations"
    if not folder.is_dir():
        return out
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".json")):
        path = folder / name
        combination, text = read_model(path, CombinationResult)
        out[combination.id] = (combination, text)
    return out


# --------------------------------------------------------------------------- the directory


class ResultsDir:
    """A results directory that one run at a time writes.

    A fresh run moves the previous contents aside to ``<name>.previous`` when they
    are a complete run, to ``<name>.interrupted`` when they are not (the module's
    docstring); nothing recorded is thrown away by starting again. ``update``
    replaces only the combinations it runs; ``resume`` keeps every finished
    combination and case, and completes an interrupted run.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def previous(self) -> Path:
        """The last complete run before this one."""
        return self.path.with_name(f"{self.path.name}.previous")

    @property
    def interrupted(self) -> Path:
        """The last run cut off before it finished, that a fresh run replaced."""
        return self.path.with_name(f"{self.path.name}.interrupted")

    def unfinished(self) -> bool:
        """Whether the run in this folder was cut off (or is still writing)."""
        return (self.path / UNFINISHED).exists()

    def records_path(self, combination_id: str) -> Path:
        return self.path / "records" / f"{combination_id}.jsonl"

    def log_path(self, combination_id: str, kind: str) -> Path:
        return self.path / "logs" / f"{combination_id}.{kind}.log"

    @contextlib.contextmanager
    def claimed(self, mode: Literal["fresh", "update", "resume"]) -> Iterator[ResultsDir]:
        """Hold the directory for one run; a second run gets a clear error instead
        of interleaving its files with ours."""
        lock_path = self.path.with_name(f".{self.path.name}.lock")
        writable_folder(self.path, "results folder")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+")  # noqa: SIM115 (closed by the with below)
        except OSError as err:
            raise UserError(f"{self.path}: cannot write here ({err.strerror})") from None
        with handle:
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
                self._recover()
                if mode == "fresh" and self.path.exists() and any(self.path.iterdir()):
                    self._rotate()
                self.path.mkdir(parents=True, exist_ok=True)
                # A rerender or an --update of an interrupted run does not complete it;
                # a --resume does.
                was_cut_off = self.unfinished() and mode != "resume"
                (self.path / UNFINISHED).write_text(f"pid {os.getpid()}\n")
                yield self
                if not was_cut_off:  # reached only when the body ended normally
                    (self.path / UNFINISHED).unlink(missing_ok=True)
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _aside(self, kept: Path) -> Path:
        return kept.with_name(f".{kept.name}.old")

    def _recover(self) -> None:
        """A rotation killed between its two renames left the older run aside: put
        it back (or drop it, when the rotation had completed)."""
        for kept in (self.previous, self.interrupted):
            aside = self._aside(kept)
            if aside.exists() and not kept.exists():
                os.replace(aside, kept)
            shutil.rmtree(aside, ignore_errors=True)

    def _rotate(self) -> None:
        """latest -> latest.previous when it is a complete run, else ->
        latest.interrupted (a complete previous is never replaced by a partial run);
        the older one there is deleted last: killed at any point, both are as they
        were or the rotation is complete (one left aside is put back by the next
        claim)."""
        kept = self.interrupted if self.unfinished() else self.previous
        aside = self._aside(kept)
        if kept.exists():
            os.replace(kept, aside)
        os.replace(self.path, kept)
        shutil.rmtree(aside, ignore_errors=True)

    def merge(
        self,
        run: RunInfo,
        order: list[str],
        found: dict[str, CombinationResult] | None = None,
        lines: Mapping[str, str] | None = None,
    ) -> Results:
        """results.json from the per-combination files (``found``: what they hold, when
        the caller has it already), in matrix order. ``lines``: each combination's file
        as one line (one_line), masked as it was written: results.json holds those
        (when it has one for every combination), not scanned again."""
        found = read_combinations(self.path) if found is None else found
        position = {cid: i for i, cid in reversed(list(enumerate(order)))}
        ranked = sorted(found.values(), key=lambda c: (position.get(c.id, len(order)), c.id))
        results = Results(run=run, combinations=ranked)
        masked = None
        if lines is not None and all(c.id in lines for c in ranked):
            masked = {"combinations": [lines[c.id] for c in ranked]}
        write_json_atomic(self.path / "results.json", results, masked=masked)
        return results
