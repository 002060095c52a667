"""``check``: the smallest hunt, one candidate. Its plan is the probe and the cell,
checked before anything is built; its run one probe, whose verdict is git bisect run's
exit code (0 good, 1 bad, 125 untestable); its report the lines it prints (what the
probe printed on the way, the verdict line). Nothing is written: its logs live in a
temporary folder.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.hunts.sources import source_words
from repromatrix.matrix.cell import CellSpec
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.check import pins_text, resolved_floating
from repromatrix.probe.observation import EXIT_CODES, Observation
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Probe, Trial

Log = Callable[[str], None]


@dataclass
class CheckOptions:
    probe: Probe
    cell: CellSpec
    index: IndexSettings | None = None  # None: the user's configuration (the cell's over it)


@dataclass(frozen=True)
class Plan:
    """A checked check, ready to run."""

    probe: Probe  # validated: absolute paths, a case its file defines
    cell: CellSpec
    index: IndexSettings


def plan(options: CheckOptions, say: Log = print) -> Plan:
    """Everything that can be wrong with the input, found before anything is built;
    ``say`` gets a note on a case whose parameter id cannot be read before it runs."""
    probe = options.probe.defined(say)
    as_of = options.cell.as_of
    if as_of is not None:
        from repromatrix.environment.as_of import dated_release, is_date

        if not is_date(as_of):
            dated_release(as_of, options.cell.pins)  # a package held fixed: an exact pin
    index = options.index or IndexSettings.from_environment().for_cell(options.cell)
    return Plan(probe, options.cell, index)


def run(
    plan: Plan, prober: Prober, *, say: Log = print, tell: Log = print
) -> tuple[Observation, int]:
    """One probe; what it printed goes to ``say``, the verdict line to ``tell``;
    returns what it said and git bisect run's exit code."""
    pins = plan.cell.pins
    with tempfile.TemporaryDirectory(prefix="repromatrix-check-") as folder:
        observation = prober(Trial(plan.probe, plan.cell, plan.index, Path(folder)))
        tail = observation.output_tail
        if tail.strip():
            say(tail.rstrip())
        elif observation.outcome is not ProbeOutcome.GOOD:
            for log_name in ("check.install.log", "check.run.log"):
                path = Path(folder) / log_name
                if path.exists() and path.read_text().strip():
                    lines = path.read_text().strip().splitlines()[-20:]
                    say("\n".join(lines))
    floating = resolved_floating(pins, observation.resolved)
    if floating:
        say(f"resolved: {floating}")
    travel = observation.travel
    when = f" (rest of the stack as of {travel.cutoff})" if travel and travel.cutoff else ""
    tell(
        f"{observation.outcome.value}: {plan.probe.label} with {pins_text(pins)}{when} "
        f"({observation.detail}, {observation.seconds:.1f}s){source_words(observation)}"
    )
    return observation, EXIT_CODES[observation.outcome]
