"""Run the cases of cases/ inside one built environment.

One interpreter per combination, not per case: importing torch + transformers +
peft costs ~11 s, the cases themselves a few seconds each. The interpreter is
supervised from outside through the records the cell plugin appends:

- a case that outlives its time limit: the process group is killed, the case is
  recorded as timed-out, and the remaining cases run in a fresh interpreter;
- an interpreter that dies mid-case (abort, segfault, OOM kill): the case is
  recorded as crashed with the signal, and the rest runs in a fresh interpreter;
- a failing case can be rerun in fresh interpreters: mixed outcomes are flaky; the
  same failure twice (``same_failure``) is deterministic and not run a third time.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repromatrix import procs
from repromatrix.environment import Environment
from repromatrix.errors import UserError
from repromatrix.execution._cell.signature import (
    Signature,
    is_signature,
    same_failure,
    signature_of_traceback,
)
from repromatrix.outcomes import COLLECTION_ID, RERUN_WORTHY, CaseOutcome
from repromatrix.redact import machine_places, redact, redact_text, shorten_paths

PLUGIN_DIR = Path(__file__).parent / "_cell"
PLUGIN = "repromatrix_cell_plugin"
POLL_SECONDS = 0.2
# What a script's run keeps of each of its streams (the head, then the last 64 KiB): a
# repro that prints 100 MB is recorded, not held in memory.
SCRIPT_OUTPUT_LIMIT = 2 * 1024 * 1024


@dataclass
class CaseRecord:
    id: str
    outcome: str  # passed | failed | error | skipped | crashed | timed-out | flaky
    seconds: float = 0.0
    error_type: str | None = None
    message: str = ""
    traceback: str = ""
    attempts: list[str] = field(default_factory=list)  # outcome of each run, first included
    # What a failing case died of (_cell/signature.py); None for a passing or skipped one.
    signature: Signature | None = None

    @classmethod
    def from_event(cls, event: Mapping, places: Mapping[str, str] = ()) -> CaseRecord:
        """A finished case as recorded, with secrets and this machine's folders
        taken out of its texts."""

        def clean(text: str | None) -> str:
            return shorten_paths(redact_text(text or ""), dict(places))

        record = cls(
            id=event["id"],
            outcome=event["outcome"],
            seconds=float(event.get("seconds") or 0.0),
            error_type=event.get("error_type"),
            message=clean(event.get("message")),
            traceback=clean(event.get("traceback")),
            attempts=[event["outcome"]],
        )
        if record.outcome not in _NO_FAILURE:
            record.signature = _signature(event.get("signature"), record, clean)
        return record


_NO_FAILURE = frozenset({CaseOutcome.PASSED, CaseOutcome.SKIPPED})


def _signature(
    stored: Mapping | None, record: CaseRecord, clean: Callable[[str | None], str]
) -> Signature:
    """The cell's signature with secrets masked (its key recomputed from what is kept);
    for a failure the cell could not sign (a time-out, a crash the harness records, a
    records file written before signatures), one from its traceback, else from its
    type and message."""
    if stored:
        frames = [clean(frame) for frame in stored.get("frames") or ()]
        return Signature.of(clean(stored.get("exception")), frames, clean(stored.get("message")))
    found = signature_of_traceback(record.traceback) if record.traceback else None
    return found or Signature.of(record.error_type or record.outcome, (), record.message)


@dataclass
class CaseRun:
    """What one pass over the cases produced."""

    cases: list[CaseRecord]
    collected: list[str]
    interpreters: int  # how many interpreters it took (1 + restarts)


Progress = Callable[[CaseRecord], None]


class CaseRunner:
    def __init__(
        self,
        env: Environment,
        cases_root: Path,
        *,
        case_timeout: float = 300.0,
        extra_env: Mapping[str, str] = (),
        workers: int = 1,
        log_path: Path | None = None,
        on_case: Progress | None = None,
    ) -> None:
        self.env = env
        # Absolute: pytest runs with cases/ as its working directory.
        self.cases_root = Path(cases_root).resolve()
        self.case_timeout = case_timeout
        self.extra_env = dict(extra_env)
        self.workers = workers
        self.log_path = log_path.resolve() if log_path is not None else None
        self.on_case = on_case or (lambda _record: None)
        # seen_from: pytest runs in cases/ and writes paths relative to it when shorter.
        self.places = machine_places(
            env=env.root, cases=self.cases_root, harness=PLUGIN_DIR, seen_from=self.cases_root
        )

    # ------------------------------------------------------------------ public

    def run(
        self,
        selection: Sequence[str],
        records_path: Path,
        *,
        reruns: int = 0,
        rerun_wanted: Callable[[str], bool] = lambda _case_id: True,
    ) -> CaseRun:
        """Run the selection (pytest node ids or paths, relative to cases/; all of it
        when empty), resuming from whatever ``records_path`` already holds. Failing
        cases that ``rerun_wanted`` accepts run again, up to ``reruns`` times."""
        records_path = records_path.resolve()  # the cell writes it from inside cases/
        first = self._run_to_completion(list(selection), records_path)
        if reruns > 0:
            self._rerun_failures(first, records_path, reruns, rerun_wanted)
        return first

    # ------------------------------------------------------------------ passes

    def _run_to_completion(self, selection: list[str], records_path: Path) -> CaseRun:
        records_path.parent.mkdir(parents=True, exist_ok=True)
        records_path.touch()
        interpreters = 0
        last: _State | None = None
        while True:
            state = _read_records(records_path, self.places)
            if state.collected is not None and not state.remaining():
                break
            if last is not None and len(state.finished) == len(last.finished):
                break  # an interpreter that ended without finishing anything: no loop
            last = state
            interpreters += 1
            self._one_interpreter(selection, records_path, state)
        state = _read_records(records_path, self.places)
        cases = [state.finished[i] for i in state.order() if i in state.finished]
        return CaseRun(cases=cases, collected=state.collected or [], interpreters=interpreters)

    def _rerun_failures(
        self,
        first: CaseRun,
        records_path: Path,
        reruns: int,
        wanted: Callable[[str], bool],
    ) -> None:
        by_id = {case.id: case for case in first.cases}
        candidates = [c.id for c in first.cases if "::" in c.id and wanted(c.id)]
        for attempt in range(1, reruns + 1):
            # A case that passed once is flaky already: no need to run it again.
            failing = [i for i in candidates if by_id[i].outcome in RERUN_WORTHY]
            if not failing:
                return
            path = records_path.with_suffix(f".rerun{attempt}.jsonl")
            path.unlink(missing_ok=True)
            rerun = self._run_to_completion(failing, path)
            for again in rerun.cases:
                case = by_id.get(again.id)
                if case is None:
                    continue
                if again.outcome == case.outcome and same_failure(case.signature, again.signature):
                    # The same failure twice in fresh interpreters: deterministic, and
                    # a third run would only cost its time (a torch import and more).
                    candidates.remove(again.id)
                case.attempts.append(again.outcome)
                if again.outcome == "passed" and case.outcome != "flaky":
                    case.outcome = "flaky"
                    case.message = (
                        f"passed on rerun {attempt} after {case.attempts[0]}: {case.message}"
                    )

    # ------------------------------------------------------------------ one interpreter

    def _one_interpreter(self, selection: list[str], records_path: Path, state: _State) -> None:
        done_path = records_path.with_suffix(".done.json")
        done_path.write_text(json.dumps(sorted(state.finished)))
        cmd = [
            str(self.env.python),
            "-m",
            "pytest",
            "-p",
            PLUGIN,
            "-p",
            "no:cacheprovider",
            "-q",
            "--no-header",
            "-rN",
            "--tb=short",
            "-o",
            "console_output_style=classic",
            # Case ids are relative to cases/ (what matrix.yaml, known_issues.yaml and the
            # reports name), whichever ini file pytest finds above it: a project's own
            # pyproject.toml with [tool.pytest.ini_options] would make them cases/....
            "--rootdir",
            str(self.cases_root),
        ]
        if self.workers > 1:
            cmd += ["-n", str(self.workers)]
        cmd += selection
        env = self.env.subprocess_env(
            {
                **self.extra_env,
                "PYTHONPATH": str(PLUGIN_DIR),
                "REPROMATRIX_RECORDS": str(records_path),
                "REPROMATRIX_DONE": str(done_path),
                "PYTHONFAULTHANDLER": "1",  # a segfault leaves a Python traceback in the log
            }
        )
        log = open(self.log_path, "a") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            if self.log_path:
                log.write(f"\n$ {' '.join(cmd[1:])}\n")
                log.flush()
            reader = _Follower(records_path)  # before the launch: no event goes unseen
            with procs.started(
                cmd, cwd=self.cases_root, env=env, stdout=log, stderr=subprocess.STDOUT
            ) as proc:
                self._supervise(proc, records_path, reader)
        finally:
            if self.log_path:
                log.close()
                text = redact_text(self.log_path.read_text(errors="replace"))
                self.log_path.write_text(shorten_paths(text, self.places))
            # The cell writes its records from inside the environment, where this
            # package is not importable: they are masked here, once it has ended.
            _redact_records(records_path)

    def _supervise(self, proc: subprocess.Popen, records_path: Path, reader: _Follower) -> None:
        launched = time.monotonic()
        started: dict[str, float] = {}  # case id -> when we saw it start
        try:
            while True:
                self._follow(reader, started)
                now = time.monotonic()
                overdue = [i for i, t in started.items() if now - t > self.case_timeout]
                if not started and not reader.collected and now - launched > self.case_timeout:
                    overdue = [COLLECTION_ID]
                if overdue:
                    procs.kill_group(proc)
                    proc.wait()
                    for case_id in overdue:
                        self._append_verdict(
                            records_path,
                            case_id,
                            "timed-out",
                            f"no result after {self.case_timeout:.0f} s; killed",
                        )
                    return
                if proc.poll() is not None:
                    break
                procs.check_cancelled()
                time.sleep(POLL_SECONDS)
        except BaseException:
            procs.kill_group(proc)
            proc.wait()
            raise
        procs.kill_group(proc)  # stray children (DDP ranks, xdist workers) go with it
        # Killed because the run was interrupted: not a crash, record nothing (the
        # case runs again on --resume).
        procs.check_cancelled()
        self._follow(reader, started)
        code = proc.returncode
        if started:
            signal = procs.signal_name(code)
            how = f"killed by {signal}" if signal else f"exited with status {code}"
            for case_id in started:
                self._append_verdict(
                    records_path,
                    case_id,
                    "crashed",
                    f"the interpreter died during this case ({how})",
                    error_type=signal or "Exit",
                )
        elif code not in (0, 1, 5) and not reader.ended:  # pytest gave up, naming no case
            signal = procs.signal_name(code)
            how = f"killed by {signal}" if signal else f"pytest exited with status {code}"
            tail = self._log_tail()
            self._append_verdict(
                records_path,
                COLLECTION_ID,
                "crashed" if signal else "error",
                f"no case ran: {how}. {tail}",
                error_type=signal or "PytestError",
            )

    def _follow(self, reader: _Follower, started: dict[str, float]) -> None:
        for event in reader.new_events():
            if event["event"] == "start":
                started[event["id"]] = time.monotonic()
            elif event["event"] == "end":
                started.pop(event["id"], None)
                self.on_case(CaseRecord.from_event(event, self.places))

    def _append_verdict(
        self,
        records_path: Path,
        case_id: str,
        outcome: str,
        message: str,
        error_type: str | None = None,
    ) -> None:
        record = {
            "event": "end",
            "id": case_id,
            "outcome": outcome,
            "seconds": 0.0,
            "error_type": error_type or outcome,
            "message": message,
            "traceback": "",
            "t": time.time(),
        }
        with open(records_path, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        self.on_case(CaseRecord.from_event(record, self.places))

    def _log_tail(self) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        lines = [ln for ln in self.log_path.read_text().splitlines() if ln.strip()]
        return shorten_paths(redact_text(" | ".join(lines[-3:])), self.places)[:1000]


# --------------------------------------------------------------------------- records


class _Follower:
    """Reads the complete lines appended to a records file since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.exists() else 0
        self.collected = False
        self.ended = False

    def new_events(self) -> list[dict]:
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        events = [json.loads(line) for line in complete.splitlines() if line.strip()]
        self.collected = self.collected or any(e["event"] == "collected" for e in events)
        self.ended = self.ended or any(e["event"] == "end" for e in events)
        return events


