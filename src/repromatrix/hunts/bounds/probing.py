"""The cells of a bounds hunt, made by the prober it is handed: a set of the tested
dependencies' versions becomes a cell of exact pins (the target, those versions, the
held ``--pin``s, the other direct dependencies as declared), its probe is run, and
what it said is recorded as a ``Run`` with the command that reruns it and, for a bad
one, what it died of (its signature: execution/_cell/signature.py).

A release the target's range shuts out (the cap's victims) is installed through uv's
``--override``: the target's own requirement would refuse it.

What a cell says, for the bounds: uv refusing the set is a skip (``unresolvable``:
nothing ran, ddmin moves the package uv names along); a release that does not install
(no wheel for this Python, a failed build) is bad: users of this Python cannot have
it; an exit 125 or a skipped case is a skip.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import replace

from repromatrix.hunts.bounds.cellset import Seen, Versions
from repromatrix.hunts.bounds.options import Plan
from repromatrix.hunts.bounds.record import Run
from repromatrix.hunts.rerun import rerun_command
from repromatrix.hunts.sweep.options import probe_args
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import Observation
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Trial
from repromatrix.redact import portable_path, redact_text


class CellMaker:
    """The oracle of the engine (cellset.Oracle): each set a cell, numbered in the
    order asked, recorded through ``on_run``."""

    def __init__(self, checked: Plan, prober: Prober, on_run: Callable[[Run], None]) -> None:
        self.plan = checked
        self.prober = prober
        self.on_run = on_run
        self._lock = threading.Lock()
        self._numbers = iter(range(1, 100_000))
        self._by_name = {d.name: d for d in checked.dependencies}

    def cell(self, versions: Versions) -> CellSpec:
        """The cell of a set: target, tested versions, held pins, the rest as declared;
        overrides for what the target's range shuts out."""
        checked = self.plan
        pins = [
            checked.target.pin,
            *(Pin(name, PinKind.EXACT, str(v)) for name, v in sorted(versions.items())),
            *checked.free,
        ]
        outside = [
            f"{name}=={v}"
            for name, v in sorted(versions.items())
            if not self._by_name[name].admits(v)
        ]
        base = checked.options.cell
        return replace(base.with_pins(*pins), overrides=(*base.overrides, *outside))

    def __call__(self, versions: Versions, role: str) -> Seen:
        with self._lock:
            number = next(self._numbers)
        cell = self.cell(versions)
        trial = Trial(
            self.plan.probe, cell, self.plan.index, self.plan.folder / "steps", f"cell-{number:02d}"
        )
        observation = self.prober(trial)
        seen = _seen(observation, number)
        self.on_run(
            Run(
                cell=number,
                role=role,
                pins={name: str(v) for name, v in sorted(versions.items())},
                outcome=seen.outcome,
                error="" if seen.outcome is ProbeOutcome.GOOD else seen.detail,
                # What it died of (execution/_cell/signature.py), as every record has it.
                signature=observation.signature.as_dict() if observation.signature else None,
                repro=self.repro(versions),
                seconds=round(observation.seconds, 2),
                environment=observation.cell.identity if observation.cell else None,
            )
        )
        return seen

    def repro(self, versions: Versions) -> str:
        """``repromatrix check`` of this cell, as a user types it (no machine paths)."""
        checked = self.plan
        args = [*probe_args(checked.probe)]
        for pin in (checked.target.pin, *checked.options.cell.pins):
            args += ["--pin", pin_text(pin)]
        for name, version in sorted(versions.items()):
            args += ["--pin", f"{name}=={version}"]
        for pin in checked.free:
            args += ["--pin", pin_text(pin)]
        outside = {n: str(v) for n, v in versions.items() if not self._by_name[n].admits(v)}
        if outside:
            # The target's own requirement refuses these: uv's --override, through --cell.
            overrides = [f"{n}=={v}" for n, v in sorted(outside.items())]
            cell = {"id": "shut-out", "pins": outside, "overrides": overrides}
            args += ["--cell", json.dumps(cell, separators=(",", ":"), sort_keys=True)]
        if checked.options.cell.python:
            args += ["--python", checked.options.cell.python]
        if checked.options.wheelhouse is not None:
            args += ["--wheelhouse", portable_path(checked.options.wheelhouse)]
        return rerun_command("check", args)


def _seen(observation: Observation, number: int) -> Seen:
    failure = observation.failure
    detail = redact_text(observation.detail)
    if failure is not None and failure.stage == "resolve":
        return Seen(
            ProbeOutcome.SKIP, f"unresolvable: {redact_text(failure.message)}", True, number
        )
    if failure is not None and failure.stage == "install":
        return Seen(
            ProbeOutcome.BAD, f"does not install: {redact_text(failure.message)}", False, number
        )
    return Seen(observation.outcome, detail, False, number)
