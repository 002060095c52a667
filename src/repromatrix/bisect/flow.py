"""A bisect over released versions of one package, from the command line's options
to reports/bisect/<package>-<good>-<bad>/:

check the input -> list candidates (candidates.py) -> search (bisect.py) with one
real check per step (check.py: an environment from EnvStore, a run through the
CaseRunner or run_script) -> bisect.json + bisect.md (bisect_report.py).

Progress goes to stderr (rich): which version, how many steps are left at most;
the verdict line to stdout. Exit status: 0 found, 1 could not conclude, 2 bad input.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from rich.console import Console

from repromatrix import __version__
from repromatrix.bisect.candidates import Listing, list_releases
from repromatrix.bisect.check import CheckOptions, Probe, check
from repromatrix.bisect.report import (
    BisectRecord,
    StepRecord,
    github_repository,
    project_urls,
    verdict_line,
)
from repromatrix.bisect.report import write as write_report
from repromatrix.bisect.search import (
    Find,
    Observation,
    ProbeOutcome,
    SearchResult,
    Status,
    Step,
    ksection,
    most_rounds,
    walk_between,
)
from repromatrix.environment import Environment, IndexSettings
from repromatrix.environment.as_of import dated_release, is_date
from repromatrix.errors import UserError
from repromatrix.execution import host
from repromatrix.matrix import DEFAULT_PACKAGES
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.results import ResultsDir, utc_now

# Packages shown in bisect.md's environment line (all of them are in bisect.json):
# the stack a matrix declares by default, what a reader of the issue needs.
SHOWN_PACKAGES = frozenset(canonicalize_name(p) for p in DEFAULT_PACKAGES)


@dataclass
class BisectOptions:
    package: str
    good: str
    bad: str
    probe: Probe
    pins: tuple[Pin, ...] = ()
    find: Find = Find.FIRST_BAD
    pre: bool = False
    wheelhouse: Path | None = None
    out: Path = Path("reports/bisect")
    python: str | None = None
    env_dir: Path | None = None
    install_timeout: float = 1800.0
    index: IndexSettings | None = None  # default: the user's configuration (or the wheelhouse)
    # Time travel: each candidate with the stack of a day (environment/as_of.py). The
    # command line's default is the bisected package (the stack of each release's
    # day); None is today's stack.
    as_of: str | None = None
    stack: tuple[str, ...] = DEFAULT_PACKAGES
    jobs: int = 1  # candidates tested at once (k-section)


@dataclass
class Plan:
    """A checked bisect, ready to run."""

    package: str
    good: Version
    bad: Version
    listing: Listing
    candidates: list[Version]  # PEP 440 order
    walk: list[Version]  # from the old-outcome end to the new-outcome end
    index: IndexSettings
    probe: Probe
    folder: Path


def plan(options: BisectOptions) -> Plan:
    """Everything that can be wrong with the input, found before anything is built."""
    package = canonicalize_name(options.package)
    good, bad = _version("--good", options.good), _version("--bad", options.bad)
    if good == bad:
        raise UserError(
            f"--good and --bad are the same version ({options.good}): nothing to bisect"
        )
    if any(pin.package == package for pin in options.pins):
        raise UserError(f"--pin: {package} is the package being bisected; it cannot be pinned too")
    probe = options.probe.validated()
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be at least 1")
    as_of = options.as_of
    if as_of is not None and canonicalize_name(as_of) != package and not is_date(as_of):
        dated_release(as_of, options.pins)  # a package held fixed: it needs an exact pin
    if options.wheelhouse is not None:
        if not options.wheelhouse.is_dir():
            raise UserError(f"--wheelhouse {options.wheelhouse}: no such folder")
        index = IndexSettings.offline(str(options.wheelhouse.resolve()))
    else:
        index = options.index or IndexSettings.from_environment()
    listing = list_releases(package, index)
    missing = [v for v in (good, bad) if listing.find(v) is None]
    if missing:
        raise UserError(
            f"{package} {' and '.join(map(str, missing))}: not a release in "
            f"{'; '.join(listing.sources)} ({_nearest(listing, missing[0])})"
        )
    candidates = listing.between(good, bad, pre=options.pre)
    walk = walk_between(candidates, good, bad, options.find)
    folder = options.out / f"{package}-{good}-{bad}"
    return Plan(package, good, bad, listing, candidates, walk, index, probe, folder)


def run_bisect(
    options: BisectOptions,
    *,
    console: Console | None = None,
    say: Callable[[str], None] = print,
) -> tuple[BisectRecord, int]:
    """Run the bisect; returns the record written and the exit status."""
    show = console or Console(stderr=True)
    checked = plan(options)
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
        probe=_probe_record(checked.probe),
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

        def oracle(version: Version) -> Observation:
            name = str(version)
            pins = (*options.pins, Pin(checked.package, PinKind.EXACT, name))
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
                ),
                workdir=checked.folder / "steps",
                name=name,
                on_environment=lambda env: environments.__setitem__(name, env),
            )

        def run_round(versions: list[Version]) -> list[Observation]:
            # One thread per candidate: each builds its own environment (uv and the
            # probe are child processes; the store locks per identity).
            if len(versions) == 1:
                return [oracle(versions[0])]
            with ThreadPoolExecutor(max_workers=len(versions)) as pool:
                return list(pool.map(oracle, versions))

        progress = _Progress(show, checked, options.jobs)

        def on_step(step: Step[Version], most_left: int) -> None:
            record.steps.append(_step_record(step, checked.package))
            travelled = step.observation.extra.get("as_of")
            if travelled is not None:
                record.as_of["dates"][str(step.candidate)] = travelled.get("date")
                record.as_of.setdefault("packages", travelled.get("packages", []))
                if travelled.get("note"):
                    record.as_of.setdefault("notes", []).append(travelled["note"])
            save()
            progress.done(step, most_left)

        save()
        try:
            result = ksection(
                checked.walk,
                run_round,
                options.find,
                options.jobs,
                on_step=on_step,
                on_round=progress.round,
            )
        except BaseException:
            progress.stop()
            record.status, record.finished = "interrupted", utc_now()
            save()
            raise
        progress.stop()
        record.rounds = result.rounds
        _conclude(record, result, environments)
        record.finished = utc_now()
        save()
    say(verdict_line(record))
    return record, 0 if result.status is Status.FOUND else 1


def _conclude(
    record: BisectRecord, result: SearchResult[Version], environments: dict[str, Environment]
) -> None:
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


def _probe_record(probe: Probe) -> dict:
    if probe.case is not None:
        return {"case": probe.case, "timeout": probe.timeout}
    assert probe.script is not None
    return {
        "script": _shown_path(probe.script),
        "sha256": hashlib.sha256(probe.script.read_bytes()).hexdigest(),
        "timeout": probe.timeout,
    }


def reproduce_command(options: BisectOptions, checked: Plan) -> str:
    """The nox command that reruns this bisect, without paths of this machine."""
    args = ["--package", checked.package, "--good", options.good, "--bad", options.bad]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    if checked.probe.case is not None:
        args += ["--case", checked.probe.case]
    else:
        assert checked.probe.script is not None
        args += ["--script", _shown_path(checked.probe.script)]
    if options.find is not Find.FIRST_BAD:
        args += ["--find", options.find.value]
    if options.pre:
        args.append("--pre")
    if options.as_of is None:
        args += ["--as-of", "none"]
    elif options.as_of != checked.package:
        args += ["--as-of", options.as_of]
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    if options.wheelhouse is not None:
        args += ["--wheelhouse", _shown_path(options.wheelhouse)]
    return "nox -s bisect -- " + shlex.join(args)


def _shown_path(path: Path) -> str:
    """A path relative to the working folder when it is inside it, else its name."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path.name