@dataclass
class _State:
    collected: list[str] | None
    finished: dict[str, CaseRecord]

    def remaining(self) -> list[str]:
        return [i for i in self.collected or () if i not in self.finished]

    def order(self) -> list[str]:
        extra = [i for i in self.finished if i not in (self.collected or ())]
        return [*extra, *(self.collected or ())]


def _redact_records(path: Path) -> None:
    """Rewrite a records file with every secret masked (write-then-rename)."""
    if not path.exists():
        return
    out: list[str] = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            out.append(json.dumps(redact(json.loads(line))))
        except (json.JSONDecodeError, RecursionError):
            out.append(redact_text(line))
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("".join(f"{line}\n" for line in out))
    tmp.replace(path)


_OUTCOMES = frozenset(o.value for o in CaseOutcome)


def _record_event(path: Path, number: int, line: str) -> dict | None:
    """One records line as an event; None for a line a kill cut short (its case
    reruns). Anything else that is not a record is refused in one line: resuming
    from a file we did not write would record results nobody ran."""
    where = f"{path}:{number}"
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        if line.lstrip().startswith("{"):
            return None
        raise UserError(f"{where}: not a JSON object: {line[:60]!r}") from None
    except RecursionError:
        raise UserError(f"{where}: nested too deeply to be a record") from None
    if not isinstance(event, dict):
        raise UserError(f"{where}: not a JSON object: {line[:60]!r}")
    kind = event.get("event")
    if kind == "collected":
        ids = event.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise UserError(f"{where}: ids: {ids!r} is not a list of case ids")
    elif kind == "end":
        if not isinstance(event.get("id"), str):
            raise UserError(f"{where}: id: {event.get('id')!r} is not a case id")
        outcome = event.get("outcome")
        if not isinstance(outcome, str) or outcome not in _OUTCOMES:
            raise UserError(
                f"{where}: outcome: {event.get('outcome')!r} is not an outcome "
                f"({', '.join(sorted(_OUTCOMES))})"
            )
        seconds = event.get("seconds")
        number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
        if seconds is not None and not number:
            raise UserError(f"{where}: seconds: {seconds!r} is not a number")
        for key in ("message", "traceback", "error_type"):
            if event.get(key) is not None and not isinstance(event[key], str):
                raise UserError(f"{where}: {key}: {event[key]!r} is not text")
        if not is_signature(event.get("signature")):
            raise UserError(f"{where}: signature: {event['signature']!r:.80} is not a signature")
    return event


