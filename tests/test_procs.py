"""procs.stop_signals: SIGTERM and SIGHUP become an Interrupted (a KeyboardInterrupt)
in the main thread, with 128 + the signal as exit status; an ignored signal stays
ignored (nohup); the handlers before are put back. Real signals to this process."""

from __future__ import annotations

import os
import signal
import time

import pytest

from repromatrix import procs


def _deliver(sig: signal.Signals) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.05)  # the handler runs in the main thread between bytecodes


@pytest.mark.parametrize(
    ("sig", "words"),
    [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGHUP, "hung up (SIGHUP)")],
)
@pytest.mark.usefixtures("sighup_as_in_a_terminal")
def test_a_stop_signal_is_an_interrupt_with_its_words(sig: signal.Signals, words: str) -> None:
    before = signal.getsignal(sig)
    with pytest.raises(KeyboardInterrupt) as stopped, procs.stop_signals():
        _deliver(sig)
    assert procs.interrupt_words(stopped.value) == (words, 128 + sig)
    assert signal.getsignal(sig) == before


def test_ctrl_c_keeps_its_words_and_an_ignored_signal_stays_ignored() -> None:
    assert procs.interrupt_words(KeyboardInterrupt()) == ("interrupted", 130)
    saved = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with procs.stop_signals():
            _deliver(signal.SIGHUP)  # as under nohup: the run goes on
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, saved)


def test_a_closed_output_asks_to_stop_once_the_running_work_is_done() -> None:
    with procs.stop_signals():  # a new command starts with its output open
        assert procs.stop_wanted() is None
        procs.output_closed()
        wanted = procs.stop_wanted()
        assert wanted is not None
        assert procs.interrupt_words(wanted) == ("stopped: its output was closed", 141)
    with procs.stop_signals():
        assert procs.stop_wanted() is None
