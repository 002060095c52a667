"""A sweep: one probe on every selected release of one package between two versions,
to reports/sweep/<package>-<from>-<to>/.

check the input -> list the releases (candidates.py) -> select (all, the newest patch
of each minor series, or its first and last patch) -> one real check per release
(check.py: the same environment builder and runner as bisect; ``jobs`` at a time,
each release in its own environment) -> collapse into ranges, name the transitions,
flag a non-monotone range -> sweep.json, sweep.md, a reproducer per bad release
(sweep_report.py) -> optionally the report posted on an issue (gh).

Where bisect assumes the outcome flips once and finds where, a sweep shows every
flip: "4.50.3–4.57.6 bad · 5.0.0–5.2.0 good". More than one flip makes the range
non-monotone, and a bisect over it would mislead.

Progress goes to stderr; the summary line to stdout. Exit status: 0 done (whatever
the outcomes), 1 nothing could be tested (every release was untestable: no install,
exit 125, a skipped case), 2 bad input. An interrupted sweep (Ctrl-C, SIGTERM) says
so in sweep.json, sweep.md and its summary line, with how many releases it tested.
"""

from __future__ import annotations

import enum
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.version import InvalidVersion, Version
from rich.console import Console

from repromatrix import __version__, procs
from repromatrix.bisect.candidates import Listing, list_releases, sources
from repromatrix.bisect.check import CellSettings, CheckOptions, Probe, check, searched_probe
from repromatrix.bisect.rerun import as_of_args, note_refusal, refusal_line, rerun_command
from repromatrix.bisect.search import Observation, ProbeOutcome
from repromatrix.bisect.sweep_report import (
    Range,
    ResultRecord,
    SweepRecord,
    Transition,
    case_body,
    nothing_tested,
    portable_index,
    reproducer,
    reproducer_name,
    summary_line,
)
from repromatrix.bisect.sweep_report import write as write_report
from repromatrix.environment import IndexSettings
from repromatrix.environment.as_of import before_first_release
from repromatrix.errors import UserError
from repromatrix.execution import host
from repromatrix.gh import GitHub
from repromatrix.matrix import DEFAULT_PACKAGES
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.names import canonicalize_name
from repromatrix.redact import URL_CREDENTIALS, portable_path
from repromatrix.results import ResultsDir, utc_now

NOTHING_TESTED = 1  # exit status: every release was untestable, the sweep has no answer
# The packages the PyTorch CPU index serves as CPU builds.
PYTORCH_PACKAGES = ("torch", "torchvision", "torchaudio")


class Releases(str, enum.Enum):
    """Which releases between the two ends are tested."""

    ALL = "all"
    LATEST_PATCH = "latest-patch"  # the newest patch of each minor series
    FIRST_AND_LAST_PATCH = "first-and-last-patch"  # the oldest and newest of each series


@dataclass
class SweepOptions:
    package: str
    start: str  # --from
    end: str  # --to
    probe: Probe
    pins: tuple[Pin, ...] = ()
    releases: Releases = Releases.ALL
    jobs: int = 1
    pre: bool = False
    wheelhouse: Path | None = None
    out: Path = Path("reports/sweep")
    python: str | None = None
    env_dir: Path | None = None
    install_timeout: float = 1800.0
    index: IndexSettings | None = None  # default: the user's configuration (or the wheelhouse)
    issue: int | None = None  # post sweep.md on this GitHub issue
    # Time travel, as check and bisect take it (environment/as_of.py): PACKAGE (each
    # release with the stack of its upload day; the command line's default, as for
    # bisect), a DATE, or None for today's stack.
    as_of: str | None = None
    stack: tuple[str, ...] = DEFAULT_PACKAGES  # what travels: the matrix's packages
    cell: CellSettings = field(default_factory=CellSettings)  # --cell: overrides, env


@dataclass
class Plan:
    """A checked sweep, ready to run."""

    package: str
    low: Version
    high: Version
    listing: Listing
    candidates: list[Version]  # the selected releases, PEP 440 order
    index: IndexSettings
    probe: Probe
    folder: Path


