"""The bisect's book: what it writes into its record (report.BisectRecord) as the
search goes (``Book`` holds the record and writes it out, report.py, as it changes):
each step with the stack of its day (as-of dates, notes, refusals), the answer once
the search ends, with the cell it was found in, and for a commit search the commits
and the one that changed the outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import Version

from repromatrix.execution import host
from repromatrix.hunts.bisect.commits import History
from repromatrix.hunts.bisect.options import BisectOptions
from repromatrix.hunts.bisect.report import (
    BisectRecord,
    StepRecord,
    github_repository,
    project_urls,
    verdict_line,
)
from repromatrix.hunts.bisect.report import write as write_report
from repromatrix.hunts.rerun import note_refusal, refusal_line
from repromatrix.hunts.sources import note_sources
from repromatrix.matrix import DEFAULT_PACKAGES
from repromatrix.names import canonicalize_name
from repromatrix.probe.observation import BuiltCell, Observation
from repromatrix.results import utc_now
from repromatrix.search.bisection import Find, SearchResult, Step

# Packages shown in bisect.md's environment line (all of them are in bisect.json):
# the stack a matrix declares by default, what a reader of the issue needs.
SHOWN_PACKAGES = frozenset(canonicalize_name(p) for p in DEFAULT_PACKAGES)


@dataclass
class Book:
    """A bisect's record and where it is written: bisect.json and bisect.md in
    ``folder``, rewritten at every save (``script_text``: the script shown in
    bisect.md)."""

    record: BisectRecord
    folder: Path
    script_text: str | None = None
    clock: float = field(default_factory=time.monotonic)

    def save(self) -> None:
        self.record.seconds = round(time.monotonic() - self.clock, 2)
        write_report(self.folder, self.record, script_text=self.script_text)


def finish(book: Book, today: Callable[[], str]) -> None:
    """The record's last save; where the date cap kept candidates from installing,
    with ``today()``, the command that reruns it with today's stack."""
    record = book.record
    if "refused" in record.as_of:
        record.as_of["refused"]["rerun"] = today()
    record.finished = utc_now()
    book.save()


def told(record: BisectRecord, what: str, say: Callable[[str], None]) -> int:
    """The verdict line (and the date cap's refusals, ``what`` a candidate is) to
    ``say``; the exit status."""
    say(record.verdict or verdict_line(record))
    if "refused" in record.as_of:
        say(refusal_line(record.as_of["refused"], what))
    return 0 if record.status == "found" else 1


def add_step(record: BisectRecord, step: Step) -> None:
    """One finished step into the record, with what its as-of stack said."""
    observation: Observation = step.observation  # type: ignore[assignment]
    record.steps.append(_step_record(step, record.package))
    note_sources(record.sources, record.sources_changed, observation)
    travel = observation.travel
    if travel is not None:
        record.as_of["dates"][str(step.candidate)] = travel.cutoff
        record.as_of.setdefault("packages", list(travel.packages) if travel.cutoff else [])
        if travel.note:
            record.as_of.setdefault("notes", []).append(travel.note)
        # What newer exact pins kept at today's, and those pins.
        for key, names in (("today", travel.kept), ("needed_by", travel.kept_for)):
            known = record.as_of.setdefault(key, []) if names else []
            known += [name for name in names if name not in known]
    cap = observation.date_cap
    if cap is not None:
        note_refusal(record.as_of.setdefault("refused", {}), str(step.candidate), cap.packages)


def conclude(record: BisectRecord, result: SearchResult[Version]) -> None:
    """The answer of a release search into the record, with the cell it was found in."""
    _conclude(record, result, {str(step.candidate): step for step in result.steps})


def _conclude(record: BisectRecord, result: SearchResult, steps: dict[str, Step]) -> None:
    """``steps``: each candidate's step, by the name the record gives it (a version,
    a commit's full sha)."""
    record.status = result.status.value
    record.reason = result.reason
    record.could_be_first = [str(v) for v in result.could_be_first]
    first = str(result.first) if result.first is not None else None
    last = str(result.last) if result.last is not None else None
    if result.find is Find.FIRST_BAD:
        record.first_bad, record.last_good = first, last
    else:
        record.first_good, record.last_bad = first, last
    # The cell of the answer (or of the last candidate that was built) says what was
    # installed and where the project lives.
    built = {name: s.observation.cell for name, s in steps.items() if s.observation.cell}
    at = first if first in built else next(reversed(built), None)
    cell: BuiltCell | None = built.get(at) if at else None
    record.environment = {"python": None, "host": host.describe()}
    if cell is not None:
        if cell.interpreter is not None:
            urls = project_urls(cell.interpreter, record.package)
            record.repository = github_repository(urls)
        record.environment.update(
            python=cell.python,
            at=at,
            resolved={
                name: version
                for name, version in cell.resolved.items()
                if name in SHOWN_PACKAGES or name == record.package
            },
            all_resolved=dict(cell.resolved),
        )
    record.verdict = verdict_line(record)


def _step_record(step: Step[Version], package: str) -> StepRecord:
    observation: Observation = step.observation  # type: ignore[assignment]
    cell, travel = observation.cell, observation.travel
    return StepRecord(
        version=str(step.candidate),
        outcome=observation.outcome.value,
        seconds=round(observation.seconds, 2),
        role=step.role,
        detail=observation.detail,
        environment=cell.identity if cell else None,
        reused=cell.reused if cell else None,
        build_seconds=cell.build_seconds if cell else None,
        installed=observation.resolved.get(package),
        round=step.round,
        as_of=travel.cutoff if travel else None,
    )


def conclude_commits(record: BisectRecord, result: SearchResult) -> None:
    """The answer of a commit search: full shas in first_*/last_*, the commit's
    subject and PR in ``commits.first``."""
    shas = SearchResult(
        find=result.find,
        walk=[c.sha for c in result.walk],
        status=result.status,
        steps=[],
        first=result.first.sha if result.first is not None else None,
        last=result.last.sha if result.last is not None else None,
        could_be_first=[c.sha for c in result.could_be_first],
        reason=result.reason,
        rounds=result.rounds,
    )
    _conclude(record, shas, {step.candidate.sha: step for step in result.steps})
    if result.first is not None:
        record.commits["first"] = result.first.describe()
        record.commits["last"] = result.last.describe() if result.last is not None else None
        pr = f" (PR #{result.first.pr})" if result.first.pr else ""
        record.verdict = (
            f"first {record.first_word} commit: {result.first.sha[:12]} "
            f"{result.first.subject}{pr}; {verdict_line(record)}"
        )


def commits_record(found: History) -> dict[str, Any]:
    """The commits a search walks, as the record's ``commits`` holds them."""
    return {
        "repository": found.url,
        "good_ref": found.good_ref,
        "bad_ref": found.bad_ref,
        "count": len(found.commits),
        "list": [c.describe() for c in found.commits],
    }


def as_of_said(options: BisectOptions, default: str) -> str:
    """The record's ``as_of``: none, a date, or the bisected package followed by what
    that means (``default``: "commit dates")."""
    if options.as_of is None:
        return "none"
    if canonicalize_name(options.as_of) == canonicalize_name(options.package):
        return f"{options.as_of} ({default})"
    return options.as_of
