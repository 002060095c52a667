"""A passing case's recorded properties become its message (what torch actually said)."""

from __future__ import annotations

from types import SimpleNamespace

from repromatrix.execution._cell import repromatrix_cell_plugin as plugin


def _report(when: str, *, failed: bool = False, properties=(), longrepr=None):
    return SimpleNamespace(
        when=when,
        duration=0.5,
        skipped=False,
        failed=failed,
        longrepr=longrepr,
        user_properties=list(properties),
    )


def test_passing_case_reports_its_recorded_properties_as_message():
    error = ("torch_error", "RuntimeError: Trying to backward through the graph a second time")
    reports = [
        _report("setup"),
        _report("call", properties=[error, ("frames", "a.py:f > b.py:g")]),
        _report("teardown", properties=[error, ("frames", "a.py:f > b.py:g")]),
    ]
    record = plugin._summarize(reports)
    assert record["outcome"] == "passed"
    assert record["message"] == (
        "torch_error: RuntimeError: Trying to backward through the graph a second time\n"
        "frames: a.py:f > b.py:g"
    )
    assert record["seconds"] == 1.5


def test_passing_case_without_properties_has_no_message():
    assert (
        plugin._summarize([_report("setup"), _report("call"), _report("teardown")])["message"] == ""
    )


def test_failing_case_keeps_its_error_as_message():
    reports = [
        _report("setup"),
        _report(
            "call",
            failed=True,
            properties=[("torch_error", "recorded before the assertion failed")],
            longrepr="    assert 1 == 2\nE   AssertionError: assert 1 == 2",
        ),
    ]
    record = plugin._summarize(reports)
    assert record["outcome"] == "failed"
    assert record["message"] == "assert 1 == 2"
    assert "recorded before" not in record["message"]
