"""A bisect over a package's commits (``--git``): the repository's first-parent
commits between two refs (commits.py), each installed from the repository at that
commit and probed as a release would be (probing.py); or, after a release bisect
found two adjacent releases, the commits between their tags.

A commit's stack travels to its commit date when ``--as-of`` is the bisected package
(the default), as a release's does to its upload day.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from repromatrix import __version__
from repromatrix.environment import Environment, IndexSettings
from repromatrix.environment.store import default_store_root
from repromatrix.errors import UserError
from repromatrix.hunts.bisect.commits import Commit, history, mirror, release_tag, requirement_url
from repromatrix.hunts.bisect.options import BisectOptions, Plan, commit_command
from repromatrix.hunts.bisect.probing import Progress, search_with_probes
from repromatrix.hunts.bisect.record import as_of_said, commits_record, conclude_commits
from repromatrix.hunts.bisect.report import BisectRecord, verdict_line
from repromatrix.hunts.bisect.report import write as write_report
from repromatrix.hunts.rerun import refusal_line
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.names import canonicalize_name
from repromatrix.probe.check import searched_probe
from repromatrix.results import ResultsDir, utc_now
from repromatrix.search.bisection import Find, SearchResult, Status, walk_between


def run_commits(
    options: BisectOptions, show: Console, say: Callable[[str], None]
) -> tuple[BisectRecord, int]:
    """A bisect whose --good and --bad are refs (a tag as v1.2.3, a sha, a branch):
    its commits alone; returns the record written and the exit status."""
    package = canonicalize_name(options.package)
    probe = searched_probe(
        package, options.pins, options.probe, as_of=options.as_of, searched="bisected"
    )
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be at least 1")
    assert options.git is not None
    found = history(options.git, options.good, options.bad, _store(options))
    walk = walk_between(found.commits, found.good, found.bad, options.find)
    index = options.index or IndexSettings.from_environment()
    folder = options.out / _safe(f"{package}-{options.good}-{options.bad}")
    clock = time.monotonic()
    record = BisectRecord(
        package=package,
        good=options.good,
        bad=options.bad,
        find=options.find.value,
        candidates=[c.sha for c in found.commits],
        direction="up" if walk[0].index < walk[-1].index else "down",
        started=utc_now(),
        pins=[pin_text(p) for p in options.pins],
        probe=probe.record(),
        index=index.describe(),
        command=commit_command(options, probe),
        repromatrix=__version__,
        mode="commits",
        jobs=options.jobs,
        as_of={"as_of": as_of_said(options, "commit dates"), "dates": {}},
        commits=commits_record(found),
    )
    script_text = probe.script.read_text() if probe.script else None
    environments: dict[str, Environment] = {}
    with ResultsDir(folder).claimed("fresh"):

        def save() -> None:
            record.seconds = round(time.monotonic() - clock, 2)
            write_report(folder, record, script_text=script_text)

        progress = Progress(show, package, walk, probe, options.jobs)
        result = search_with_probes(
            options,
            probe,
            index,
            folder,
            record,
            save,
            walk,
            lambda c: Pin(package, PinKind.DIRECT, requirement_url(options.git, c)),
            _commit_as_of(options),
            environments,
            progress,
        )
        record.rounds = result.rounds
        conclude_commits(record, result, environments)
        if "refused" in record.as_of:
            record.as_of["refused"]["rerun"] = commit_command(replace(options, as_of=None), probe)
        record.finished = utc_now()
        save()
    say(record.verdict or verdict_line(record))
    if "refused" in record.as_of:
        say(refusal_line(record.as_of["refused"], "commit"))
    return record, 0 if result.status is Status.FOUND else 1


def continue_into_commits(
    options: BisectOptions,
    checked: Plan,
    record: BisectRecord,
    result: SearchResult,
    save: Callable[[], None],
    environments: dict[str, Environment],
    show: Console,
) -> None:
    """Two adjacent releases found: search the commits between their tags."""
    assert options.git is not None and result.first is not None and result.last is not None
    repo = mirror(options.git, _store(options))
    older, newer = sorted((result.first, result.last))
    tags = {v: release_tag(repo, str(v)) for v in (older, newer)}
    missing = [str(v) for v, tag in tags.items() if tag is None]
    if missing:
        record.commits = {"note": f"no tag v{missing[0]} or {missing[0]} in the repository"}
        show.print(f"not going into commits: {record.commits['note']}")
        return
    # The walk's old end is the last release with the old outcome.
    good_ref = tags[result.last] if options.find is Find.FIRST_BAD else tags[result.first]
    bad_ref = tags[result.first] if options.find is Find.FIRST_BAD else tags[result.last]
    found = history(options.git, good_ref, bad_ref, _store(options))
    walk = walk_between(found.commits, found.good, found.bad, options.find)
    releases = {
        key: getattr(record, key) for key in ("first_bad", "last_good", "first_good", "last_bad")
    }
    record.mode = "releases+commits"
    record.commits = {**commits_record(found), "releases": releases}
    progress = Progress(show, record.package, walk, checked.probe, options.jobs)
    inner = search_with_probes(
        options,
        checked.probe,
        checked.index,
        checked.folder,
        record,
        save,
        walk,
        lambda c: Pin(record.package, PinKind.DIRECT, requirement_url(options.git, c)),
        _commit_as_of(options),
        environments,
        progress,
    )
    record.rounds += inner.rounds
    conclude_commits(record, inner, environments)


def _commit_as_of(options: BisectOptions) -> Callable[[Commit], str | None]:
    """A commit's stack is the one of its commit date when as-of is the bisected
    package (the default); a date or none apply as given."""
    package = canonicalize_name(options.package)
    if options.as_of is not None and canonicalize_name(options.as_of) == package:
        return lambda commit: commit.date or None
    return lambda _commit: options.as_of


def _store(options: BisectOptions) -> Path:
    """Where the repository's mirror is kept: beside the environments."""
    return options.env_dir if options.env_dir is not None else default_store_root()


def _safe(name: str) -> str:
    """A folder name from refs (a branch may hold a slash)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name)
