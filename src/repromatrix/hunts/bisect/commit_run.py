"""A bisect over a package's commits (``--git``): the repository's first-parent
commits between two refs (commits.py; ``plan_commits``), each installed from the
repository at that commit and probed as a release would be (probing.py;
``run_commits``); or, after a release bisect found two adjacent releases, the commits
between their tags (``continue_into_commits``).

A commit's stack travels to its commit date when ``--as-of`` is the bisected package
(the default), as a release's does to its upload day.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from repromatrix.environment import IndexSettings
from repromatrix.environment.store import default_store_root
from repromatrix.errors import UserError
from repromatrix.hunts.bisect.book import (
    Book,
    as_of_said,
    commits_record,
    conclude_commits,
    finish,
    told,
)
from repromatrix.hunts.bisect.commits import (
    Commit,
    History,
    history,
    mirror,
    release_tag,
    requirement_url,
)
from repromatrix.hunts.bisect.options import BisectOptions, Plan, commit_command
from repromatrix.hunts.bisect.probing import Progress, Walk, search_with_probes
from repromatrix.hunts.bisect.report import BisectRecord
from repromatrix.hunts.rerun import reproducible
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.names import canonicalize_name
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Probe, Trial, searched_probe
from repromatrix.results import ResultsDir
from repromatrix.search.bisection import Find, SearchResult, walk_between


@dataclass
class CommitPlan:
    """A checked commit bisect (``--git`` with refs that are not both releases)."""

    package: str
    probe: Probe
    found: History  # the repository's first-parent commits between the refs
    walk: list[Commit]
    index: IndexSettings
    folder: Path
    options: BisectOptions
    command: str = ""


def plan_commits(options: BisectOptions) -> CommitPlan:
    """A bisect whose --good and --bad are refs (a tag as v1.2.3, a sha, a branch):
    its input checked and its commits listed (the repository mirrored) before
    anything is built."""
    package = canonicalize_name(options.package)
    probe = searched_probe(
        package, options.pins, options.probe, as_of=options.as_of, searched="bisected"
    )
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be at least 1")
    assert options.git is not None
    found = history(options.git, options.good, options.bad, _store(options))
    walk = walk_between(found.commits, found.good, found.bad, options.find)
    index = options.index or IndexSettings.from_environment().for_cell(options.cell)
    folder = options.out / _safe(f"{package}-{options.good}-{options.bad}")
    command = commit_command(options, probe)
    return CommitPlan(package, probe, found, walk, index, folder, options, command)


def run_commits(
    checked: CommitPlan, prober: Prober, show: Console, say: Callable[[str], None]
) -> tuple[BisectRecord, int]:
    """Its commits alone; returns the record written and the exit status."""
    options, probe, walk = checked.options, checked.probe, checked.walk
    record = BisectRecord(
        package=checked.package,
        good=options.good,
        bad=options.bad,
        find=options.find.value,
        candidates=[c.sha for c in checked.found.commits],
        direction="up" if walk[0].index < walk[-1].index else "down",
        **reproducible(options.pins, probe, checked.index, checked.command),
        mode="commits",
        jobs=options.jobs,
        as_of={"as_of": as_of_said(options, "commit dates"), "dates": {}},
        commits=commits_record(checked.found),
    )
    book = Book(record, checked.folder, probe.script.read_text() if probe.script else None)
    with ResultsDir(checked.folder).claimed("fresh"):
        progress = Progress(show, checked.package, walk, probe, options.jobs)
        trial = _commit_trial(options, probe, checked.index, checked.folder)
        result = search_with_probes(
            Walk(walk, trial, options.find, options.jobs), prober, book, progress
        )
        record.rounds = result.rounds
        conclude_commits(record, result)
        finish(book, lambda: commit_command(options.today(), probe))
    return record, told(record, "commit", say)


def continue_into_commits(
    options: BisectOptions,
    checked: Plan,
    book: Book,
    result: SearchResult,
    prober: Prober,
    show: Console,
) -> None:
    """Two adjacent releases found: search the commits between their tags."""
    assert options.git is not None and result.first is not None and result.last is not None
    record = book.record
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
    trial = _commit_trial(options, checked.probe, checked.index, checked.folder)
    inner = search_with_probes(
        Walk(walk, trial, options.find, options.jobs), prober, book, progress
    )
    record.rounds += inner.rounds
    conclude_commits(record, inner)


def _commit_trial(
    options: BisectOptions, probe: Probe, index: IndexSettings, folder: Path
) -> Callable[[Commit], Trial]:
    """A commit's trial: the package installed from the repository at that commit,
    over the held cell; its stack the one of its commit date when as-of is the
    bisected package (the default), a date or none as given."""
    package = canonicalize_name(options.package)
    by_date = options.as_of is not None and canonicalize_name(options.as_of) == package

    def trial(commit: Commit) -> Trial:
        pin = Pin(package, PinKind.DIRECT, requirement_url(options.git or "", commit))
        cell = options.cell.with_pins(pin)
        if by_date:
            cell = replace(cell, as_of=commit.date or None)
        return Trial(probe, cell, index, folder / "steps", str(commit))

    return trial


def _store(options: BisectOptions) -> Path:
    """Where the repository's mirror is kept: beside the environments."""
    return options.env_dir if options.env_dir is not None else default_store_root()


def _safe(name: str) -> str:
    """A folder name from refs (a branch may hold a slash)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name)
