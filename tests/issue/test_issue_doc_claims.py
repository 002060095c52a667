"""docs/issue-repro.md's security and artifacts tables: every claim names the tests
that hold it, and every test named exists (a renamed or deleted test fails here, not
silently in the docs)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "issue-repro.md"
TABLES = ("### What holds, and the test that says so", "### Artifacts that cross to a job")
TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def _rows(heading: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading) :].split("\n### ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return lines[2:]  # below the header and its rule


@pytest.mark.parametrize("heading", TABLES)
def test_every_claim_names_the_tests_that_hold_it(heading: str) -> None:
    rows = _rows(heading)
    assert len(rows) >= 8
    for row in rows:
        tests = row.rstrip(" |").rsplit(" | ", 1)[-1]
        assert TEST_ID.search(tests), f"{heading}: no test named for {row[:80]!r}"


@pytest.mark.parametrize("heading", TABLES)
def test_every_test_named_exists(heading: str) -> None:
    named = {match for row in _rows(heading) for match in TEST_ID.findall(row)}
    for path, name in sorted(named):
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert name in defined, f"{path}::{name} is named in {DOC.name} but does not exist"
