"""A bisect over released versions of one package, from the command line's options
to reports/bisect/<package>-<good>-<bad>/:

check the input -> list candidates (candidates.py) -> search (bisect.py) with one
real check per step (check.py: an environment from EnvStore, a run through the
CaseRunner or run_script) -> bisect.json + bisect.md (bisect_report.py).

Progress goes to stderr (rich): which version, how many steps are left at most;
the verdict line to stdout. Exit status: 0 found, 1 could not conclude, 2 bad input.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version
from rich.console import Console

from repromatrix import __version__, procs
from repromatrix.bisect.candidates import Listing, list_releases
from repromatrix.bisect.check import CellSettings, CheckOptions, Probe, check, searched_probe
from repromatrix.bisect.commits import (
    Commit,
    History,
    history,
    mirror,
    release_tag,
    requirement_url,
)
from repromatrix.bisect.report import (
    BisectRecord,
    StepRecord,
    github_repository,
    project_urls,
    verdict_line,
)
from repromatrix.bisect.report import write as write_report
from repromatrix.bisect.rerun import as_of_args, note_refusal, refusal_line, rerun_command
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
from repromatrix.environment.as_of import before_first_release
from repromatrix.environment.store import default_store_root
from repromatrix.errors import UserError
from repromatrix.execution import host, scheduler
from repromatrix.matrix import DEFAULT_PACKAGES
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.names import canonicalize_name
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
    git: str | None = None  # the package's repository: bisect its commits too
    cell: CellSettings = field(default_factory=CellSettings)  # --cell: overrides, env


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
    probe = searched_probe(
        package, options.pins, options.probe, as_of=options.as_of, searched="bisected"
    )
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be at least 1")
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
    """Run the bisect; returns the record written and the exit status.

    With ``--git``: refs that are not both releases of the package are searched as
    commits; a release bisect that finds its two adjacent releases goes on into the
    commits between their tags."""
    show = console or Console(stderr=True)
    procs.reset_cancelled()
    if options.git is not None and not _releases_given(options):
        return _run_commits(options, show, say)
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

        progress = _Progress(show, checked.package, checked.walk, checked.probe, options.jobs)
        result = _search(
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
        _conclude(record, result, environments)
        if options.git is not None and result.status is Status.FOUND:
            _continue_into_commits(options, checked, record, result, save, environments, show)
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


def _search(
    options: BisectOptions,
    probe: Probe,
    index: IndexSettings,
    folder: Path,
    record: BisectRecord,
    save: Callable[[], None],
    walk: list,
    pin_for: Callable[[Any], Pin],
    as_of_for: Callable[[Any], str | None],
    environments: dict[str, Environment],
    progress: _Progress,
) -> SearchResult:
    """k-section over ``walk`` (jobs 1: the sequential search), one real check per
    candidate, every step written to bisect.json as it ends."""

    def oracle(candidate: Any, devices: str | None = None) -> Observation:
        name = str(candidate)
        return check(
            CheckOptions(
                pins=(*options.pins, pin_for(candidate)),
                probe=probe,
                index=index,
                python=options.python,
                env_dir=options.env_dir,
                install_timeout=options.install_timeout,
                as_of=as_of_for(candidate),
                stack=options.stack,
                visible_devices=devices,
                cell=options.cell,
            ),
            workdir=folder / "steps",
            name=name,
            on_environment=lambda env: environments.__setitem__(name, env),
        )

    def run_round(candidates: list) -> list[Observation]:
        # One thread per candidate: each builds its own environment (uv and the
        # probe are child processes; the store locks per identity).
        if len(candidates) == 1:
            return [oracle(candidates[0])]
        devices = probe_devices(len(candidates), list(host.gpus()))
        with ThreadPoolExecutor(max_workers=len(candidates)) as pool:
            return list(pool.map(oracle, candidates, devices))

    def on_step(step: Step, most_left: int) -> None:
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
        save()
        progress.done(step, most_left)

    save()
    try:
        return ksection(
            walk, run_round, options.find, options.jobs, on_step=on_step, on_round=progress.round
        )
    except BaseException:
        procs.cancel_all()  # probes in other threads (--jobs N) stop with the bisect
        record.status, record.finished = "interrupted", utc_now()
        save()
        raise
    finally:
        progress.stop()


def _releases_given(options: BisectOptions) -> bool:
    """Whether --good and --bad are written as versions (1.2.3, not v1.2.3 or a sha)."""
    return all(
        text[:1].isdigit() and _is_version(text) and not _looks_like_sha(text)
        for text in (options.good, options.bad)
    )


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _looks_like_sha(text: str) -> bool:
    return (
        len(text) >= 7 and all(c in "0123456789abcdef" for c in text.lower()) and not text.isdigit()
    )


def _store(options: BisectOptions) -> Path:
    return options.env_dir if options.env_dir is not None else default_store_root()


def probe_devices(count: int, listed: list[str]) -> list[str | None]:
    """CUDA_VISIBLE_DEVICES for each of a round's ``count`` probes: on a multi-GPU host
    each its own GPU group (the scheduler's split, as `run --jobs N` gives combinations);
    with more probes than GPUs they take turns round the groups; no GPU: None each."""
    groups = scheduler.gpu_groups(count, scheduler.gpu_ids(listed))
    if not groups:
        return [None] * count
    return [groups[i % len(groups)] for i in range(count)]


def _commit_as_of(options: BisectOptions) -> Callable[[Commit], str | None]:
    """A commit's stack is the one of its commit date when as-of is the bisected
    package (the default); a date or none apply as given."""
    package = canonicalize_name(options.package)
    if options.as_of is not None and canonicalize_name(options.as_of) == package:
        return lambda commit: commit.date or None
    return lambda _commit: options.as_of


def _run_commits(
    options: BisectOptions, show: Console, say: Callable[[str], None]
) -> tuple[BisectRecord, int]:
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
        command=_commit_command(options, probe),
        repromatrix=__version__,
        mode="commits",
        jobs=options.jobs,
        as_of={"as_of": _as_of_said(options, "commit dates"), "dates": {}},
        commits=_commits_record(found),
    )
    script_text = probe.script.read_text() if probe.script else None
    environments: dict[str, Environment] = {}
    with ResultsDir(folder).claimed("fresh"):

        def save() -> None:
            record.seconds = round(time.monotonic() - clock, 2)
            write_report(folder, record, script_text=script_text)

        progress = _Progress(show, package, walk, probe, options.jobs)
        result = _search(
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
        _conclude_commits(record, result, environments)
        if "refused" in record.as_of:
            record.as_of["refused"]["rerun"] = _commit_command(replace(options, as_of=None), probe)
        record.finished = utc_now()
        save()
    say(record.verdict or verdict_line(record))
    if "refused" in record.as_of:
        say(refusal_line(record.as_of["refused"], "commit"))
    return record, 0 if result.status is Status.FOUND else 1


def _continue_into_commits(
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
    record.commits = {**_commits_record(found), "releases": releases}
    progress = _Progress(show, record.package, walk, checked.probe, options.jobs)
    inner = _search(
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
    _conclude_commits(record, inner, environments)


def _conclude_commits(
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
    _conclude(record, shas, environments)
    if result.first is not None:
        record.commits["first"] = result.first.describe()
        record.commits["last"] = result.last.describe() if result.last is not None else None
        pr = f" (PR #{result.first.pr})" if result.first.pr else ""
        record.verdict = (
            f"first {record.first_word} commit: {result.first.sha[:12]} "
            f"{result.first.subject}{pr}; {verdict_line(record)}"
        )


def _commits_record(found: History) -> dict[str, Any]:
    return {
        "repository": found.url,
        "good_ref": found.good_ref,
        "bad_ref": found.bad_ref,
        "count": len(found.commits),
        "list": [c.describe() for c in found.commits],
    }


def _as_of_said(options: BisectOptions, default: str) -> str:
    if options.as_of is None:
        return "none"
    if canonicalize_name(options.as_of) == canonicalize_name(options.package):
        return f"{options.as_of} ({default})"
    return options.as_of


def _commit_command(options: BisectOptions, probe: Probe) -> str:
    args = ["--package", canonicalize_name(options.package), "--git", options.git or ""]
    args += ["--good", options.good, "--bad", options.bad]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    if probe.case is not None:
        args += ["--case", probe.case]
    elif probe.script is not None:
        args += ["--script", _shown_path(probe.script)]
    if options.find is not Find.FIRST_BAD:
        args += ["--find", options.find.value]
    args += as_of_args(options.as_of, options.package)
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    return rerun_command("bisect", args)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name)


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


def reproduce_command(options: BisectOptions, checked: Plan) -> str:
    """The command that reruns this bisect, without paths of this machine: the nox
    session where the working folder's noxfile has one, else repromatrix itself (a
    project that only installed the tool)."""
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
    args += as_of_args(options.as_of, checked.package)
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    if options.wheelhouse is not None:
        args += ["--wheelhouse", _shown_path(options.wheelhouse)]
    return rerun_command("bisect", args)


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

    def __init__(
        self, console: Console, package: str, walk: list, probe: Probe, jobs: int = 1
    ) -> None:
        self.console = console
        self.package = package
        self.status = None
        self.most = most_rounds(len(walk), jobs)
        at_once = f", {jobs} at a time" if jobs > 1 else ""
        unit = "rounds" if jobs > 1 else "steps"
        console.print(
            f"bisecting {package}: {len(walk)} candidates from "
            f"{walk[0]} to {walk[-1]}{at_once}, at most {self.most} {unit} "
            f"without skips ({probe.label})"
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
