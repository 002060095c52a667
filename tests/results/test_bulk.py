"""results/bulk.py: the cyclic collector paused only while a whole matrix is worked on;
independent halves of the work in two processes."""

from __future__ import annotations

import gc
import os
import sys
import threading
import time

import pytest

from repromatrix.errors import UserError
from repromatrix.results.bulk import side_by_side, without_cycle_collection


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


# ---------------------------------------------------------------- side_by_side


FORKS = sys.platform.startswith("linux") and (os.cpu_count() or 1) > 1


@pytest.mark.skipif(not FORKS, reason="off Linux or with one core: one after the other")
def test_the_other_half_runs_in_a_child_and_here_s_value_comes_back(tmp_path) -> None:
    if threading.active_count() > 1:  # left by another test (a server): no fork then
        pytest.skip("another thread is running in this test process")
    there = tmp_path / "there.txt"
    value = side_by_side(lambda: os.getpid(), lambda: there.write_text(str(os.getpid())))
    assert value == os.getpid()
    assert int(there.read_text()) != os.getpid()  # written by the child, which has ended


def test_with_another_thread_running_both_halves_run_here(tmp_path) -> None:
    # A lock that thread held at the fork would never be released in the child.
    there = tmp_path / "there.txt"
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        side_by_side(lambda: None, lambda: there.write_text(str(os.getpid())))
    finally:
        release.set()
        other.join()
    assert int(there.read_text()) == os.getpid()


def test_a_failure_in_the_child_is_raised_here_as_it_was_raised_there() -> None:
    def there() -> None:
        raise UserError("reports/junit.xml: cannot write here (No space left on device)")

    with pytest.raises(UserError, match="No space left on device"):
        side_by_side(lambda: None, there)


def test_one_that_cannot_be_pickled_comes_back_named() -> None:
    class Local(Exception):  # defined in a function: pickle cannot find it again
        pass

    def there() -> None:
        raise Local("half-written")

    with pytest.raises(Exception, match="Local: half-written"):
        side_by_side(lambda: None, there)


def test_one_whose_arguments_do_not_rebuild_it_comes_back_named() -> None:
    def there() -> None:
        raise _Stopped("terminated (SIGTERM)", 143)

    with pytest.raises(RuntimeError, match=r"_Stopped: terminated \(SIGTERM\)"):
        side_by_side(lambda: None, there)


class _Stopped(Exception):
    def __init__(self, why: str, code: int) -> None:  # pickle rebuilds it with one argument
        super().__init__(why)
        self.code = code


def test_a_failure_here_waits_for_the_child_then_is_raised(tmp_path) -> None:
    done = tmp_path / "done"

    def there() -> None:
        time.sleep(0.3)
        done.write_text("written")

    def here() -> None:
        raise ValueError("here failed")

    with pytest.raises(ValueError, match="here failed"):
        side_by_side(here, there)
    assert done.read_text() == "written"  # the child had finished before it was raised


def test_write_all_writes_the_same_bytes_in_two_processes_as_in_one(tmp_path) -> None:
    from support.reportdata import demo_results

    from repromatrix.reports import write_all
    from repromatrix.verdicts import judge
    from repromatrix.verdicts.knownissues import Registry

    written = {}
    for road, side_by_side_from in (("one", 10**9), ("two", 1)):
        stored = demo_results()
        judge(stored, Registry())
        folder = tmp_path / road / "reports"  # one name: the reports name their folder
        paths = write_all(stored, folder, side_by_side_from=side_by_side_from)
        written[road] = {name: path.read_bytes() for name, path in paths.items()}
    assert set(written["two"]) == {"results.json", "junit.xml", "summary.md", "index.html"}
    for name, data in written["one"].items():
        assert written["two"][name] == data, name
