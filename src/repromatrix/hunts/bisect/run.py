"""A bisect over released versions of one package, from the command line's options
to reports/bisect/<package>-<good>-<bad>/:

plan: check the input, list candidates (options.py, probe/candidates.py) -> run:
search with one probe per step from the prober it is handed (probing.py:
search/bisection.py's k-section) -> the answer into the record (book.py) ->
bisect.json + bisect.md (report.py), rewritten as it goes.

With ``--git``, refs that are not both releases plan a commit bisect instead, and a
release bisect that finds two adjacent releases goes on into the commits between
them (commit_run.py).

Progress goes to stderr (rich): which version, how many steps are left at most;
the verdict line to stdout. Exit status: 0 found, 1 could not conclude, 2 bad input.
"""

from __future__ import annotations

from packaging.version import Version

from repromatrix.environment.as_of import before_first_release
from repromatrix.hunts.bisect.book import Book, conclude, finish, told
from repromatrix.hunts.bisect.commit_run import (
    CommitPlan,
    continue_into_commits,
    plan_commits,
    run_commits,
)
from repromatrix.hunts.bisect.options import (
    BisectOptions,
    Plan,
    releases_given,
    reproduce_command,
)
from repromatrix.hunts.bisect.options import plan as plan_releases
from repromatrix.hunts.bisect.probing import Progress, Walk, search_with_probes
from repromatrix.hunts.bisect.report import BisectRecord
from repromatrix.hunts.hunt import Hunt, Voice, took_by_cell
from repromatrix.hunts.rerun import reproducible
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Trial
from repromatrix.results import ResultsDir
from repromatrix.search.bisection import Status

# A caller takes its options from here too (cli, issue, culprit).
__all__ = ["BISECT", "BisectOptions"]


def plan(options: BisectOptions, _voice: Voice) -> Plan | CommitPlan:
    """Everything wrong with the input, found before anything is built. With
    ``--git``, refs that are not both releases of the package are a commit bisect."""
    if options.git is not None and not releases_given(options):
        return plan_commits(options)
    return plan_releases(options)


def run(checked: Plan | CommitPlan, prober: Prober, voice: Voice) -> tuple[BisectRecord, int]:
    """Run a planned bisect; returns the record written and the exit status.

    A release bisect with ``--git`` that finds its two adjacent releases goes on into
    the commits between their tags."""
    show, say = voice.show, voice.say
    if isinstance(checked, CommitPlan):
        return run_commits(checked, prober, show, say)
    options = checked.options
    warning = before_first_release(options.as_of, checked.package, checked.index)
    for line in (warning, checked.listing.yanked_line(checked.good, checked.bad)):
        if line:
            show.print(line, highlight=False)
    record = BisectRecord(
        package=checked.package,
        good=str(checked.good),
        bad=str(checked.bad),
        find=options.find.value,
        candidates=[str(v) for v in checked.candidates],
        direction="up" if checked.walk[0] < checked.walk[-1] else "down",
        **reproducible(options.pins, checked.probe, checked.index, checked.command),
        pre=options.pre,
        mode="releases",
        jobs=options.jobs,
        as_of={"as_of": options.as_of or "none", "dates": {}},
    )
    script = checked.probe.script.read_text() if checked.probe.script else None
    book = Book(record, checked.folder, script)

    def trial(version: Version) -> Trial:
        pin = Pin(checked.package, PinKind.EXACT, str(version))
        cell = options.cell.with_pins(pin)
        return Trial(checked.probe, cell, checked.index, checked.folder / "steps", str(version))

    # The previous bisect of this range is kept as .previous.
    with ResultsDir(checked.folder).claimed("fresh"):
        progress = Progress(show, checked.package, checked.walk, checked.probe, options.jobs)
        walk = Walk(checked.walk, trial, options.find, options.jobs)
        result = search_with_probes(walk, prober, book, progress)
        record.rounds = result.rounds
        conclude(record, result)
        if options.git is not None and result.status is Status.FOUND:
            continue_into_commits(options, checked, book, result, prober, show)
        finish(book, lambda: reproduce_command(options.today(), checked))
    return record, told(record, "candidate", say)


BISECT: Hunt[BisectOptions, Plan | CommitPlan, BisectRecord, Prober] = Hunt(
    "bisect", plan, run, took_by_cell
)
