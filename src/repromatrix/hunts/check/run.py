"""``check``: the smallest hunt, one candidate. Its plan is the probe and the cell,
checked before anything is built; its run one probe, whose verdict is git bisect run's
exit code (0 good, 1 bad, 125 untestable); its report the lines it prints (what the
probe printed on the way, the verdict line). Nothing is written: its logs live in a
temporary folder (or ``workdir``, the issue bot's answer folder).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.hunts.hunt import Hunt, Voice, took_by_cell
from repromatrix.hunts.sources import source_words
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin, PinKind, pin_text, pins_text
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import EXIT_CODES, Observation
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Probe, Trial


@dataclass
class CheckOptions:
    probe: Probe
    cell: CellSpec
    index: IndexSettings | None = None  # None: the user's configuration (the cell's over it)
    workdir: Path | None = None  # where its logs go (None: a temporary folder)


@dataclass(frozen=True)
class Plan:
    """A checked check, ready to run."""

    probe: Probe  # validated: absolute paths, a case its file defines
    cell: CellSpec
    index: IndexSettings
    workdir: Path | None


def plan(options: CheckOptions, voice: Voice) -> Plan:
    """Everything that can be wrong with the input, found before anything is built;
    a note on a case whose parameter id cannot be read before it runs."""
    probe = options.probe.defined(voice.note)
    as_of = options.cell.as_of
    if as_of is not None:
        from repromatrix.environment.as_of import dated_release, is_date

        if not is_date(as_of):
            dated_release(as_of, options.cell.pins)  # a package held fixed: an exact pin
    index = options.index or IndexSettings.from_environment().for_cell(options.cell)
    return Plan(probe, options.cell, index, options.workdir)


def run(plan: Plan, prober: Prober, voice: Voice) -> tuple[Observation, int]:
    """One probe; what it printed is noted, the verdict line said; returns what it
    said and git bisect run's exit code."""
    pins = plan.cell.pins
    with _workdir(plan.workdir) as folder:
        observation = prober(Trial(plan.probe, plan.cell, plan.index, folder))
        tail = observation.output_tail
        if tail.strip():
            voice.note(tail.rstrip())
        elif observation.outcome is not ProbeOutcome.GOOD:
            for log_name in ("check.install.log", "check.run.log"):
                path = folder / log_name
                if path.exists() and path.read_text().strip():
                    lines = path.read_text().strip().splitlines()[-20:]
                    voice.note("\n".join(lines))
    floating = resolved_floating(pins, observation.resolved)
    if floating:
        voice.note(f"resolved: {floating}")
    travel = observation.travel
    when = f" (rest of the stack as of {travel.cutoff})" if travel and travel.cutoff else ""
    voice.say(
        f"{observation.outcome.value}: {plan.probe.label} with {pins_text(pins)}{when} "
        f"({observation.detail}, {observation.seconds:.1f}s){source_words(observation)}"
    )
    return observation, EXIT_CODES[observation.outcome]


CHECK: Hunt[CheckOptions, Plan, Observation, Prober] = Hunt("check", plan, run, took_by_cell)


@contextmanager
def _workdir(given: Path | None) -> Iterator[Path]:
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="repromatrix-check-") as folder:
        yield Path(folder)


def resolved_floating(pins: Sequence[Pin], resolved: Mapping[str, str]) -> str:
    """What the pins that name no exact version resolved to, for the console:
    ``peft>=0.15 -> 0.17.1, trl=latest -> 0.26.2`` (empty when all pins are exact)."""
    shown = [
        f"{pin_text(pin)} -> {resolved.get(pin.package, 'not installed')}"
        for pin in pins
        if pin.kind not in (PinKind.EXACT, PinKind.ABSENT)
    ]
    return ", ".join(shown)
