"""The one table of verdicts and cell statuses (outcomes.py): every word once, every
verdict a rule in judge, and the sets the rest of the tool uses read from it."""

from __future__ import annotations

import unicodedata

from support.reportdata import CASE_A, case, combination, results, versions

from repromatrix.outcomes import (
    FAILURES,
    STATUS_TABLE,
    STATUSES,
    UNEXPECTED,
    VERDICT_TABLE,
    VERDICTS,
    CaseOutcome,
    CaseStatus,
    Verdict,
)
from repromatrix.reports.view import EXIT_TEXT
from repromatrix.verdicts import judge
from repromatrix.verdicts.judge import RULES


def test_every_verdict_is_one_row_with_a_rule() -> None:
    assert sorted(row.verdict for row in VERDICT_TABLE) == sorted(Verdict)
    assert set(RULES) == set(Verdict)
    assert sorted(row.attention for row in VERDICT_TABLE) == list(range(len(VERDICT_TABLE)))
    # PASS applies to whatever is left: it is the last in precedence.
    assert VERDICT_TABLE[-1].verdict == Verdict.PASS


def test_every_cell_status_is_one_row() -> None:
    words = [row.word for row in STATUS_TABLE]
    assert sorted(words) == sorted({*CaseStatus, "regressed", "missing"})
    assert len({row.attention for row in STATUS_TABLE}) == len(STATUS_TABLE)
    for row in (*STATUS_TABLE, *VERDICT_TABLE):
        # One code point: GitHub's 65,536 characters count code points.
        assert len(row.symbol) == 1, row
        assert unicodedata.category(row.symbol) in {"So", "Pd"}, row
        assert row.colour.startswith("#") and len(row.colour) == 7, row


def test_the_sets_the_tool_uses_come_from_the_table() -> None:
    assert {Verdict.REGRESSED, Verdict.FAILING, Verdict.INSTALL_ERROR, Verdict.LOST} == UNEXPECTED
    assert {
        CaseOutcome.FAILED,
        CaseOutcome.ERROR,
        CaseOutcome.CRASHED,
        CaseOutcome.TIMED_OUT,
    } == FAILURES
    assert {row.word for row in STATUS_TABLE if row.quiet} == {"passed", "missing"}
    assert EXIT_TEXT[1].endswith("(REGRESSED, FAILING, LOST or INSTALL-ERROR)")


def test_judge_gives_the_first_verdict_in_the_table_whose_rule_applies() -> None:
    # Combinations to which several rules apply: a failure beside a fix, a known-broken
    # case beside a flaky one, a regression beside a failure; lost and install errors.
    stored = results(
        combination(
            "failing-and-fixed",
            versions("4.53.0"),
            [case(CASE_A, "failed"), case("test_b.py::test_y", "passed")],
        ),
        combination("a-pass", versions("4.52.4"), [case(CASE_A, "passed")]),
        combination("lost", versions("4.54.0"), status="lost", resolved=False),
        combination("install", versions("4.55.0"), status="install-error", resolved=False),
        combination("skipped", versions("4.56.0"), [case(CASE_A, "skipped")]),
    )
    baseline = results(
        combination(
            "failing-and-fixed",
            versions("4.53.0"),
            [case(CASE_A, "failed"), case("test_b.py::test_y", "failed")],
        )
    )
    judge(stored, baseline=baseline)
    for combo in stored.combinations:
        applies = [row.verdict for row in VERDICT_TABLE if RULES[row.verdict](combo)]
        assert combo.verdict == applies[0], (combo.id, applies)
    verdicts = {c.id: c.verdict for c in stored.combinations}
    assert verdicts == {
        "failing-and-fixed": Verdict.FAILING,  # FIXED applies too, later in the table
        "a-pass": Verdict.PASS,
        "lost": Verdict.LOST,
        "install": Verdict.INSTALL_ERROR,
        "skipped": Verdict.SKIPPED,
    }
    assert Verdict.FIXED in [
        row.verdict for row in VERDICT_TABLE if RULES[row.verdict](stored.combinations[0])
    ]


def test_reports_show_the_tables_symbols() -> None:
    assert VERDICTS[Verdict.LOST].symbol == "📭"
    assert STATUSES["regressed"].mark == "▼"
