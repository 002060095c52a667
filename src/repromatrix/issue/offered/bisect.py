"""``/repromatrix bisect PACKAGE GOOD BAD``: the bisect hunt on an issue, with today's
stack (what the issue's reader installs); the answer is the verdict, the first bad
step's error, then bisect.md."""

from __future__ import annotations

from repromatrix.hunts.bisect.report import BisectRecord
from repromatrix.hunts.bisect.report import markdown as bisect_markdown
from repromatrix.hunts.bisect.run import BISECT, BisectOptions
from repromatrix.issue.answer import Result, bounded, inline_code
from repromatrix.issue.offered import Offer, Place
from repromatrix.issue.plan import Job, pins_of, probe_for
from repromatrix.matrix.cell import CellSpec
from repromatrix.outcomes import ProbeOutcome
from repromatrix.search.bisection import Find


def options(job: Job, place: Place) -> BisectOptions:
    assert job.package and job.start and job.end
    return BisectOptions(
        package=job.package,
        good=job.start,
        bad=job.end,
        probe=probe_for(job, place.plan, place.cases),
        cell=CellSpec(pins=pins_of(job)),  # today's stack: what the issue's reader installs
        find=Find(job.find),
        out=place.out,
    )


def answer(record: BisectRecord, job: Job, place: Place) -> Result:
    script = (place.plan / job.repro_name()).read_text() if job.case is None else None
    bad = next((s for s in record.steps if s.outcome == ProbeOutcome.BAD.value), None)
    lines = [f"**{record.verdict}**"]
    if bad is not None:
        lines.append(f"- error ({record.package} {bad.version}): {inline_code(bad.detail)}")
    body = "\n".join(lines) + "\n\n" + bisect_markdown(record, script_text=script)
    return Result(
        issue=job.issue,
        kind=job.kind,
        status="done",
        headline=record.verdict,
        markdown=bounded(body),
    )


OFFER = Offer(BISECT, options, answer)
