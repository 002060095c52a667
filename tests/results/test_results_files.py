"""The results files themselves: atomic, readable by everyone."""

from __future__ import annotations

import json
import stat

import pytest

from repromatrix.errors import UserError
from repromatrix.outcomes import CaseStatus
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    load_results,
    write_json_atomic,
    write_text_atomic,
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
