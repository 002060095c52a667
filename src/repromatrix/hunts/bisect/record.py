"""What a bisect writes into its record (report.BisectRecord) as the search goes: each
step with the stack of its day (as-of dates, notes, refusals), the answer once the
search ends, with the environment it was found in, and for a commit search the
commits and the one that changed the outcome. report.py writes the record out.
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from repromatrix.environment import Environment
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
from repromatrix.hunts.rerun import note_refusal
from repromatrix.matrix import DEFAULT_PACKAGES
from repromatrix.names import canonicalize_name
from repromatrix.search.bisection import Find, SearchResult, Step

# Packages shown in bisect.md's environment line (all of them are in bisect.json):
# the stack a matrix declares by default, what a reader of the issue needs.
SHOWN_PACKAGES = frozenset(canonicalize_name(p) for p in DEFAULT_PACKAGES)


def add_step(record: BisectRecord, step: Step) -> None:
    """One finished step into the record, with what its as-of stack said."""
    record.steps.append(_step_record(step, record.package))
    travelled = step.observation.extra.get("as_of")
    if travelled is not None:
        record.as_of["dates"][str(step.candidate)] = travelled.get("date")
        record.as_of.setdefault("packages", travelled.get("packages", []))
        if travelled.get("note"):
            record.as_of.setdefault("notes", []).append(travelled["note"])
        for key in ("today", "needed_by"):  # what newer exact pins kept at today's
            known = record.as_of.setdefault(key, []) if travelled.get(key) else []
            known += [name for name in travelled.get(key) or [] if name not in known]
    cap = step.observation.extra.get("as_of_cap")
    if cap is not None:
        note_refusal(record.as_of.setdefault("refused", {}), str(step.candidate), cap)


def conclude(
    record: BisectRecord, result: SearchResult[Version], environments: dict[str, Environment]
) -> None:
    """The answer of a release search into the record, with its environment."""
    record.status = result.status.value
    record.reason = result.reason
    record.could_be_first = [str(v) for v in result.could_be_first]
    first = str(result.first) if result.first is not None else None
    last = str(result.last) if result.last is not None else None
    if result.find is Find.FIRST_BAD:
        record.first_bad, record.last_good = first, last
    else:
        record.first_good, record.last_bad = first, last
    # The environment of the answer (or of the last candidate that was built) says
    # what was installed and where the project lives.
    at = first or next((v for v in reversed(environments)), None)
    env = environments.get(at) if at else None
    record.environment = {"python": None, "host": host.describe()}
    if env is not None:
        record.repository = github_repository(project_urls(env, record.package))
        record.environment.update(
            python=env.interpreter.version,
            at=at,
            resolved={
                name: version
                for name, version in env.resolved.items()
                if name in SHOWN_PACKAGES or name == record.package
            },
            all_resolved=env.resolved,
        )
    record.verdict = verdict_line(record)


def _step_record(step: Step[Version], package: str) -> StepRecord:
    observation = step.observation
    extra = observation.extra
    return StepRecord(
        version=str(step.candidate),
        outcome=observation.outcome.value,
        seconds=round(observation.seconds, 2),
        role=step.role,
        detail=observation.detail,
        environment=extra.get("environment"),
        reused=extra.get("reused"),
        build_seconds=extra.get("build_seconds"),
        installed=(extra.get("resolved") or {}).get(package),
        round=step.round,
        as_of=(extra.get("as_of") or {}).get("date"),
    )


def conclude_commits(
    record: BisectRecord, result: SearchResult, environments: dict[str, Environment]
) -> None:
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
    by_short = {str(c): c for c in result.walk}
    for short in list(environments):
        if short in by_short:
            environments[by_short[short].sha] = environments[short]
    conclude(record, shas, environments)
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
