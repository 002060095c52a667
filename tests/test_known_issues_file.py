"""cases/known_issues.yaml, as committed: every entry well-formed and naming a real case.

The reader (verdicts) validates the file when it runs; this catches a typo in an entry the
day it is written, without building a cell: the case's file must exist and define the
test function and parameter id the id (or pattern) names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from repromatrix.matrix.case_ids import CaseIndex

CASES = Path(__file__).resolve().parent.parent / "cases"
REGISTRY = CASES / "known_issues.yaml"


def _entries() -> list[dict]:
    return yaml.safe_load(REGISTRY.read_text()) or []


def test_registry_is_a_list_of_entries():
    entries = _entries()
    assert isinstance(entries, list) and entries
    for entry in entries:
        assert set(entry) == {"case", "when", "link", "note"}, entry


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["case"])
def test_entry_names_a_case_and_valid_versions(entry):
    # The same check the harness makes where it loads the registry (case_ids): the
    # file, the test function and a literal parameter id exist.
    assert CaseIndex(CASES).pattern_problem(entry["case"]) is None, entry["case"]

    assert isinstance(entry["when"], dict) and entry["when"]
    for package, spec in entry["when"].items():
        assert isinstance(package, str) and isinstance(spec, str), (package, spec)
        assert len(SpecifierSet(spec)) > 0, f"{package}: {spec!r}"
    assert entry["link"].startswith("https://github.com/")
    assert entry["note"].strip() and "\n" not in entry["note"].strip()
