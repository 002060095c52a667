"""The hunts: each finds where an outcome changes, with one probe per candidate from
the prober it is handed (probe/) and a pure search (search/). One folder per hunt,
one row each in hunt_table.py:

bisect/    the release (or, with --git, the commit) where a case or script changed outcome
sweep/     every selected release of one package probed; outcomes as ranges
culprit/   which of the packages that moved between two locks broke it
check/     one probe in one cell: the smallest hunt, git bisect run's exit code
rerun.py   the command a report tells its reader to run

Every hunt has one shape (``Hunt``, what its run module provides): its options are
checked and its candidates listed before anything is built (``plan``), the plan runs
with the prober it is handed (``run(plan, prober)``: tests hand their own; parallel
probes and GPUs wrap it, probe/rounds.py), and the run writes its record and reports
as it goes and ends with an exit status; the plan carries the command that reruns it
(``plan.command``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from repromatrix.probe.prober import Prober


class Hunt(Protocol):
    """What a hunt's run module (``HuntRow.module``) provides."""

    def plan(self, options: Any) -> Any:
        """The options checked, the candidates listed: a plan (with ``command``, the
        line that reruns it), or a UserError before anything is built."""

    def run(
        self, plan: Any, prober: Prober, *, say: Callable[[str], None] = print
    ) -> tuple[Any, int]:
        """The plan, with ``prober`` making every probe: its record (written as it
        goes: JSON, Markdown) and the exit status."""