# --------------------------------------------------------------------------- pure parts


def select(versions: Sequence[Version], releases: Releases) -> list[Version]:
    """The releases a sweep tests, in PEP 440 order. A minor series is the first two
    parts of the release number (4.57 for 4.57.6; 2025.11 for 2025.11.3)."""
    ordered = sorted(versions)
    if releases is Releases.ALL:
        return ordered
    series: dict[tuple[int, int], list[Version]] = {}
    for version in ordered:
        series.setdefault((version.major, version.minor), []).append(version)
    chosen: set[Version] = set()
    for members in series.values():
        chosen.add(members[-1])
        if releases is Releases.FIRST_AND_LAST_PATCH:
            chosen.add(members[0])
    return sorted(chosen)


Outcomes = Sequence[tuple[str, str]]  # (version, outcome) in PEP 440 order


def collapse(results: Outcomes) -> list[Range]:
    """Consecutive releases with one outcome as one range (a skip is a range too:
    it interrupts the others, since nothing is known there)."""
    ranges: list[Range] = []
    for version, outcome in results:
        if ranges and ranges[-1].outcome == outcome:
            ranges[-1] = ranges[-1].model_copy(
                update={"last": version, "count": ranges[-1].count + 1}
            )
        else:
            ranges.append(Range(first=version, last=version, outcome=outcome, count=1))
    return ranges


def transitions(results: Outcomes) -> list[Transition]:
    """Every change of outcome between two tested releases (skips in between are
    named: the change lies somewhere among them)."""
    found: list[Transition] = []
    previous: tuple[str, str] | None = None
    skipped: list[str] = []
    for version, outcome in results:
        if outcome == ProbeOutcome.SKIP.value:
            skipped.append(version)
            continue
        if previous is not None and previous[1] != outcome:
            found.append(
                Transition(
                    before=previous[0],
                    after=version,
                    old=previous[1],
                    new=outcome,
                    between=skipped,
                )
            )
        previous, skipped = (version, outcome), []
    return found


def is_monotone(found: Sequence[Transition]) -> bool:
    """At most one flip: what a bisect assumes."""
    return len(found) <= 1


# --------------------------------------------------------------------------- planning


def plan(options: SweepOptions) -> Plan:
    """Everything that can be wrong with the input, found before anything is built."""
    package = canonicalize_name(options.package)
    start, end = _version("--from", options.start), _version("--to", options.end)
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: give 1 or more")
    probe = searched_probe(
        package, options.pins, options.probe, as_of=options.as_of, searched="swept"
    )
    if options.wheelhouse is not None:
        if not options.wheelhouse.is_dir():
            raise UserError(f"--wheelhouse {options.wheelhouse}: no such folder")
        index = IndexSettings.offline(str(options.wheelhouse.resolve()))
    else:
        index = options.index or IndexSettings.from_environment()
    listing = list_releases(package, index)
    low, high = sorted((start, end))
    candidates = select(listing.between(low, high, pre=options.pre), options.releases)
    if not candidates:
        raise UserError(
            f"{package}: no release from {low} to {high} in {'; '.join(listing.sources)}"
        )
    folder = options.out / f"{package}-{options.start}-{options.end}"
    return Plan(package, low, high, listing, candidates, index, probe, folder)