def check_records(path: Path) -> None:
    """A records file a resumed run would continue from, refused in one line when
    any line of it is not a record (UserError)."""
    _read_records(path, {})


def _read_records(path: Path, places: Mapping[str, str]) -> _State:
    collected: list[str] | None = None
    finished: dict[str, CaseRecord] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start}): not a records file") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        event = _record_event(path, number, line)
        if event is None:
            continue
        kind = event.get("event")
        if kind == "collected":
            ids = list(event["ids"])
            # A restarted interpreter collects only what is left: keep the first list.
            collected = (
                ids if collected is None else collected + [i for i in ids if i not in collected]
            )
        elif kind == "end":
            finished.setdefault(event["id"], CaseRecord.from_event(event, places))
    return _State(collected=collected, finished=finished)


def run_script(
    env: Environment,
    script: Path,
    *,
    timeout: float,
    extra_env: Mapping[str, str] = (),
    cwd: Path | None = None,
) -> procs.Completed:
    """Run a standalone repro script with the cell's interpreter (bisect --script); its
    output is kept in bounded files, never whole in memory (SCRIPT_OUTPUT_LIMIT)."""
    return procs.run(
        [str(env.python), str(script)],
        env=env.subprocess_env(extra_env),
        timeout=timeout,
        cwd=cwd or script.parent,
        output_limit=SCRIPT_OUTPUT_LIMIT,
    )
