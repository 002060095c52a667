"""A culprit hunt: from a good and a bad lock to the change(s) that broke it, and
for a single culprit package to its first bad release.

read the locks (locks.py) -> diff -> ddmin over the changed packages (ddmin.py),
each mix tested by check.py (an environment from EnvStore with every pin exact, the
case or script run as ``check`` runs it) -> one culprit with releases in between:
bisect those (flow.run_bisect, the good lock's other pins held) -> culprit.json +
culprit.md (culprit_report.py).

A mix the resolver refuses comes back as UNRESOLVABLE with uv's message, which
ddmin reads to move the conflicting package along. Exit status: 0 found, 1 could
not conclude, 2 bad input.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.version import InvalidVersion, Version
from rich.console import Console

from repromatrix import __version__, procs
from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.bisect.run import BisectOptions, run_bisect
from repromatrix.hunts.culprit.locks import Change, Lock, diff, lock_from_resolved, mixed_pins
from repromatrix.hunts.culprit.report import CulpritRecord, CulpritStep, verdict_line
from repromatrix.hunts.culprit.report import write as write_report
from repromatrix.hunts.rerun import shown_path
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.matrix.sessions import command_line
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.check import CellSettings, CheckOptions, Probe, check
from repromatrix.results import ResultsDir, load_results, utc_now
from repromatrix.search.ddmin import Attempt, DdminResult, Outcome, Status, Trial, ddmin, most_runs

_OUTCOMES = {
    ProbeOutcome.GOOD: Outcome.GOOD,
    ProbeOutcome.BAD: Outcome.BAD,
    ProbeOutcome.SKIP: Outcome.SKIP,
}


@dataclass
class CulpritOptions:
    good: Lock
    bad: Lock
    probe: Probe
    pins: tuple[Pin, ...] = ()  # held on every side (the user's --pin)
    name: str | None = None  # the report folder's name (default: from the locks)
    jobs: int = 1
    releases: bool = True  # bisect a single culprit's releases
    out: Path = Path("reports/culprit")
    python: str | None = None
    env_dir: Path | None = None
    install_timeout: float = 1800.0
    index: IndexSettings | None = None
    command: str = ""  # the command that reruns it (cli builds it)
    cell: CellSettings = field(default_factory=CellSettings)  # --cell: overrides, env


def locks_from_results(good: Path, bad: Path, combination: str) -> tuple[Lock, Lock]:
    """The resolved versions of one combination in two results folders, as locks."""
    locks = []
    for option, folder in (("--good-results", good), ("--bad-results", bad)):
        path = folder / "results.json"
        if not path.is_file():
            raise UserError(f"{option} {folder}: no results.json")
        found = load_results(path).find(combination)
        if found is None:
            raise UserError(f"{option} {folder}: no combination {combination!r} in results.json")
        locks.append(lock_from_resolved(found.resolved, f"{path} ({combination})"))
    return locks[0], locks[1]


# A report folder's name: one folder inside --out, nothing a shell or a URL trips on.
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")


def checked_name(name: str | None) -> str | None:
    """--name as given, when it names one folder inside --out; bad input otherwise
    (``../../x`` would write the report outside it)."""
    if name is None or name == "":
        return None
    if not _FOLDER_NAME.fullmatch(name) or ".." in name:
        raise UserError(
            f"--name {name!r}: not a folder name (letters, digits, '.', '_', '+', '-'; "
            "no '/' or '..'; at most 100 characters)"
        )
    return name


def lock_index(base: IndexSettings, *locks: Lock) -> IndexSettings:
    """The indexes the locks were resolved from, over ``base`` (the user's
    configuration, or --wheelhouse): the first lock's --index-url replaces the default
    index, another lock's different one is added as an extra index; extra indexes and
    find-links of both come first. A lock's --no-index keeps only find-links."""
    urls = [lock.index.index_url for lock in locks if lock.index.index_url]
    extra = tuple(dict.fromkeys([*urls[1:], *(u for k in locks for u in k.index.extra_index_urls)]))
    merged = base.overlaid(
        index_url=urls[0] if urls else None,
        extra_index_urls=tuple(u for u in extra if u != (urls[0] if urls else None)),
        find_links=tuple(dict.fromkeys(f for k in locks for f in k.index.find_links)),
    )
    if any(lock.index.no_index for lock in locks):
        merged = replace(merged, no_index=True)
    return merged


