"""``/repromatrix check`` and the night's watch: the check hunt on an issue, in a cell
of the job's pins (the repository's, the repro's, the command's), its logs in the
answer folder; the answer is the outcome with the versions it followed, the error and
the output's last lines."""

from __future__ import annotations

import time

from repromatrix.errors import UserError
from repromatrix.github.markdown import code_block, code_span, details, one_line
from repromatrix.hunts.check.run import CHECK, CheckOptions
from repromatrix.issue.answer import Result, bounded, inline_code
from repromatrix.issue.follow import follow
from repromatrix.issue.offered import Offer, Place, done
from repromatrix.issue.plan import Job, pins_of, probe_for
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import pins_text
from repromatrix.probe.observation import Observation
from repromatrix.redact import redact_text


def options(job: Job, place: Place) -> CheckOptions:
    if not job.pins:
        raise UserError(
            "check needs the packages to install: --pin PKG==VER, or name them on the "
            "repro's first line (# repromatrix: PKG PKG==VER)"
        )
    probe = probe_for(job, place.plan, place.cases)
    return CheckOptions(probe=probe, cell=CellSpec(pins=pins_of(job)), workdir=place.out / "steps")


def answer(observation: Observation, job: Job, place: Place) -> Result:
    pins = pins_of(job)
    resolved = observation.resolved
    followed = job.watched or [p.package for p in pins]
    versions = {name: resolved[name] for name in followed if name in resolved}
    outcome = observation.outcome.value
    said = " ".join(f"{name} {version}" for name, version in versions.items()) or pins_text(pins)
    headline = f"{outcome} with {said} ({one_line(redact_text(observation.detail), 500)})"
    lines = [f"**{outcome}** with {said}"]
    if outcome != "good":
        lines.append(f"- error: {inline_code(observation.detail)}")
    python = observation.cell.python if observation.cell else None
    shown = {p.package: resolved.get(p.package, "not installed") for p in pins}
    environment = ", ".join(f"{k} {v}" for k, v in shown.items())
    lines.append(f"- environment: Python {python or '?'}; {environment}")
    lines.append(f"- pins: {code_span(pins_text(pins))}")
    tail = observation.output_tail
    if tail.strip() and outcome != "good":
        lines += ["", details("output (last lines)", code_block(tail.strip()[-3000:]))]
    result = done(job, headline, "\n".join(lines) + "\n", outcome=outcome, versions=versions)
    if job.kind == "watch" and job.follow_seconds():
        # The night's follow-up (issue/follow.py): a flip confirmed and named, main branches.
        stop_at = time.monotonic() + job.follow_seconds()
        probe = probe_for(job, place.plan, place.cases)
        follow(job, result, observation, probe, place.out, stop_at=stop_at)
        result.markdown = bounded(result.markdown)
    return result


OFFER = Offer(CHECK, options, answer)