def _version(option: str, text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UserError(f"{option} {text!r}: not a version (PEP 440)") from None


def _nearest(listing: Listing, version: Version) -> str:
    """'nearest releases: 4.57.6, 5.0.0' around a version that is not one."""
    versions = listing.versions()
    below = [v for v in versions if v < version][-1:]
    above = [v for v in versions if v > version][:1]
    return "nearest releases: " + ", ".join(str(v) for v in [*below, *above])


class _Progress:
    """One line per finished step, a spinner for the running round (rich)."""

    def __init__(self, console: Console, checked: Plan, jobs: int = 1) -> None:
        self.console = console
        self.package = checked.package
        self.status = None
        self.most = most_rounds(len(checked.walk), jobs)
        at_once = f", {jobs} at a time" if jobs > 1 else ""
        unit = "rounds" if jobs > 1 else "steps"
        console.print(
            f"bisecting {checked.package}: {len(checked.walk)} candidates from "
            f"{checked.walk[0]} to {checked.walk[-1]}{at_once}, at most {self.most} {unit} "
            f"without skips ({checked.probe.label})"
        )
        self.unit = "round" if jobs > 1 else "step"

    def round(self, number: int, batch: list[tuple[Version, str]]) -> None:
        said = ", ".join(
            f"{candidate}" + (f" ({role})" if role != "step" else "") for candidate, role in batch
        )
        text = f"{self.unit} {number}: testing {self.package} {said}"
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def start(self, candidate: Version, role: str, number: int) -> None:
        self.round(number, [(candidate, role)])

    def done(self, step: Step[Version], most_left: int) -> None:
        observation = step.observation
        style = {ProbeOutcome.GOOD: "green", ProbeOutcome.BAD: "red", ProbeOutcome.SKIP: "yellow"}[
            observation.outcome
        ]
        role = f" ({step.role})" if step.role != "step" else ""
        unit = f"{self.unit}{'s' if most_left != 1 else ''}"
        self.console.print(
            f"  {step.candidate}{role}: [{style}]{observation.outcome.value}[/{style}] "
            f"({observation.detail}, {observation.seconds:.1f}s); "
            f"at most {most_left} more {unit}",
            highlight=False,
        )

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None
