"""pytest plugin loaded *inside a cell* (``-p repromatrix_cell_plugin``).

It must run on whatever the cell has installed, so it uses the standard library and
pytest only, and its folder holds nothing else (the cell's PYTHONPATH points here).

It appends one JSON line per event to $REPROMATRIX_RECORDS as soon as the event
happens, with a single unbuffered write on an O_APPEND descriptor, so that the
harness can follow the run live and lose nothing when the interpreter dies:

    {"event": "collected", "ids": [...]}
    {"event": "start", "id": ...}
    {"event": "end", "id": ..., "outcome": ..., "seconds": ..., "error_type": ...,
     "message": ..., "traceback": ..., "signature": ...}

A failing case's ``signature`` (signature.py, beside it: exception, frames, masked
message, key) is computed here from the live exception, where the frames are; a
failure with no exception to hand (a collection error, a crashed xdist worker) gets
it from its report's text.

Cases listed in the JSON file $REPROMATRIX_DONE are deselected: a run restarted
after a crash, or resumed after an interruption, runs only what is missing.

It brings the requirement markers (gpu, requires, unsloth) with it:
repromatrix_markers.py, beside it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest


def _beside(module: str, name: str):
    """A module of this folder under a name of ours: on the cell's PYTHONPATH a plain
    ``signature`` would shadow a package of that name the cases may import."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(module))
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded  # dataclasses look their module up while defining
        spec.loader.exec_module(loaded)
    return sys.modules[name]


_signature = _beside("signature.py", "repromatrix_signature")

# The markers every cell knows, whatever cases/ it runs (a project's own included).
pytest_plugins = ["repromatrix_markers"]

MESSAGE_LIMIT = 4000
TRACEBACK_LIMIT = 8000
_CRASHED_WORKER = re.compile(r"worker '?gw\d+'? crashed while running")


class _Recorder:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.phases: dict[str, list] = {}

    def write(self, record: dict) -> None:
        record.setdefault("t", time.time())
        os.write(self.fd, (json.dumps(record) + "\n").encode())


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # an xdist worker: the controller records


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.get("REPROMATRIX_RECORDS")
    if path and not _is_worker(config):
        config._repromatrix = _Recorder(path)  # type: ignore[attr-defined]


def _recorder(config: pytest.Config) -> _Recorder | None:
    return getattr(config, "_repromatrix", None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    done_file = os.environ.get("REPROMATRIX_DONE")
    if not done_file or not os.path.exists(done_file):
        return
    with open(done_file) as handle:
        done = set(json.load(handle))
    keep = [item for item in items if item.nodeid not in done]
    dropped = [item for item in items if item.nodeid in done]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    recorder = _recorder(session.config)
    if recorder is not None and not session.config.pluginmanager.hasplugin("dsession"):
        recorder.write({"event": "collected", "ids": [item.nodeid for item in session.items]})


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids) -> None:
    recorder = _recorder(node.config)
    if recorder is not None and not getattr(recorder, "announced", False):
        recorder.announced = True  # type: ignore[attr-defined]
        recorder.write({"event": "collected", "ids": list(ids)})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        config = _CONFIG.get("config")
        recorder = _recorder(config) if config is not None else None
        if recorder is not None:
            text = str(report.longrepr)
            recorder.write(
                {
                    "event": "end",
                    "id": report.nodeid or "<collection>",
                    "outcome": "error",
                    "seconds": 0.0,
                    "error_type": "CollectionError",
                    "message": _last_error_line(text)[:MESSAGE_LIMIT],
                    "traceback": text[-TRACEBACK_LIMIT:],
                    "signature": _text_signature(text, "CollectionError"),
                }
            )


_CONFIG: dict[str, pytest.Config] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _CONFIG["config"] = session.config


def pytest_runtest_logstart(nodeid: str, location) -> None:
    recorder = _recorder(_CONFIG["config"])
    if recorder is not None:
        recorder.phases[nodeid] = []
        recorder.write({"event": "start", "id": nodeid, "pid": os.getpid()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failing phase's signature, from the live exception. Kept on the report as a
    plain attribute: xdist carries a report's JSON-able attributes to the controller."""
    made = yield
    report = made.get_result()
    failed = report.failed or (hasattr(report, "wasxfail") and report.skipped)
    if call.excinfo is not None and failed:
        try:
            found = _signature.signature_of_exception(call.excinfo.value)
            report.repromatrix_signature = found.as_dict()
        except Exception:  # never lose a result over its signature: the text has one
            pass


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    recorder = _recorder(_CONFIG["config"])
    if recorder is not None:
        recorder.phases.setdefault(report.nodeid, []).append(report)


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    recorder = _recorder(_CONFIG["config"])
    if recorder is None:
        return
    reports = recorder.phases.pop(nodeid, [])
    recorder.write({"event": "end", "id": nodeid, **_summarize(reports)})


def _summarize(reports: list) -> dict:
    seconds = round(sum(getattr(r, "duration", 0.0) for r in reports), 3)
    record = {
        "outcome": "passed",
        "seconds": seconds,
        "error_type": None,
        "message": _observations(reports),
        "traceback": "",
    }
    for report in reports:
        if report.skipped and not hasattr(report, "wasxfail"):
            reason = (
                report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            )
            reason = reason.removeprefix("Skipped: ")
            return {**record, "outcome": "skipped", "message": reason[:MESSAGE_LIMIT]}
        if report.failed or (hasattr(report, "wasxfail") and report.skipped):
            text = str(report.longrepr)
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else _last_error_line(text)
            if _CRASHED_WORKER.search(text):
                outcome = "crashed"
            elif report.when == "call" or hasattr(report, "wasxfail"):
                outcome = "failed"
            else:
                outcome = "error"  # setup or teardown went wrong, not the case itself
            error_type, _, rest = message.partition(": ")
            if not re.fullmatch(r"[A-Za-z_][\w.]*", error_type):
                error_type, rest = (
                    "AssertionError" if message.startswith("assert") else None,
                    message,
                )
            signature = getattr(report, "repromatrix_signature", None)
            return {
                **record,
                "outcome": outcome,
                "error_type": error_type,
                "message": (rest or message)[:MESSAGE_LIMIT],
                "traceback": text[-TRACEBACK_LIMIT:],
                "signature": signature or _text_signature(text, error_type or outcome),
            }
    return record


def _observations(reports: list) -> str:
    """A passing case's message: what it recorded with pytest's ``record_property``
    (e.g. the exact text of an error it expects, which changes across versions).
    Every phase's report carries the properties recorded so far: the last has them all."""
    properties = getattr(reports[-1], "user_properties", []) if reports else []
    return "\n".join(f"{name}: {value}" for name, value in properties)[:MESSAGE_LIMIT]


def _text_signature(text: str, fallback: str) -> dict:
    """A failure's signature from its text; with no error line in it, the fallback
    name and the text's last line."""
    found = _signature.signature_of_traceback(text)
    if found is None:
        found = _signature.Signature.of(fallback, (), _last_error_line(text))
    return found.as_dict()


def _last_error_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("E "):
            return line[1:].strip()
    return lines[-1].strip() if lines else ""
