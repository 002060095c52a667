"""A sweep: one probe on every selected release of one package between two versions,
to reports/sweep/<package>-<from>-<to>/.

plan: check the input (options.py), list the releases (probe/candidates.py), select
(search/ranges.py: all, the newest patch of each minor series, or its first and last
patch) -> run: one probe per release from the prober it is handed (``jobs`` at a
time, each release in its own cell: probe/rounds.py) -> collapse into ranges, name
the transitions, flag a non-monotone range (search/ranges.py) -> sweep.json,
sweep.md, a reproducer per bad release (reproducer.py, report.py) -> optionally the
report posted on an issue (gh).

Where bisect assumes the outcome flips once and finds where, a sweep shows every
flip: "4.50.3–4.57.6 bad · 5.0.0–5.2.0 good". More than one flip makes the range
non-monotone, and a bisect over it would mislead.

Progress goes to stderr; the summary line to stdout. Exit status: 0 done (whatever
the outcomes), 1 nothing could be tested (every release was untestable: no install,
exit 125, a skipped case), 2 bad input. An interrupted sweep (Ctrl-C, SIGTERM) says
so in sweep.json, sweep.md and its summary line, with how many releases it tested.
"""

from __future__ import annotations

import time

from packaging.version import Version
from rich.console import Console
from rich.text import Text

from repromatrix.environment.as_of import before_first_release
from repromatrix.execution import host
from repromatrix.github.client import GitHub
from repromatrix.hunts.hunt import Hunt, Voice, took_by_cell
from repromatrix.hunts.rerun import (
    as_of_args,
    note_refusal,
    refusal_line,
    reproducible,
    rerun_command,
)
from repromatrix.hunts.sources import note_sources
from repromatrix.hunts.sweep.options import (
    Plan,
    SweepOptions,
    plan,
    probe_args,
    reproduce_command,
)
from repromatrix.hunts.sweep.report import (
    ResultRecord,
    SweepRecord,
    nothing_tested,
    reproducer_name,
    summary_line,
)
from repromatrix.hunts.sweep.report import write as write_report
from repromatrix.hunts.sweep.reproducer import reproducer_for
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import Observation
from repromatrix.probe.prober import Prober
from repromatrix.probe.rounds import pooled
from repromatrix.probe.spec import Trial
from repromatrix.results import ResultsDir, utc_now
from repromatrix.search.ranges import Releases, Transition, collapse, is_monotone, transitions

# A caller takes its options from here too (cli, issue).
__all__ = ["SWEEP", "Releases", "SweepOptions", "sweep_hunt"]

NOTHING_TESTED = 1  # exit status: every release was untestable, the sweep has no answer


def sweep_hunt(github: GitHub | None = None) -> Hunt[SweepOptions, Plan, SweepRecord, Prober]:
    """The sweep, its report posted on ``--issue`` through ``github`` (default: the
    gh client)."""

    def planned(options: SweepOptions, _voice: Voice) -> Plan:
        return plan(options)

    def ran(checked: Plan, prober: Prober, voice: Voice) -> tuple[SweepRecord, int]:
        return run(checked, prober, voice, github)

    return Hunt("sweep", planned, ran, took_by_cell)


