"""Stored results are validated on read: `report`, `merge` and `run --resume` refuse
a file a run did not write in one line naming the file and the key (exit 2), and
`merge` never writes outside --into, whatever ids an artifact holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from repromatrix.cli import main
from repromatrix.results import CaseResult, CombinationResult, Results, write_json_atomic

CASE = "test_a.py::test_x"


def _good(folder: Path) -> Path:
    combo = CombinationResult(
        id="tf-a",
        tier="t",
        requested={"transformers": "4.56.2"},
        resolved={"transformers": "4.56.2"},
        status="failed",
        cases=[CaseResult(id=CASE, status="failed", outcome="failed", attempts=["failed"])],
    )
    write_json_atomic(folder / "results.json", Results(combinations=[combo]).dump())
    write_json_atomic(folder / "combinations" / "tf-a.json", combo.model_dump(mode="json"))
    return folder


def _edit(key: str, value: Any) -> Callable[[dict], None]:
    """Set a key path ('combinations.0.cases.0.outcome') in a results document."""

    def edit(doc: dict) -> None:
        *parents, last = key.split(".")
        for part in parents:
            doc = doc[int(part)] if part.isdigit() else doc[part]  # type: ignore[assignment]
        doc[int(last) if last.isdigit() else last] = value  # type: ignore[index]

    return edit


def _nest(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


# name -> (how results.json is spoilt, words its one line must hold)
SPOILT: dict[str, tuple[Callable[[dict], None], tuple[str, ...]]] = {
    "case-outcome-in-capitals": (
        _edit("combinations.0.cases.0.outcome", "FAILED"),
        ("combinations[0].cases[0].outcome", "FAILED"),
    ),
    "unknown-case-status": (
        _edit("combinations.0.cases.0.status", "borked"),
        ("combinations[0].cases[0].status", "borked"),
    ),
    "unknown-attempt": (
        _edit("combinations.0.cases.0.attempts", ["failed", "meh"]),
        ("combinations[0].cases[0].attempts[1]", "meh"),
    ),
    "unknown-combination-status": (
        _edit("combinations.0.status", "green"),
        ("combinations[0].status", "green"),
    ),
    "unknown-verdict": (
        _edit("combinations.0.verdict", "FINE"),
        ("combinations[0].verdict", "FINE"),
    ),
    "unknown-summary-verdict": (
        _edit("summary", {"verdicts": {"ALRIGHT": 1}}),
        ("summary.verdicts.ALRIGHT", "ALRIGHT"),
    ),
    "id-that-is-a-path": (
        _edit("combinations.0.id", "../../escape"),
        ("combinations[0].id", "../../escape"),
    ),
    "id-that-is-absolute": (
        _edit("combinations.0.id", "/tmp/escape"),
        ("combinations[0].id", "/tmp/escape"),
    ),
    "cases-not-a-list": (
        _edit("combinations.0.cases", "all"),
        ("combinations[0].cases", "all"),
    ),
    "seconds-not-a-number": (
        _edit("combinations.0.cases.0.seconds", "fast"),
        ("combinations[0].cases[0].seconds", "fast"),
    ),
    "nested-absurdly-deep": (
        _edit("combinations.0.extra", _nest(200)),
        ("combinations[0].extra", "nested more than"),
    ),
    "schema-2": (_edit("schema", 2), ("schema", "2")),
}


def _spoil(folder: Path, how: Callable[[dict], None]) -> Path:
    path = folder / "results.json"
    doc = json.loads(path.read_text())
    how(doc)
    path.write_text(json.dumps(doc))
    (folder / "combinations" / "tf-a.json").unlink()  # results.json alone holds it
    return path


def _one_line(capsys, code: int, *words: str) -> str:
    captured = capsys.readouterr()
    assert code == 2, captured.err + captured.out
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("name", list(SPOILT))
def test_report_refuses_spoilt_results(tmp_path: Path, capsys, name: str) -> None:
    how, words = SPOILT[name]
    path = _spoil(_good(tmp_path / "r"), how)
    before = path.read_bytes()
    code = main(["report", "--results", str(path.parent), "--matrix", str(tmp_path / "m.yaml")])
    _one_line(capsys, code, "results.json", *words)
    assert path.read_bytes() == before  # nothing rewritten
    assert not (path.parent / "summary.md").exists()


@pytest.mark.parametrize("name", list(SPOILT))
def test_merge_refuses_spoilt_results(tmp_path: Path, capsys, name: str) -> None:
    how, words = SPOILT[name]
    _spoil(_good(tmp_path / "artifact"), how)
    into = tmp_path / "merged"
    code = main(["merge", "--into", str(into), str(tmp_path / "artifact")])
    _one_line(capsys, code, "results.json", *words)
    assert not into.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["artifact"]  # nothing escaped


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'{"schema": 1, "run": {"id": "caf\xe9"}}', ("not UTF-8",)),
        (b"[" * 100_000 + b"]" * 100_000, ("nested",)),
        (b"[1, 2]", ("schema",)),
        (b'{"schema": 1, "combinations": [1]', ("not valid JSON",)),
    ],
    ids=["latin-1", "nested-100000", "a-list", "cut-short"],
)
def test_files_that_are_not_results(tmp_path: Path, capsys, content: bytes, words) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "results.json").write_bytes(content)
    code = main(["report", "--results", str(folder)])
    _one_line(capsys, code, "results.json", *words)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'["tf-a"]', ("tf-a.json", "Input should be")),
        (b'{"id": "../../x", "tier": "t", "requested": {}, "status": "passed"}', ("../../x",)),
        (b'{"id": "tf-a", "tier": "t", "requested": {}, "status": "PASSED"}', ("status",)),
        (b"\xff\xfe{}", ("not UTF-8",)),
    ],
    ids=["a-list", "id-escapes", "status-in-capitals", "utf-16"],
)
def test_merge_refuses_a_spoilt_combination_file(tmp_path, capsys, content, words) -> None:
    source = _good(tmp_path / "artifact")
    (source / "combinations" / "tf-a.json").write_bytes(content)
    into = tmp_path / "merged"
    code = main(["merge", "--into", str(into), str(source)])
    _one_line(capsys, code, "tf-a.json", *words)
    assert not (into / "combinations").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["artifact"]


RECORDS = [
    ('["end", "test_a.py::test_x"]', "not a JSON object"),
    ('"passed"', "not a JSON object"),
    ("42", "not a JSON object"),
    ("garbage that is no JSON", "not a JSON object"),
    ('{"event": "end", "id": "test_a.py::test_x", "outcome": "PASSED"}', "outcome: 'PASSED'"),
    ('{"event": "end", "id": 7, "outcome": "passed"}', "id: 7"),
    ('{"event": "end", "id": "t::x", "outcome": "passed", "seconds": "1s"}', "seconds: '1s'"),
    ('{"event": "end", "id": "t::x", "outcome": "failed", "message": [1]}', "message: [1]"),
    ('{"event": "collected", "ids": "test_a.py"}', "ids: 'test_a.py'"),
    ('{"event": "collected", "ids": [1, 2]}', "ids: [1, 2]"),
    ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
]


@pytest.mark.parametrize(("line", "word"), RECORDS, ids=[f"r{i}" for i in range(len(RECORDS))])
def test_resume_refuses_records_it_did_not_write(tmp_path: Path, capsys, line, word) -> None:
    """--resume reads the records before anything runs: a line that is not a record
    is one line naming the file and its line number, and nothing is built."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_a.py").write_text("def test_x():\n    pass\n")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        "schema: 1\npackages: [iniconfig]\ntiers:\n  t:\n    - {id: tf-a, iniconfig: '2.0.0'}\n"
    )
    results = _good(tmp_path / "reports")
    records = results / "records" / "tf-a.jsonl"
    records.parent.mkdir()
    first = {"event": "collected", "ids": [CASE]}
    records.write_text(json.dumps(first) + "\n" + line + "\n")
    env_dir = tmp_path / "envs"
    argv = ["run", "--resume", "--matrix", str(matrix), "--tier", "t"]
    code = main([*argv, "--results", str(results), "--env-dir", str(env_dir)])
    _one_line(capsys, code, "tf-a.jsonl:2", word)
    assert not env_dir.exists()