def _version(option: str, text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UserError(f"{option} {text!r}: not a version (PEP 440)") from None


# --------------------------------------------------------------------------- running


def run_sweep(
    options: SweepOptions,
    *,
    console: Console | None = None,
    say: Callable[[str], None] = print,
    github: GitHub | None = None,
) -> tuple[SweepRecord, int]:
    """Run the sweep; returns the record written and the exit status."""
    show = console or Console(stderr=True)
    procs.reset_cancelled()
    checked = plan(options)
    warning = before_first_release(options.as_of, checked.package, checked.index)
    if warning:
        show.print(warning, highlight=False)
    clock = time.monotonic()
    record = SweepRecord(
        package=checked.package,
        **{"from": options.start},
        to=options.end,
        releases=options.releases.value,
        candidates=[str(v) for v in checked.candidates],
        started=utc_now(),
        jobs=options.jobs,
        pins=[pin_text(p) for p in options.pins],
        probe=checked.probe.record(),
        index=checked.index.describe(),
        as_of=options.as_of,
        command=reproduce_command(options, checked),
        repromatrix=__version__,
    )
    script_text = checked.probe.script.read_text() if checked.probe.script else None
    lock = threading.Lock()

    def save(reproducers: dict[str, str] | None = None) -> None:
        record.seconds = round(time.monotonic() - clock, 2)
        write_report(checked.folder, record, script_text=script_text, reproducers=reproducers)

    def probe(version: Version) -> Observation:
        pins = (*options.pins, Pin(checked.package, PinKind.EXACT, str(version)))
        return check(
            CheckOptions(
                pins=pins,
                probe=checked.probe,
                index=checked.index,
                python=options.python,
                env_dir=options.env_dir,
                install_timeout=options.install_timeout,
                as_of=options.as_of,
                stack=options.stack,
                cell=options.cell,
            ),
            workdir=checked.folder / "steps",
            name=str(version),
        )

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
        pool = ThreadPoolExecutor(max_workers=options.jobs, thread_name_prefix="sweep")
        try:
            futures = {pool.submit(probe, v): v for v in checked.candidates}
            for future in as_completed(futures):
                version = futures[future]
                result = _result(version, future.result(), checked.package)
                with lock:
                    record.results.append(result)
                    record.results.sort(key=lambda r: Version(r.version))
                    _conclude(record)
                    save()
                _progress(show, result, len(record.results), total)
        except BaseException:
            # Ctrl-C or SIGTERM reach this thread only: stop the probes running in the
            # others (their children are in sessions of their own), or the exit waits
            # for them; those threads then raise procs.Cancelled and record nothing.
            procs.cancel_all()
            pool.shutdown(wait=False, cancel_futures=True)
            record.status, record.finished = "interrupted", utc_now()
            _conclude(record)
            save()
            say(record.summary)
            raise
        pool.shutdown()
        record.python = _python(record)
        bad = [r for r in record.results if r.outcome == ProbeOutcome.BAD.value]
        on_cpu = bool(bad) and not host.gpus()
        reproducers = {
            reproducer_name(r.version): _reproducer(
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
                note_refusal(refused, result.version, result.as_of_cap)
        if refused:
            refused["rerun"] = reproduce_command(replace(options, as_of=None), checked)
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
    args += _probe_args(checked.probe)
    args += as_of_args(options.as_of, checked.package)
    transition.bisect = rerun_command("bisect", args)


def _probe_args(probe: Probe) -> list[str]:
    if probe.case is not None:
        return ["--case", probe.case]
    assert probe.script is not None
    return ["--script", portable_path(probe.script)]


def _result(version: Version, observation: Observation, package: str) -> ResultRecord:
    extra = observation.extra
    resolved = dict(extra.get("resolved") or {})
    return ResultRecord(
        version=str(version),
        outcome=observation.outcome.value,
        seconds=round(observation.seconds, 2),
        message="" if observation.outcome is ProbeOutcome.GOOD else observation.detail,
        installed=resolved.get(package),
        environment=extra.get("environment"),
        resolved=resolved,
        python=extra.get("python"),
        as_of=extra.get("as_of"),
        as_of_cap=extra.get("as_of_cap"),
    )


def _python(record: SweepRecord) -> str | None:
    """major.minor of the interpreter the probes ran on (the first that was built)."""
    found = next((r.python for r in record.results if r.python), None)
    return ".".join(found.split(".")[:2]) if found else None


def _progress(console: Console, result: ResultRecord, done: int, total: int) -> None:
    style = {"good": "green", "bad": "red", "skip": "yellow"}[result.outcome]
    said = f" ({result.message})" if result.message else ""
    console.print(
        f"  [{done}/{total}] {result.version}: [{style}]{result.outcome}[/{style}]{said} "
        f"{result.seconds:.1f}s",
        highlight=False,
    )


# --------------------------------------------------------------------------- reproducers


def _reproducer(
    result: ResultRecord,
    record: SweepRecord,
    checked: Plan,
    options: SweepOptions,
    script_text: str | None,
    *,
    on_cpu: bool = False,
) -> str:
    requirements = [f"{checked.package}=={result.version}"]
    notes: list[str] = []
    for pin in options.pins:
        if pin.kind is PinKind.ABSENT:
            continue
        if pin.kind is PinKind.EXACT:
            requirements.append(f"{pin.package}=={pin.spec}")
        elif pin.kind is PinKind.DIRECT:
            requirements.append(f"{pin.package} @ {URL_CREDENTIALS.sub('://', pin.spec)}")
        elif pin.package in result.resolved:  # a range, latest, system: what it resolved to
            requirements.append(f"{pin.package}=={result.resolved[pin.package]}")
            notes.append(f"{pin_text(pin)} resolved to {result.resolved[pin.package]}")
        elif requirement := pin.requirement():
            requirements.append(requirement)
    cpu_builds = cpu_torch(result.resolved, on_cpu)
    named = {canonicalize_name(re.split(r"[=<>!~ @;\[]", r, maxsplit=1)[0]) for r in requirements}
    for name, version in cpu_builds.items():
        if name not in named:  # only a direct requirement takes a uv source
            requirements.append(f"{name}=={version}")
            notes.append(f"{name} {version}: the CPU build, as the sweep ran")
    index, local = portable_index([(s.kind, s.location) for s in sources(checked.index)])
    header = "\n".join(
        [
            f"repromatrix sweep: {checked.package} {result.version} was bad"
            + (f" ({result.message})" if result.message else ""),
            f"Run: uv run {reproducer_name(result.version)}  "
            "(exit 0 = good, 125 = untestable, anything else = bad)",
            *notes,
            *local,
        ]
    )
    body = case_body(checked.probe.case) if checked.probe.case else script_text or ""
    return reproducer(
        requirements=requirements,
        index=index,
        body=body,
        python=record.python,
        exclude_newer=_travelled(result),
        cpu_packages=tuple(cpu_builds),
        header=header + "\n",
    )


def cpu_torch(resolved: dict[str, str], on_cpu: bool) -> dict[str, str]:
    """The PyTorch packages of a run that a reproducer takes from the PyTorch CPU
    index (name -> version): all of them when the run's torch was a ``+cpu`` build or
    the host had no GPU; none otherwise. Without it ``uv run`` fetches the CUDA build
    from PyPI, over a gigabyte a CPU run never used."""
    torch = resolved.get("torch")
    if torch is None or not (on_cpu or torch.endswith("+cpu")):
        return {}
    return {name: resolved[name] for name in PYTORCH_PACKAGES if name in resolved}


def _travelled(result: ResultRecord) -> dict[str, str]:
    """The stack packages that travelled to this release's day, and that day: what the
    reproducer gives uv as exclude-newer-package (a global cutoff would also cut off what
    exact pins such as torch need today)."""
    travelled = result.as_of or {}
    date = travelled.get("date")
    if not date:
        return {}
    # The project's own stack (its matrix's packages:), as far as this run installed it.
    return {name: str(date) for name in travelled.get("packages") or [] if name in result.resolved}


def reproduce_command(options: SweepOptions, checked: Plan) -> str:
    """The command that reruns this sweep, without paths of this machine: the nox
    session where a noxfile is at hand, else repromatrix itself; --as-of kept."""
    args = ["--package", checked.package, "--from", options.start, "--to", options.end]
    if options.releases is not Releases.ALL:
        args += ["--releases", options.releases.value]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    args += _probe_args(checked.probe)
    args += as_of_args(options.as_of, checked.package)
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    if options.pre:
        args.append("--pre")
    if options.wheelhouse is not None:
        args += ["--wheelhouse", portable_path(options.wheelhouse)]
    return rerun_command("sweep", args)
