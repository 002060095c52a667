"""cases/known_issues.yaml: loading, one-line errors, matching on resolved versions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.reportdata import CASE_A, combination, versions

from repromatrix.errors import UserError
from repromatrix.verdicts.knownissues import load_registry

VALID = """\
- case: test_lora.py::test_lora_gets_gradients[reentrant]
  when: {transformers: ">=4.53,<4.56"}
  link: https://github.com/huggingface/transformers/issues/40000
  note: reentrant checkpointing drops LoRA gradients
- case: "test_whisper*.py::*"
  when: {peft: ">=0.17", python: ">=3.11"}
  link: https://github.com/huggingface/peft/issues/2000
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "known_issues.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_valid_registry_loads_in_order(tmp_path):
    registry = load_registry(write(tmp_path, VALID))
    assert [i.case for i in registry.issues] == [
        "test_lora.py::test_lora_gets_gradients[reentrant]",
        "test_whisper*.py::*",
    ]
    assert registry.issues[0].describe()["when"] == {"transformers": "<4.56,>=4.53"}
    assert registry.source.endswith("known_issues.yaml")


def test_match_uses_resolved_versions_not_the_request(tmp_path):
    registry = load_registry(write(tmp_path, VALID))
    floating = combination("tf-latest", versions("4.54.1"))
    floating.requested["transformers"] = "latest"  # what matrix.yaml asked for
    assert registry.match(floating, CASE_A).link.endswith("/40000")
    assert registry.match(combination("old", versions("4.52.4")), CASE_A) is None
    assert registry.match(combination("new", versions("4.56.0")), CASE_A) is None


def test_brackets_in_case_ids_are_literal_and_stars_are_wildcards(tmp_path):
    registry = load_registry(write(tmp_path, VALID))
    combo = combination("c", versions("4.54.0"))
    # '[reentrant]' is a parameter, not a character class: 'r' alone must not match.
    assert registry.match(combo, "test_lora.py::test_lora_gets_gradientsr") is None
    assert registry.match(combo, "test_lora.py::test_lora_gets_gradients[non_reentrant]") is None
    whisper = combination("w", versions("4.50.0", peft="0.17.1"))
    assert registry.match(whisper, "test_whisper_lora.py::test_x[a]").link.endswith("/2000")


def test_python_and_absent_packages_in_when(tmp_path):
    registry = load_registry(write(tmp_path, VALID))
    old_python = combination("w", versions("4.50.0", peft="0.17.1"), python="3.10.14")
    assert registry.match(old_python, "test_whisper.py::test_x") is None
    no_peft = combination("w", {"torch": "2.13.0", "transformers": "4.50.0"})
    assert registry.match(no_peft, "test_whisper.py::test_x") is None


def test_missing_file_is_empty_unless_required(tmp_path):
    assert load_registry(tmp_path / "nope.yaml", required=False).issues == ()
    with pytest.raises(UserError, match=r"nope.yaml: no such known-issues file"):
        load_registry(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- {case: a.py::t, when: {transformers: '>=4.5x'}, link: 'https://x/1'}",
            r"\[0\]\.when\.transformers: '>=4\.5x' is not a PEP 440 specifier",
        ),
        (
            "- {case: a.py::t, when: {peft: 0.17}, link: 'https://x/1'}",
            r"\[0\]\.when\.peft: 0\.17 is a number; quote it",
        ),
        ("- {case: a.py::t}", r"\[0\]\.link: required key is missing"),
        ("- {case: a.py::t, link: 'https://x', links: 'y'}", r"\[0\]\.links: 'y' unknown key"),
        ("- {case: a.py::t, link: 'ftp://x'}", r"\[0\]\.link: 'ftp://x' is not an http\(s\) URL"),
        ("- {case: '', link: 'https://x'}", r"\[0\]\.case: empty case id"),
        ("case: a.py::t", r"the top level must be a list of known issues, not dict"),
        ("- just a string", r"\[0\]: 'just a string' is not a mapping"),
        ("- {case: [a, b], link: 'https://x'}", r"\[0\]\.case: .*valid string"),
        ("- {case: a.py::t\n  link: x", r"known_issues.yaml:\d+: YAML syntax error"),
    ],
)
def test_bad_entries_give_one_line_naming_file_key_and_value(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(UserError) as caught:
        load_registry(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert __import__("re").search(expected, message), message


def test_empty_file_is_an_empty_registry(tmp_path):
    assert load_registry(write(tmp_path, "")).issues == ()