def test_a_record_cut_short_by_a_kill_is_not_an_error(tmp_path: Path) -> None:
    """The last line of a killed run may be half a record: its case reruns."""
    from repromatrix.execution.runner import check_records

    records = tmp_path / "a.jsonl"
    records.write_text('{"event": "collected", "ids": ["t::x"]}\n{"event": "end", "id": "t::\n')
    check_records(records)  # no error


@pytest.mark.parametrize("into", ["a-file", "a-file/merged"])
def test_merge_into_a_file_or_under_one(tmp_path: Path, capsys, into: str) -> None:
    source = _good(tmp_path / "artifact")
    (tmp_path / "a-file").write_text("not a folder")
    code = main(["merge", "--into", str(tmp_path / into), str(source)])
    _one_line(capsys, code, "is a file, not a folder")
    assert (tmp_path / "a-file").read_text() == "not a folder"


@pytest.mark.parametrize("spare", [0, 1])
def test_merge_bounds_a_copy_that_has_its_own_file_as_deep_as_the_rest(
    tmp_path: Path, capsys, spare: int
) -> None:
    """A job's results.json holds each combination again; the merge reads the copy of
    one that has its own file the short way (not kept), and still refuses it nested
    past the limit, in the same one line, and takes it at the limit."""
    from repromatrix.results.schema import MAX_DEPTH

    source = _good(tmp_path / "artifact")
    path = source / "results.json"
    doc = json.loads(path.read_text())
    # combinations (1) > the combination (2) > "deep" (3): its innermost list at MAX_DEPTH.
    doc["combinations"][0]["deep"] = _nest(MAX_DEPTH - 2 + spare)
    doc["run"]["note"] = 'brackets in a string: [[{{ "\\" ]'
    path.write_text(json.dumps(doc))
    into = tmp_path / "merged"
    code = main(["merge", "--into", str(into), str(source)])
    if spare:
        _one_line(capsys, code, "results.json", "combinations[0].deep", "nested more than")
        assert not into.exists()
    else:
        assert code == 0, capsys.readouterr().err
        assert (into / "combinations" / "tf-a.json").is_file()
