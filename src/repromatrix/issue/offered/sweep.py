"""``/repromatrix sweep PACKAGE FROM..TO``: the sweep hunt on an issue. At most the
repository's ``max_releases`` releases; the answer is the summary, the first bad
release's error and environment, then sweep.md."""

from __future__ import annotations

from repromatrix.errors import UserError
from repromatrix.hunts.sweep.options import Plan
from repromatrix.hunts.sweep.report import ResultRecord, SweepRecord
from repromatrix.hunts.sweep.run import SWEEP, Releases, SweepOptions
from repromatrix.issue.answer import Result, inline_code
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.offered import Offer, Place, done, searched
from repromatrix.issue.plan import Job, pins_of
from repromatrix.outcomes import ProbeOutcome


def options(job: Job, place: Place) -> SweepOptions:
    assert job.start and job.end
    start, end, releases = job.start, job.end, Releases(job.releases)
    return SweepOptions(
        **searched(job, place), start=start, end=end, releases=releases, out=place.out
    )


def limit(checked: Plan, job: Job, settings: IssueSettings) -> None:
    count = len(checked.candidates)
    if count > settings.max_releases:
        raise UserError(
            f"{checked.package} has {count} releases from {checked.low} to {checked.high} "
            f"({job.releases}); a sweep here tests at most {settings.max_releases}: "
            "narrow the range or add --releases latest-patch"
        )


def answer(record: SweepRecord, job: Job, place: Place) -> Result:
    report = next(place.out.glob("*/sweep.md"))
    bad = next((r for r in record.results if r.outcome == ProbeOutcome.BAD.value), None)
    lines = [f"**{record.summary}**"]
    if bad is not None and bad.message:
        lines.append(f"- error ({record.package} {bad.version}): {inline_code(bad.message)}")
    lines.append(f"- environment: {_environment(bad or next(iter(record.results), None), job)}")
    lines.append("- reproducers: `reproduce-<version>.py` per bad release, in the run's artifact")
    body = "\n".join(lines) + "\n\n" + report.read_text(encoding="utf-8")
    return done(job, record.summary, body)


def _environment(result: ResultRecord | None, job: Job) -> str:
    if result is None:
        return "nothing was built"
    resolved = result.resolved or {}
    names = [job.package or "", *(pin.package for pin in pins_of(job))]
    shown = ", ".join(f"{n} {resolved[n]}" for n in names if n in resolved)
    return f"Python {result.python or '?'}; {shown or 'nothing resolved'}"


OFFER = Offer(SWEEP, options, answer, limit)
