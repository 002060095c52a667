"""Generated results.json files, combination files and records files through their
readers (in process): each is read, or refused in one line naming the file (a
UserError, exit 2 at the command line). Never another exception.

RESULTS_EXAMPLES + RECORDS_EXAMPLES documents per run; with the generated matrix
files (tests/matrix/test_generated_matrices.py), over a thousand.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.junk import swap_in_junk

from repromatrix.cli import main
from repromatrix.errors import UserError
from repromatrix.execution.runner import check_records
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    Results,
    load_results,
    read_combinations,
)

RESULTS_EXAMPLES = 250
REPORT_EXAMPLES = 60
RECORDS_EXAMPLES = 200
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

VALID = Results(
    combinations=[
        CombinationResult(
            id="tf-a",
            tier="t",
            requested={"transformers": "4.56.2"},
            status="failed",
            cases=[CaseResult(id="t.py::x", status="failed", outcome="failed")],
        )
    ]
).dump()

WORDS = st.sampled_from(
    ["passed", "failed", "FAILED", "PASS", "known-broken", "", "../x", "tf-a", "t", "1"]
)
JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=10),
        WORDS,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=6), WORDS), inner, max_size=4),
    ),
    max_leaves=10,
)


@st.composite
def results_documents(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 4)) == 0:
        return draw(JSON)  # anything at all
    doc = json.loads(json.dumps(VALID))
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 3]))):
        swap_in_junk(
            doc, draw(JSON), draw(st.randoms(use_true_random=False)), max_depth=8, stop=0.25
        )
    return doc


def _encode(draw: st.DrawFn, doc: Any) -> bytes:
    text = json.dumps(doc).encode()
    how = draw(st.sampled_from(["as is"] * 6 + ["cut", "latin-1", "nested"]))
    if how == "cut":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if how == "latin-1":
        return text[:-1] + b' "caf\xe9"' + text[-1:]
    if how == "nested":
        depth = draw(st.integers(50, 3000))
        return b"[" * depth + text + b"]" * depth
    return text


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("generated-results")


def _refused_in_one_line(err: UserError, name: str) -> None:
    line = str(err)
    assert "\n" not in line and name in line and len(line) <= 700


@settings(max_examples=RESULTS_EXAMPLES, **SETTINGS)
@given(data=st.data())
def test_generated_results_files(folder: Path, data: st.DataObject) -> None:
    raw = _encode(data.draw, data.draw(results_documents()))
    (folder / "results.json").write_bytes(raw)
    try:
        results = load_results(folder)
    except UserError as err:
        event("refused")
        _refused_in_one_line(err, "results.json")
        return
    event("read")
    for combination in results.combinations:
        assert "/" not in combination.id and combination.id not in ("", ".", "..")


@settings(max_examples=RESULTS_EXAMPLES, **SETTINGS)
@given(data=st.data())
def test_generated_combination_files(folder: Path, data: st.DataObject) -> None:
    doc = data.draw(results_documents())
    combination = doc["combinations"][0] if _first_combination(doc) else doc
    combos = folder / "c" / "combinations"
    combos.mkdir(parents=True, exist_ok=True)
    (combos / "tf-a.json").write_bytes(_encode(data.draw, combination))
    try:
        read = read_combinations(folder / "c")
    except UserError as err:
        event("refused")
        _refused_in_one_line(err, "tf-a.json")
        return
    event("read")
    assert all("/" not in i for i in read)


def _first_combination(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("combinations"), list)
        and bool(doc["combinations"])
    )


@settings(max_examples=REPORT_EXAMPLES, **SETTINGS)
@given(data=st.data())
def test_generated_results_through_report(folder: Path, data: st.DataObject) -> None:
    """The whole of `repromatrix report`: reading, judging and rendering."""
    target = folder / "report"
    target.mkdir(exist_ok=True)
    (target / "results.json").write_bytes(_encode(data.draw, data.draw(results_documents())))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["report", "--results", str(target), "--matrix", str(folder / "none.yaml")])
    event(f"exit {code}")
    assert code in (0, 1, 2), err.getvalue()
    if code == 2:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and "results.json" in lines[0], err.getvalue()


EVENTS = st.one_of(
    st.fixed_dictionaries(
        {"event": st.just("collected"), "ids": st.one_of(st.lists(st.text(max_size=8)), JSON)}
    ),
    st.fixed_dictionaries(
        {
            "event": st.just("end"),
            "id": st.one_of(st.just("t.py::x"), JSON),
            "outcome": st.one_of(WORDS, JSON),
        },
        optional={
            "seconds": st.one_of(st.floats(0, 100), JSON),
            "message": st.one_of(st.text(max_size=10), JSON),
            "traceback": st.one_of(st.text(max_size=10), JSON),
            "error_type": st.one_of(st.none(), st.text(max_size=5), JSON),
        },
    ),
    JSON,
)


@st.composite
def records_lines(draw: st.DrawFn) -> str:
    line = json.dumps(draw(EVENTS))
    how = draw(st.sampled_from(["as is"] * 5 + ["cut", "text"]))
    if how == "cut":
        return line[: draw(st.integers(0, len(line)))]
    if how == "text":
        return draw(st.text(max_size=20)).replace("\n", " ")
    return line


@settings(max_examples=RECORDS_EXAMPLES, **SETTINGS)
@given(lines=st.lists(records_lines(), max_size=6))
def test_generated_records_files(folder: Path, lines: list[str]) -> None:
    path = folder / "records.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    try:
        check_records(path)
    except UserError as err:
        event("refused")
        _refused_in_one_line(err, "records.jsonl:")
        return
    event("read")
