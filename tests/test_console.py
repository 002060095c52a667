"""The harness's rich console prints text as given: a case id's [param] survives, a
long message stays on one line, and in CI nothing is redrawn (no spinner frames)."""

from __future__ import annotations

import io

import pytest
from rich.progress import Progress

from repromatrix.console import plain_console

CASE = "test_whisper_lora.py::test_lora_gets_gradients[reentrant] and [default]"


def test_brackets_survive_and_a_long_line_is_not_wrapped(monkeypatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    console = plain_console()
    console.file = io.StringIO()
    line = f"    failed       {CASE}  " + "x" * 200
    console.print(line)
    assert console.file.getvalue() == line + "\n"


@pytest.mark.parametrize("variable", ["CI", "GITHUB_ACTIONS"])
def test_in_ci_a_pseudo_terminal_gets_no_live_display(monkeypatch, variable) -> None:
    monkeypatch.setenv(variable, "true")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # what a pseudo-terminal looks like to rich
    console = plain_console()
    console.file = io.StringIO()
    assert not console.is_terminal
    with Progress(console=console) as progress:
        task = progress.add_task("combinations", total=3)
        for _ in range(3):
            progress.advance(task)
    assert "\x1b[?25l" not in console.file.getvalue()  # no cursor hiding, no redraws
