"""``/repromatrix bisect PACKAGE GOOD BAD``: the bisect hunt on an issue, with today's
stack (what the issue's reader installs); the answer is the verdict, the first bad
step's error, then bisect.md."""

from __future__ import annotations

from repromatrix.hunts.bisect.report import BisectRecord
from repromatrix.hunts.bisect.report import markdown as bisect_markdown
from repromatrix.hunts.bisect.run import BISECT, BisectOptions
from repromatrix.issue.answer import Result, inline_code
from repromatrix.issue.offered import Offer, Place, done, searched
from repromatrix.issue.plan import Job
from repromatrix.outcomes import ProbeOutcome
from repromatrix.search.bisection import Find


def options(job: Job, place: Place) -> BisectOptions:
    assert job.start and job.end
    good, bad, find = job.start, job.end, Find(job.find)
    return BisectOptions(**searched(job, place), good=good, bad=bad, find=find, out=place.out)


def answer(record: BisectRecord, job: Job, place: Place) -> Result:
    script = (place.plan / job.repro_name()).read_text() if job.case is None else None
    bad = next((s for s in record.steps if s.outcome == ProbeOutcome.BAD.value), None)
    lines = [f"**{record.verdict}**"]
    if bad is not None:
        lines.append(f"- error ({record.package} {bad.version}): {inline_code(bad.detail)}")
    body = "\n".join(lines) + "\n\n" + bisect_markdown(record, script_text=script)
    return done(job, record.verdict, body)


OFFER = Offer(BISECT, options, answer)