def default_name(options: CulpritOptions) -> str:
    """<good>-to-<bad>, from the lock files' names (a hash when they say nothing)."""
    stems = [
        re.sub(r"[^A-Za-z0-9._-]+", "-", Path(lock.source.split(" ")[0]).stem)
        for lock in (options.good, options.bad)
    ]
    if stems[0] and stems[1] and stems[0] != stems[1]:
        return f"{stems[0]}-to-{stems[1]}"
    digest = hashlib.sha256(
        repr((sorted(options.good.pins.items()), sorted(options.bad.pins.items()))).encode()
    ).hexdigest()
    return f"locks-{digest[:10]}"


def run_culprit(
    options: CulpritOptions,
    *,
    console: Console | None = None,
    say: Callable[[str], None] = print,
) -> tuple[CulpritRecord, int]:
    """Run the hunt; returns the record written and the exit status."""
    show = console or Console(stderr=True)
    procs.reset_cancelled()
    probe = options.probe.defined(lambda line: show.print(line, highlight=False))
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be 1 or more")
    held = frozenset(pin.package for pin in options.pins)
    changes = diff(options.good, options.bad, held=held)
    if not changes:
        raise UserError(
            f"{options.good.source} and {options.bad.source}: no package differs "
            "(outside --pin); nothing to hunt"
        )
    by_name = {c.package: c for c in changes}
    index = lock_index(options.index or IndexSettings.from_environment(), options.good, options.bad)
    folder = options.out / (checked_name(options.name) or default_name(options))
    clock = time.monotonic()
    record = CulpritRecord(
        name=folder.name,
        good_lock=_shown(options.good.source),
        bad_lock=_shown(options.bad.source),
        started=utc_now(),
        changed=[_change_dict(c) for c in changes],
        most_runs=most_runs(len(changes)),
        pins=[pin_text(p) for p in options.pins],
        probe=probe.record(),
        index=index.describe(),
        command=options.command,
        repromatrix=__version__,
    )
    counter = iter(range(1, 10_000))
    lock = threading.Lock()

    with ResultsDir(folder).claimed("fresh"):

        def save() -> None:
            record.seconds = round(time.monotonic() - clock, 2)
            record.verdict = verdict_line(record)
            write_report(folder, record)

        def oracle(applied: frozenset[str]) -> Trial:
            with lock:
                step = next(counter)
            pins = mixed_pins(options.good, by_name, applied, options.pins)
            observation = check(
                CheckOptions(
                    pins=pins,
                    probe=probe,
                    index=index,
                    python=options.python,
                    env_dir=options.env_dir,
                    install_timeout=options.install_timeout,
                    cell=options.cell,
                ),
                workdir=folder / "steps",
                name=f"step-{step:02d}",
            )
            install_error = observation.extra.get("install_error", "")
            if install_error.startswith("resolve:"):
                return Trial(
                    Outcome.UNRESOLVABLE,
                    install_error.removeprefix("resolve:").strip(),
                    observation.seconds,
                )
            return Trial(
                _OUTCOMES[observation.outcome],
                observation.detail,
                observation.seconds,
                {"resolved": observation.extra.get("resolved")},
            )

        def on_attempt(attempt: Attempt) -> None:
            with lock:
                record.steps.append(_step(attempt))
                record.runs = sum(1 for s in record.steps if s.ran)
                save()
            _progress(show, attempt, len(changes))

        show.print(
            f"culprit hunt: {len(changes)} packages differ between {record.good_lock} and "
            f"{record.bad_lock}; at most {record.most_runs} cell runs with one culprit "
            f"({probe.label})"
        )
        save()
        try:
            result = ddmin(
                [c.package for c in changes],
                oracle,
                requires={c.package: options.bad.requires(c.package) for c in changes},
                jobs=options.jobs,
                on_attempt=on_attempt,
            )
            _conclude(record, result, by_name)
            save()
            if result.status is Status.FOUND and len(result.culprits) == 1 and options.releases:
                _bisect_releases(record, result, options, by_name, probe, index, folder, show)
        except BaseException:
            procs.cancel_all()  # probes in other threads (--jobs N) stop with the hunt
            record.status, record.finished = "interrupted", utc_now()
            save()
            raise
        record.finished = utc_now()
        save()
    say(record.verdict)
    return record, 0 if record.status == "found" else 1


def _conclude(record: CulpritRecord, result: DdminResult, by_name: dict[str, Change]) -> None:
    record.status = result.status.value
    record.reason = result.reason
    record.minimal = list(result.minimal)
    if result.status is not Status.FOUND:
        return
    along = [p for p in result.minimal if p in result.moved_along]
    record.culprits = [
        {
            "package": name,
            "good": by_name[name].good,
            "bad": by_name[name].bad,
            "lock_bad": by_name[name].bad,
            "last_good": None,
            "moved_along": along,
        }
        for name in result.culprits
    ]


