"""junit.xml is written without masking value by value unless its text may hold a
secret: a secret that XML spells otherwise (a quote, an ampersand, a newline in an
attribute) still never reaches the file."""

from __future__ import annotations

from support.reportdata import CASE_A, case, combination, results, versions

from repromatrix import redact
from repromatrix.reports import junit
from repromatrix.reports.view import View
from repromatrix.verdicts import judge

SECRET = 'p"w&<d>\t-98765'


def test_a_secret_xml_spells_otherwise_is_masked(monkeypatch) -> None:
    stored = results(
        combination(
            "a",
            versions("4.52.4"),
            [case(CASE_A, "failed", message=f"login with {SECRET} refused")],
        )
    )
    judge(stored)
    plain = junit.render(View.of(stored))
    # How XML spells it, unmasked: in an attribute, and in text.
    assert 'message="login with p&quot;w&amp;&lt;d&gt;&#09;-98765 refused"' in plain
    assert 'login with p"w&amp;&lt;d&gt;\t-98765 refused' in plain
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    try:
        masked = junit.render(View.of(stored))
    finally:
        redact.forget()
    assert "98765" not in masked
    assert 'message="login with *** refused"' in masked
    assert ">login with *** refused" in masked
