"""The one way the harness prints through rich: text as given.

- markup off: a case id's ``[default]`` or ``[reentrant]`` is text, not a style tag
  (rich ate both);
- no wrapping: a message stays on one line in a CI log, however narrow rich thinks
  the terminal is (80 columns without one);
- in CI (``CI`` or ``GITHUB_ACTIONS`` set) never a live display: act runs steps on a
  pseudo-terminal, and the progress bars and spinners redrawn there were three lines
  of four in a night's log. A person at a terminal keeps them.
"""

from __future__ import annotations

import os

from rich.console import Console


def in_ci() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS"))


def plain_console(*, stderr: bool = False) -> Console:
    return Console(
        stderr=stderr,
        markup=False,
        highlight=False,
        soft_wrap=True,
        force_terminal=False if in_ci() else None,
    )
