"""A bisect over released versions of one package, from the command line's options
to reports/bisect/<package>-<good>-<bad>/:

check the input (options.py) -> list candidates (candidates.py) -> search with one
real check per step (probing.py: search.py's k-section, check.py's probe) -> the
answer into the record (record.py) -> bisect.json + bisect.md (report.py).

With ``--git``, refs that are not both releases go to the commit bisect instead, and
a release bisect that finds two adjacent releases goes on into the commits between
them (commit_flow.py).

Progress goes to stderr (rich): which version, how many steps are left at most;
the verdict line to stdout. Exit status: 0 found, 1 could not conclude, 2 bad input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from packaging.version import Version
from rich.console import Console

from repromatrix import __version__, procs
from repromatrix.environment import Environment
from repromatrix.environment.as_of import before_first_release
from repromatrix.hunts.bisect.commit_run import continue_into_commits, run_commits
from repromatrix.hunts.bisect.options import (
    BisectOptions,
    plan,
    releases_given,
    reproduce_command,
)
from repromatrix.hunts.bisect.probing import Progress, search_with_probes
from repromatrix.hunts.bisect.record import conclude
from repromatrix.hunts.bisect.report import BisectRecord, verdict_line
from repromatrix.hunts.bisect.report import write as write_report
from repromatrix.hunts.rerun import refusal_line
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.results import ResultsDir, utc_now
from repromatrix.search.bisection import Status

# A caller of run_bisect takes its options from here too (cli, issue, culprit).
__all__ = ["BisectOptions", "run_bisect"]


def run_bisect(
    options: BisectOptions,
    *,
    console: Console | None = None,
    say: Callable[[str], None] = print,
) -> tuple[BisectRecord, int]:
    """Run the bisect; returns the record written and the exit status.

    With ``--git``: refs that are not both releases of the package are searched as
    commits; a release bisect that finds its two adjacent releases goes on into the
    commits between their tags."""
    show = console or Console(stderr=True)
    procs.reset_cancelled()
    if options.git is not None and not releases_given(options):
        return run_commits(options, show, say)
    checked = plan(options)
    warning = before_first_release(options.as_of, checked.package, checked.index)
    if warning:
        show.print(warning, highlight=False)
    started, clock = utc_now(), time.monotonic()
    record = BisectRecord(
        package=checked.package,
        good=str(checked.good),
        bad=str(checked.bad),
        find=options.find.value,
        candidates=[str(v) for v in checked.candidates],
        direction="up" if checked.walk[0] < checked.walk[-1] else "down",
        started=started,
        pins=[pin_text(p) for p in options.pins],
        probe=checked.probe.record(),
        index=checked.index.describe(),
        pre=options.pre,
        command=reproduce_command(options, checked),
        repromatrix=__version__,
        mode="releases",
        jobs=options.jobs,
        as_of={"as_of": options.as_of or "none", "dates": {}},
    )
    script_text = checked.probe.script.read_text() if checked.probe.script else None
    environments: dict[str, Environment] = {}

    out = ResultsDir(checked.folder)
    with out.claimed("fresh"):  # the previous bisect of this range is kept as .previous

        def save() -> None:
            record.seconds = round(time.monotonic() - clock, 2)
            write_report(checked.folder, record, script_text=script_text)

        def pin(version: Version) -> Pin:
            return Pin(checked.package, PinKind.EXACT, str(version))

        progress = Progress(show, checked.package, checked.walk, checked.probe, options.jobs)
        result = search_with_probes(
            options,
            checked.probe,
            checked.index,
            checked.folder,
            record,
            save,
            checked.walk,
            pin,
            lambda _v: options.as_of,
            environments,
            progress,
        )
        record.rounds = result.rounds
        conclude(record, result, environments)
        if options.git is not None and result.status is Status.FOUND:
            continue_into_commits(options, checked, record, result, save, environments, show)
        if "refused" in record.as_of:
            record.as_of["refused"]["rerun"] = reproduce_command(
                replace(options, as_of=None), checked
            )
        record.finished = utc_now()
        save()
    say(record.verdict or verdict_line(record))
    if "refused" in record.as_of:
        say(refusal_line(record.as_of["refused"], "candidate"))
    return record, 0 if record.status == Status.FOUND.value else 1