def run(
    checked: Plan, prober: Prober, voice: Voice, github: GitHub | None = None
) -> tuple[SweepRecord, int]:
    """Run a planned sweep; returns the record written and the exit status."""
    show, say = voice.show, voice.say
    options = checked.options
    warning = before_first_release(options.as_of, checked.package, checked.index)
    yanked = checked.listing.yanked_line(checked.low, checked.high)
    for line in (warning, yanked):
        if line:
            show.print(line, highlight=False)
    clock = time.monotonic()
    record = SweepRecord(
        package=checked.package,
        **{"from": options.start},
        to=options.end,
        releases=options.releases.value,
        candidates=[str(v) for v in checked.candidates],
        **reproducible(options.pins, checked.probe, checked.index, checked.command),
        jobs=options.jobs,
        as_of=options.as_of,
    )
    script_text = checked.probe.script.read_text() if checked.probe.script else None

    def save(reproducers: dict[str, str] | None = None) -> None:
        record.seconds = round(time.monotonic() - clock, 2)
        write_report(checked.folder, record, script_text=script_text, reproducers=reproducers)

    def trial(version: Version) -> Trial:
        cell = options.cell.with_pins(Pin(checked.package, PinKind.EXACT, str(version)))
        return Trial(checked.probe, cell, checked.index, checked.folder / "steps", str(version))

    total = len(checked.candidates)
    show.print(
        f"sweeping {checked.package}: {total} release{'s' if total != 1 else ''} "
        f"({options.releases.value}) from {checked.candidates[0]} to {checked.candidates[-1]}, "
        f"{options.jobs} at a time ({checked.probe.label})",
        highlight=False,
    )
    out = ResultsDir(checked.folder)
    with out.claimed("fresh"):  # the previous sweep of this range is kept as .previous
        save()
        trials = [trial(v) for v in checked.candidates]
        finished = pooled(prober, trials, options.jobs, "sweep")
        try:
            for done, observation in finished:
                result = _result(done.name, observation, checked.package)
                record.results.append(result)
                note_sources(record.sources, record.sources_changed, observation)
                record.results.sort(key=lambda r: Version(r.version))
                _conclude(record)
                save()
                _progress(show, result, len(record.results), total)
        except BaseException:
            finished.close()  # the probes still running stop, those not started never do
            record.status, record.finished = "interrupted", utc_now()
            _conclude(record)
            save()
            say(record.summary)
            raise
        record.python = _python(record)
        bad = [r for r in record.results if r.outcome == ProbeOutcome.BAD.value]
        on_cpu = bool(bad) and not host.gpus()
        reproducers = {
            reproducer_name(r.version): reproducer_for(
                r, record, checked, options, script_text, on_cpu=on_cpu
            )
            for r in bad
        }
        record.reproducers = {
            r.version: reproducer_name(r.version)
            for r in record.results
            if r.outcome == ProbeOutcome.BAD.value
        }
        record.status, record.finished = "done", utc_now()
        _conclude(record)
        for transition in record.transitions:
            _narrow(transition, checked, options)
        refused: dict = {}
        for result in record.results:
            if result.as_of_cap:
                note_refusal(refused, result.version, result.as_of_cap.get("packages") or [])
        if refused:
            refused["rerun"] = reproduce_command(options.today(), checked)
            record.as_of_refused = refused
        save(reproducers)
    say(record.summary)
    if record.as_of_refused:
        say(refusal_line(record.as_of_refused, "release"))
    if options.issue is not None:
        (github or GitHub(say=lambda line: show.print(line, highlight=False))).comment(
            options.issue, checked.folder / "sweep.md"
        )
    return record, NOTHING_TESTED if nothing_tested(record) else 0


def _conclude(record: SweepRecord) -> None:
    outcomes = [(r.version, r.outcome) for r in record.results]
    record.ranges = collapse(outcomes)
    record.transitions = transitions(outcomes)
    record.monotone = is_monotone(record.transitions)
    record.summary = summary_line(record)


def _narrow(transition: Transition, checked: Plan, options: SweepOptions) -> None:
    """A transition between two releases the sweep tested, with releases it did not
    test between them (a --releases selection): count those and give the bisect
    that finds the exact one."""
    before, after = Version(transition.before), Version(transition.after)
    inside = checked.listing.between(before, after, pre=options.pre)[1:-1]
    transition.untested = len([v for v in inside if str(v) not in transition.between])
    if not transition.untested:
        return
    good, bad = (before, after) if transition.old == ProbeOutcome.GOOD.value else (after, before)
    args = ["--package", checked.package, "--good", str(good), "--bad", str(bad)]
    if transition.old == ProbeOutcome.BAD.value:
        args += ["--find", "first-good"]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    args += probe_args(checked.probe)
    args += as_of_args(options.as_of, checked.package)
    transition.bisect = rerun_command("bisect", args)


def _result(version: str, observation: Observation, package: str) -> ResultRecord:
    cell, travel, cap = observation.cell, observation.travel, observation.date_cap
    resolved = dict(observation.resolved)
    return ResultRecord(
        version=version,
        outcome=observation.outcome.value,
        seconds=round(observation.seconds, 2),
        message="" if observation.outcome is ProbeOutcome.GOOD else observation.detail,
        installed=resolved.get(package),
        environment=cell.identity if cell else None,
        resolved=resolved,
        python=cell.python if cell else None,
        as_of=travel.describe() if travel else None,
        as_of_cap=cap.describe() if cap else None,
    )


def _python(record: SweepRecord) -> str | None:
    """major.minor of the interpreter the probes ran on (the first that was built)."""
    found = next((r.python for r in record.results if r.python), None)
    return ".".join(found.split(".")[:2]) if found else None


def _progress(console: Console, result: ResultRecord, done: int, total: int) -> None:
    style = {"good": "green", "bad": "red", "skip": "yellow"}[result.outcome]
    said = f" ({result.message})" if result.message else ""
    console.print(
        Text.assemble(
            f"  [{done}/{total}] {result.version}: ",
            (result.outcome, style),
            f"{said} {result.seconds:.1f}s",
        )
    )


SWEEP = sweep_hunt()
