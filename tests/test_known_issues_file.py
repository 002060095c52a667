"""cases/known_issues.yaml, as committed: every entry well-formed and naming a real case.

The reader (verdicts) validates the file when it runs; this catches a typo in an entry the
day it is written, without building a cell: the case's file must exist and define the
test function the id (or pattern) names.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet

CASES = Path(__file__).resolve().parent.parent / "cases"
REGISTRY = CASES / "known_issues.yaml"


def _entries() -> list[dict]:
    return yaml.safe_load(REGISTRY.read_text()) or []


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
    }


def test_registry_is_a_list_of_entries():
    entries = _entries()
    assert isinstance(entries, list) and entries
    for entry in entries:
        assert set(entry) == {"case", "when", "link", "note"}, entry


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["case"])
def test_entry_names_a_case_and_valid_versions(entry):
    file_part, _, node = entry["case"].partition("::")
    files = [p for p in CASES.glob("test_*.py") if fnmatch.fnmatch(p.name, file_part)]
    assert files, f"{entry['case']}: no case file matches {file_part!r}"
    function, _, param = node.partition("[")
    assert any(fnmatch.filter(_test_functions(p), function) for p in files), (
        f"{entry['case']}: no test function matches {function!r}"
    )
    if param and not any(c in param for c in "*?"):
        # A parametrized id: its parameter id is spelled in the case file, or in the
        # parametrizations the cases share (recipes.py).
        sources = [*files, CASES / "recipes.py"]
        assert any(f'"{param.rstrip("]")}"' in p.read_text() for p in sources), entry["case"]

    assert isinstance(entry["when"], dict) and entry["when"]
    for package, spec in entry["when"].items():
        assert isinstance(package, str) and isinstance(spec, str), (package, spec)
        assert len(SpecifierSet(spec)) > 0, f"{package}: {spec!r}"
    assert entry["link"].startswith("https://github.com/")
    assert entry["note"].strip() and "\n" not in entry["note"].strip()
