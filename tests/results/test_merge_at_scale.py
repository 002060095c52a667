"""What makes a merge of thousands of combinations fast keeps its promises: a file
copied as it was written unless it may hold a secret (then masked value by value, a
quote or backslash in the secret included), results.json in a layout that json's C
encoder and pydantic's serializer write alike (compact, one object a line) and any JSON
reader reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.jobs import write_job

from repromatrix import redact
from repromatrix.results import CaseResult, CombinationResult, RunInfo, load_results
from repromatrix.results.gather import merge

SECRET = 'pa"ss\\word-1234'  # a quote and a backslash: JSON spells it otherwise


@pytest.fixture(autouse=True)
def _forget_secrets():
    redact.forget()
    yield
    redact.forget()


def _job(folder: Path, combo_id: str, message: str = "RuntimeError: boom") -> Path:
    combo = CombinationResult(
        id=combo_id,
        tier="t",
        requested={"peft": "0.17.1"},
        status="failed",
        cases=[CaseResult(id="t.py::x", status="failed", outcome="failed", message=message)],
    )
    return write_job(folder, [combo], RunInfo(id=combo_id))


def test_the_json_redactor_finds_secrets_as_json_spells_them(monkeypatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    found = redact.json_redactor()
    assert found.may_hold_secrets(json.dumps({"m": f"it was {SECRET}"}))
    assert found.may_hold_secrets(json.dumps({"m": "line\nhf_" + "a" * 20}))  # after an escape
    assert found.may_hold_secrets(json.dumps({"m": "https://user:pw@example.invalid/x"}))
    assert not found.may_hold_secrets(json.dumps({"m": "nothing to see", "n": 123456789}))


@pytest.mark.parametrize(
    "spell",
    [
        lambda s: json.dumps(s)[1:-1],  # ASCII, as the results files are written
        lambda s: json.dumps(s, ensure_ascii=False)[1:-1],  # as older versions wrote them
        # pydantic's serializer, as model_text writes each combination (DEL left raw)
        lambda s: CaseResult(id="x", status="failed", message=s).model_dump_json(ensure_ascii=True),
    ],
    ids=["ascii", "unicode", "serializer"],
)
def test_a_non_ascii_secret_is_found_however_the_file_spells_it(monkeypatch, spell) -> None:
    secret = 'p\u00e4ss"w\x7f\u2603rd-1234'  # non-ASCII, a quote and DEL
    monkeypatch.setenv("DB_PASSWORD", secret)
    assert redact.json_redactor().may_hold_secrets(spell(secret))


def test_a_merged_copy_is_the_file_as_written_or_masked(tmp_path, monkeypatch) -> None:
    plain = _job(tmp_path / "a", "a")
    # A job elsewhere wrote the value of a variable that is secret here (the merge's).
    leaky = _job(tmp_path / "b", "b", message=f"connect failed: {SECRET}")
    assert json.dumps(SECRET)[1:-1] in (leaky / "combinations" / "b.json").read_text()
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    merge(tmp_path / "merged", [plain, leaky])
    copied = (tmp_path / "merged" / "combinations" / "a.json").read_text()
    assert copied == (plain / "combinations" / "a.json").read_text()  # byte for byte
    masked = (tmp_path / "merged" / "combinations" / "b.json").read_text()
    assert SECRET not in masked and json.dumps(SECRET)[1:-1] not in masked
    assert json.loads(masked)["cases"][0]["message"] == "connect failed: ***"
    results = (tmp_path / "merged" / "results.json").read_text()
    assert json.dumps(SECRET)[1:-1] not in results


def test_results_json_is_one_line_a_combination_and_reads_back(tmp_path) -> None:
    merged = merge(tmp_path / "merged", [_job(tmp_path / f"j{i}", f"c{i}") for i in range(3)])
    text = (tmp_path / "merged" / "results.json").read_text()
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert sum(1 for line in lines if line.startswith('    {"id":"c')) == 3
    assert load_results(tmp_path / "merged").dump() == merged.dump()


@pytest.mark.parametrize(
    "token",
    [
        "hf_" + "a" * 20,
        *(f"gh{kind}_" + "b" * 30 for kind in "pousr"),
        "github_pat_" + "c" * 30,
        "glpat-" + "d" * 25,
        "AKIA" + "E" * 16,
        *(f"xox{kind}-" + "f" * 12 for kind in "abpr"),
    ],
)
def test_every_token_shape_is_found_before_the_walk_is_skipped(token: str) -> None:
    assert redact.TOKEN_SHAPES.search(token)  # a shape redact masks ...
    text = json.dumps({"m": f"line one\n{token}"})
    assert redact.json_redactor().may_hold_secrets(text)  # ... is never skipped


# Pieces of tokens and what lies around them: joined at random, they make texts where a
# shape starts, breaks off, or follows an escape.
_PIECES = [
    *("hf_", "gh", "p_", "github_pat_", "glpat-", "AKIA", "xoxb-"),
    *("a" * 9, "Z" * 9, "_", "-", "\\n", " "),
]


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_the_hints_a_first_letter_find_what_one_pattern_of_all_shapes_finds(text: str) -> None:
    # TOKEN_SHAPES without its word boundaries, as one pattern: what the hints replace.
    shapes = redact.TOKEN_SHAPES.pattern
    whole = re.compile(shapes.replace(r"(?<=\b[hgAx])", "").removesuffix(r"\b"))
    hinted = any(hint.search(text) for hint in redact._TOKEN_HINTS)
    assert hinted == (whole.search(text) is not None)
    if redact.TOKEN_SHAPES.search(text):
        assert redact.JsonRedactor(str, ()).may_hold_secrets(text)
