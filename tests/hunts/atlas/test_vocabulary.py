"""The atlas's words are outcomes.py's: answer status, evidence and cell outcome as
enums, one legend table (symbol, colour, text) read by the page, the CSV, the console
and the JSON; no module under hunts/ spells them, and PASSING is defined once."""

from __future__ import annotations

import re
from pathlib import Path

import repromatrix
from repromatrix.outcomes import ATLAS_LEGEND, AnswerStatus, CellOutcome, Evidence, legend_row

SRC = Path(repromatrix.__file__).parent
WORDS = sorted(
    {*map(str, AnswerStatus), *map(str, Evidence), *map(str, CellOutcome)} - {"error", "skipped"}
)


def test_no_quoted_answer_word_in_hunts() -> None:
    quoted = re.compile(r"""["']({})["']""".format("|".join(WORDS)))
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted((SRC / "hunts").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if quoted.search(line)
    ]
    assert found == []


def test_passing_is_defined_once() -> None:
    defined = [
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if re.search(r"^PASSING\b.*=", path.read_text(), re.M)
    ]
    assert defined == ["outcomes.py"]


def test_every_answer_has_one_legend_row() -> None:
    for status in AnswerStatus:
        for evidence in (None, *Evidence):
            row = legend_row(status, evidence)
            assert row.status == status or status == AnswerStatus.UNTESTED, (status, evidence)
    assert legend_row(AnswerStatus.BREAKS, Evidence.TESTED, alone=True).alone
    symbols = [row.symbol for row in ATLAS_LEGEND]
    assert all(len(s) == 1 for s in symbols)
    assert legend_row(AnswerStatus.WORKS, Evidence.INFERRED).hatched
