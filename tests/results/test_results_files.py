"""The results files themselves: atomic, readable by everyone."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.errors import UserError
from repromatrix.outcomes import CaseStatus
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    load_results,
    schema,
    write_json_atomic,
    write_text_atomic,
)
from repromatrix.results.schema import (
    MAX_DEPTH,
    check_depth,
    read_json_text,
    read_model,
    validate,
)


def test_atomic_writes_leave_no_temporary_file_and_are_world_readable(tmp_path):
    write_json_atomic(tmp_path / "a" / "results.json", {"schema": 1})
    write_text_atomic(tmp_path / "a" / "summary.md", "# hi\n")
    assert json.loads((tmp_path / "a" / "results.json").read_text()) == {"schema": 1}
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["results.json", "summary.md"]
    for name in ("results.json", "summary.md"):
        mode = stat.S_IMODE((tmp_path / "a" / name).stat().st_mode)
        assert mode & stat.S_IROTH, oct(mode)


@pytest.mark.parametrize(
    ("where", "word"),
    [
        ("cases.0.status", "FAILED"),  # a case outcome spelled by another tool
        ("cases.0.outcome", "broken"),
        ("status", "ok"),  # a combination status
        ("verdict", "PASSED"),
    ],
)
def test_a_word_outside_the_vocabulary_is_refused_on_read(tmp_path, where, word):
    combination = {
        "id": "c1",
        "tier": "smoke",
        "requested": {},
        "status": "failed",
        "verdict": "FAILING",
        "cases": [{"id": "test_a.py::test_b", "status": "failed", "outcome": "failed"}],
    }
    target = combination
    *parents, leaf = where.split(".")
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    target[leaf] = word
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema": 1, "combinations": [combination]}))
    with pytest.raises(UserError) as caught:
        load_results(path)
    key = "combinations[0]." + where.replace(".0.", "[0].")
    assert str(caught.value).startswith(f"{path}: {key}: Input should be")


def test_the_stored_words_are_the_vocabulary(tmp_path):
    combination = CombinationResult(id="c1", tier="smoke", requested={}, status="failed")
    combination.cases = [CaseResult(id="t.py::t", status="known-broken", outcome="failed")]
    assert combination.cases[0].status is CaseStatus.KNOWN_BROKEN
    with pytest.raises(ValueError):
        combination.status = "broken"  # assigned later, checked like a read


def _run(latest, text, *, interrupted=False, mode="fresh"):
    """One run into ``latest`` writing results.json = text; cut off when asked."""
    from repromatrix.results import ResultsDir

    class Cut(Exception):
        pass

    try:
        with ResultsDir(latest).claimed(mode) as out:
            (out.path / "results.json").write_text(text)
            if interrupted:
                raise Cut
    except Cut:
        pass


def test_the_previous_run_is_the_last_complete_one(tmp_path):
    """A complete run, then two interrupted ones: the complete run stays
    latest.previous (before: the two partial runs were latest and latest.previous and
    the complete one was gone). The interrupted run a fresh run replaces is kept as
    latest.interrupted; the one still in latest can be resumed."""
    latest = tmp_path / "latest"
    previous, cut = tmp_path / "latest.previous", tmp_path / "latest.interrupted"
    _run(latest, "A")
    _run(latest, "B", interrupted=True)
    assert (previous / "results.json").read_text() == "A"
    _run(latest, "C", interrupted=True)
    assert (previous / "results.json").read_text() == "A"
    assert (cut / "results.json").read_text() == "B"
    assert (latest / "results.json").read_text() == "C"
    # A rerender (update) of the interrupted run does not make it complete ...
    _run(latest, "C", mode="update")
    _run(latest, "D")
    assert (previous / "results.json").read_text() == "A", "C was never complete"
    assert (cut / "results.json").read_text() == "C"
    # ... a resume does, and a complete run becomes the previous one.
    _run(latest, "E", interrupted=True)
    _run(latest, "E+", mode="resume")
    _run(latest, "F")
    assert (previous / "results.json").read_text() == "E+"
    assert (latest / "results.json").read_text() == "F"
    assert not (latest / ".unfinished").exists()


def test_a_bare_file_name_is_written_here_and_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_text_atomic(Path("summary.md"), "# hi\n")
    assert (tmp_path / "summary.md").read_text() == "# hi\n"

    def disk_full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_text_atomic(tmp_path / "new" / "report.md", "lost")
    assert os.listdir(tmp_path / "new") == []  # no temporary file left behind
    assert (tmp_path / "summary.md").read_text() == "# hi\n"


def _nest(depth: int) -> object:
    value: object = "bottom"
    for level in range(depth):
        value = {"k": value} if level % 2 else [value]
    return value


COMBINATION = {
    "id": "c1",
    "tier": "smoke",
    "requested": {"torch": "2.13.0"},
    "status": "failed",
    "environment": {"python": "3.11.7", "index": {}},
    "cases": [
        {
            "id": "test_a.py::test_b",
            "status": "failed",
            "outcome": "failed",
            "known_issue": {},
            "transitions": [{"direction": "regressed", "package": "p", "good": "1", "bad": "2"}],
        }
    ],
}
# Where a file may hold JSON of any depth (the schema's open places: extra fields,
# Any), each a dict and how far below the file's top it is: the short way must refuse
# exactly what the long way (json + check_depth + validate) refuses.
OPEN_PLACES = {
    "extra-field": ((), 0),
    "environment-index": (("environment", "index"), 2),
    "case-extra": (("cases", 0), 2),
    "known-issue": (("cases", 0, "known_issue"), 3),
    "transition-extra": (("cases", 0, "transitions", 0), 4),
}


@pytest.mark.parametrize("place", list(OPEN_PLACES))
@pytest.mark.parametrize("spare", [-1, 0, 1])
def test_a_combination_file_read_the_short_way_as_the_long_way(tmp_path, place, spare):
    """read_model (validated from bytes, only the open places walked) accepts and
    refuses what read_json_text + validate do, at the depth limit and either side."""
    where, depth = OPEN_PLACES[place]
    document = json.loads(json.dumps(COMBINATION))
    target = document
    for key in where:
        target = target[key]
    target["deep"] = _nest(MAX_DEPTH - depth + spare)  # spare 0: its deepest at the limit
    path = tmp_path / "c1.json"
    path.write_text(json.dumps(document))
    try:
        data, _text = read_json_text(path)
        expected = validate(CombinationResult, data, path)
    except UserError as err:
        assert spare > 0, f"refused within the limit: {err}"
        with pytest.raises(UserError) as caught:
            read_model(path, CombinationResult)
        assert str(caught.value) == str(err)  # the same one line, naming where
        return
    assert spare <= 0, "the long way accepted a file beyond the limit"
    found, text = read_model(path, CombinationResult)
    assert found == expected and text == path.read_text()


@pytest.mark.parametrize(
    "content",
    [
        '{"id": "c1", "tier": "t", "requested": {}, "status": "passed", "note": "\\ud800"}',
        '{"id": "c1", "tier": "t", "requested": {}, "status": "passed", "seconds": NaN}',
        '{"id": "c1", "tier": "t", "requested": {}, "status": "passed", "id": "c2"}',
        '{"id": "c1", "tier": "t", "requested": {}, "status": "PASSED"}',
        '{"id": "c1", "tier": "t", "requested": {}, "status": "passed"',
        "[" * 300 + "]" * 300,
    ],
    ids=["lone-surrogate", "nan", "key-twice", "bad-status", "cut-short", "nested-300"],
)
def test_what_pydantics_parser_refuses_is_read_as_json_reads_it(tmp_path, content):
    path = tmp_path / "c1.json"
    path.write_text(content)
    try:
        data, _text = read_json_text(path)
        expected = validate(CombinationResult, data, path)
    except UserError as err:
        with pytest.raises(UserError) as caught:
            read_model(path, CombinationResult)
        assert str(caught.value) == str(err)
        return
    found, _text = read_model(path, CombinationResult)
    assert found.model_dump() == expected.model_dump() or found.seconds != found.seconds


json_values = st.recursive(
    st.none() | st.integers() | st.text(alphabet='ab[]{}"\\\n'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='k[{"\\', max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(value=json_values, limit=st.integers(0, 4))
def test_the_depth_read_from_the_text_is_the_depth_of_the_data(value, limit):
    """text_within (brackets outside strings, from the bytes) answers as check_depth
    (the parsed data) at every limit, strings full of brackets, quotes and backslashes."""
    saved, schema.MAX_DEPTH = schema.MAX_DEPTH, limit  # both read it when called
    try:
        try:
            check_depth(value, Path("x.json"))
            within = True
        except UserError:
            within = False
        assert schema.text_within(json.dumps(value).encode()) is within
        spaced = json.dumps(value, indent=1, ensure_ascii=False).encode()
        assert schema.text_within(spaced) is within
    finally:
        schema.MAX_DEPTH = saved
