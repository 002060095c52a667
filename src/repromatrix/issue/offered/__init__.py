"""The hunts the bot offers on an issue: hunt_table.py's rows with ``issue=True``, one
module here each, found by the row's name (as cli/ has one per command):

    sweep.py, bisect.py, check.py   the job as the hunt's options, what the
                                    repository's limits refuse before anything is
                                    built, and the answer from the hunt's record

The bot's job kinds are the table's, with the night's watch (a check). ``preflight``
(the parse job) plans a job with the hunt's own planner; ``answer`` (the run job)
runs it on the one road (hunts.hunt.run_hunt) and answers from its record.
Offering a hunt on issues is its row and its module here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from repromatrix.hunts.hunt import Hunt, Voice, run_hunt
from repromatrix.issue.answer import Result, bounded
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.plan import Job, pins_of, probe_for
from repromatrix.matrix.cell import CellSpec
from repromatrix.probe.prober import CellProber, Prober

Options = TypeVar("Options")
Plan = TypeVar("Plan")
Record = TypeVar("Record")


@dataclass(frozen=True)
class Place:
    """Where a job runs: ``plan`` the parse job's folder (the issue's repro), ``cases``
    the cases folder, ``out`` the job's answer folder (its reports and logs)."""

    plan: Path
    cases: Path
    out: Path


def searched(job: Job, place: Place) -> dict[str, Any]:
    """What a search over one package's releases takes from a job (hunts.searched:
    the package, the probe, the cell of the job's pins: today's stack, what the
    issue's reader installs)."""
    assert job.package and job.start and job.end
    return {
        "package": job.package,
        "probe": probe_for(job, place.plan, place.cases),
        "cell": CellSpec(pins=pins_of(job)),
    }


def done(job: Job, headline: str, markdown: str, **checked: Any) -> Result:
    """A job's answer when its hunt ran: the verdict line, the report (masked, cut to
    the answer's limit), and what a check adds (its outcome, the versions followed)."""
    return Result(
        issue=job.issue,
        kind=job.kind,
        status="done",
        headline=headline,
        markdown=bounded(markdown),
        **checked,
    )


def _no_limit(_plan: object, _job: Job, _settings: IssueSettings) -> None:
    return None


@dataclass(frozen=True)
class Offer(Generic[Options, Plan, Record]):
    """One hunt as the bot offers it: ``options`` the job as the hunt's options,
    ``limit`` what the repository's settings refuse in its plan (a UserError),
    ``answer`` its record as the bot's answer."""

    hunt: Hunt[Options, Plan, Record, Prober]
    options: Callable[[Job, Place], Options]
    answer: Callable[[Record, Job, Place], Result]
    limit: Callable[[Plan, Job, IssueSettings], None] = _no_limit


def offer(kind: str) -> Offer:
    """The offer of a job's kind (the watch is a check): its module's ``OFFER``."""
    name = "check" if kind == "watch" else kind
    return importlib.import_module(f"{__name__}.{name}").OFFER


def preflight(job: Job, place: Place, settings: IssueSettings) -> None:
    """Refuse (UserError) what cannot run, before anything is built: the hunt's own
    input checks (its plan), and the repository's limits."""
    _planned(offer(job.kind), job, place, settings)


def answer(job: Job, place: Place, voice: Voice) -> Result:
    """The job's hunt on the one road, with the real prober; its answer."""
    return _answered(offer(job.kind), job, place, voice)


def _planned(
    offered: Offer[Options, Plan, Record], job: Job, place: Place, settings: IssueSettings
) -> None:
    checked = offered.hunt.plan(offered.options(job, place), Voice())
    offered.limit(checked, job, settings)


def _answered(
    offered: Offer[Options, Plan, Record], job: Job, place: Place, voice: Voice
) -> Result:
    record, _code = run_hunt(offered.hunt, offered.options(job, place), CellProber(), voice)
    return offered.answer(record, job, place)