def _bisect_releases(
    record: CulpritRecord,
    result: DdminResult,
    options: CulpritOptions,
    by_name: dict[str, Change],
    probe: Probe,
    index: IndexSettings,
    folder: Path,
    show: Console,
) -> None:
    """One culprit moved across releases: the first bad one, with the good lock's
    other pins held and what moved along free between its two locks' versions."""
    [name] = result.culprits
    change = by_name[name]
    if not (_final(change.good) and _final(change.bad)):
        return
    along = {p: by_name[p] for p in result.moved_along}
    pins = []
    for package, version in sorted(options.good.pins.items()):
        if package == name or package in {p.package for p in options.pins}:
            continue
        if package in along:
            moved = along[package]
            if moved.good and moved.bad:
                low, high = sorted((moved.good, moved.bad), key=Version)
                pins.append(Pin(package, PinKind.RANGE, f">={low},<={high}"))
            continue  # removed on the bad side: left to the resolver
        pins.append(Pin(package, PinKind.EXACT, version))
    show.print(f"bisecting {name}'s releases between {change.good} and {change.bad}")
    try:
        bisected, _code = run_bisect(
            BisectOptions(
                package=name,
                good=change.good,
                bad=change.bad,
                probe=probe,
                pins=(*pins, *options.pins),
                out=folder / "releases",
                python=options.python,
                env_dir=options.env_dir,
                install_timeout=options.install_timeout,
                index=index,
                cell=options.cell,
            ),
            console=show,
            say=lambda line: show.print(f"release bisect: {line}", highlight=False),
        )
    except UserError as err:
        record.release_bisect = {"status": "not run", "verdict": f"not run: {err}", "steps": 0}
        return
    record.release_bisect = {
        "folder": f"releases/{name}-{change.good}-{change.bad}",
        "status": bisected.status,
        "verdict": bisected.verdict,
        "steps": len(bisected.steps),
        "candidates": len(bisected.candidates),
    }
    if bisected.status == "found" and bisected.first_bad:
        record.culprits[0]["bad"] = bisected.first_bad
        record.culprits[0]["last_good"] = bisected.last_good


def _final(version: str | None) -> bool:
    try:
        return (
            version is not None
            and not Version(version).is_prerelease
            and not Version(version).local
        )
    except InvalidVersion:
        return False


def _change_dict(change: Change) -> dict:
    return {"package": change.package, "good": change.good, "bad": change.bad, "kind": change.kind}


def _step(attempt: Attempt) -> CulpritStep:
    trial = attempt.trial
    return CulpritStep(
        number=attempt.number,
        role=attempt.role,
        requested=sorted(attempt.requested),
        applied=sorted(attempt.applied),
        moved_along=list(attempt.moved_along),
        outcome=trial.outcome.value,
        seconds=round(trial.seconds, 2)
        if attempt.ran or trial.outcome is Outcome.UNRESOLVABLE
        else 0.0,
        detail=trial.detail[:2000],
        ran=attempt.ran,
    )


def _timed(attempt: Attempt) -> bool:
    """Whether the attempt took time of its own (a cached mix took none)."""
    return attempt.ran or attempt.trial.outcome is Outcome.UNRESOLVABLE


def _progress(console: Console, attempt: Attempt, total: int) -> None:
    style = {"good": "green", "bad": "red", "skip": "yellow", "unresolvable": "yellow"}[
        attempt.trial.outcome.value
    ]
    size = len(attempt.applied)
    what = "none" if not size else ("all" if size == total else f"{size}")
    along = f", moved along {', '.join(attempt.moved_along)}" if attempt.moved_along else ""
    cached = "" if attempt.ran or attempt.trial.outcome is Outcome.UNRESOLVABLE else ", known"
    console.print(
        f"  step {attempt.number} ({attempt.role}, {what} of {total} changes{along}): "
        f"[{style}]{attempt.trial.outcome.value}[/{style}] "
        f"({attempt.trial.detail[:160]}, {attempt.trial.seconds:.1f}s{cached})",
        highlight=False,
    )


def _shown(source: str) -> str:
    """A path relative to the working folder when it is inside it, else its name
    (no path of this machine in a report)."""
    path_text, paren, rest = source.partition(" (")  # "results.json (combination id)"
    return shown_path(Path(path_text)) + paren + rest


def reproduce_command(args: list[str]) -> str:
    """The command that reruns this hunt from the working folder: the nox session where
    its noxfile has one, else repromatrix itself."""
    return command_line("culprit", args, folder=Path.cwd())
