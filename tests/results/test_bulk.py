"""results/bulk.py: the cyclic collector paused only while a whole matrix is worked on."""

from __future__ import annotations

import gc

import pytest

from repromatrix.results.bulk import without_cycle_collection


@without_cycle_collection
def _seen(fail: bool = False) -> bool:
    if fail:
        raise ValueError("bad input")
    return gc.isenabled()


def test_paused_while_it_runs_and_resumed_after_even_on_an_error() -> None:
    assert gc.isenabled()
    assert _seen() is False
    assert gc.isenabled()
    with pytest.raises(ValueError, match="bad input"):
        _seen(fail=True)
    assert gc.isenabled()


def test_a_caller_that_paused_it_resumes_it_itself() -> None:
    gc.disable()
    try:
        assert _seen() is False
        assert not gc.isenabled()  # not resumed behind the caller's back
    finally:
        gc.enable()


def test_the_gathering_pauses_it() -> None:
    """merge, judge and every report run with it paused (their CPU time at 2,000
    combinations: benchmarks/bench_reports.py)."""
    from repromatrix import reports
    from repromatrix.reports import html, junit, markdown, results_json
    from repromatrix.reports.view import View
    from repromatrix.results import load_results
    from repromatrix.results.gather import merge
    from repromatrix.verdicts import judge

    for function in (merge, judge, load_results, reports.write_all, View.of, results_json.write):
        assert getattr(function, "__wrapped__", None) is not None, function
    for module in (html, junit, markdown):
        assert getattr(module.render, "__wrapped__", None) is not None, module
