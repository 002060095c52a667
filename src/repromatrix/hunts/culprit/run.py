"""A culprit hunt: from a good and a bad lock to the change(s) that broke it, and
for a single culprit package to its first bad release.

read the locks (locks.py) -> diff -> ddmin over the changed packages
(search/ddmin.py), each mix probed by the prober it is handed (a cell of every pin
exact, the case or script run as ``check`` runs it) -> one culprit with releases in
between: bisect those (the bisect hunt, handed the same prober; the good lock's other
pins held) -> culprit.json + culprit.md (report.py).

A mix the resolver refuses comes back as UNRESOLVABLE with uv's message, which
ddmin reads to move the conflicting package along. Exit status: 0 found, 1 could
not conclude, 2 bad input.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

from packaging.version import InvalidVersion, Version
from rich.console import Console
from rich.text import Text

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.hunts.bisect.report import BisectRecord
from repromatrix.hunts.bisect.run import BISECT, BisectOptions
from repromatrix.hunts.culprit.locks import Change, mixed_pins
from repromatrix.hunts.culprit.options import CulpritOptions, Plan, plan, shown_source
from repromatrix.hunts.culprit.report import CulpritRecord, CulpritStep, verdict_line
from repromatrix.hunts.culprit.report import write as write_report
from repromatrix.hunts.hunt import Hunt, Voice, run_hunt, took_by_cell
from repromatrix.hunts.rerun import reproducible
from repromatrix.hunts.sources import note_sources
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.prober import Prober
from repromatrix.probe.spec import Trial as ProbeTrial
from repromatrix.results import ResultsDir, utc_now
from repromatrix.search.ddmin import Attempt, DdminResult, Outcome, Status, Trial, ddmin, most_runs

# A caller takes its options from here too (cli).
__all__ = ["CULPRIT", "CulpritOptions", "culprit_hunt"]

# The release bisect of a single culprit: the bisect hunt on the one road (a test's own).
ReleaseBisect = Callable[[BisectOptions, Prober, Voice], tuple[BisectRecord, int]]

_OUTCOMES = {
    ProbeOutcome.GOOD: Outcome.GOOD,
    ProbeOutcome.BAD: Outcome.BAD,
    ProbeOutcome.SKIP: Outcome.SKIP,
}


def bisect_releases(
    options: BisectOptions, prober: Prober, voice: Voice
) -> tuple[BisectRecord, int]:
    return run_hunt(BISECT, options, prober, voice)


def culprit_hunt(
    releases: ReleaseBisect = bisect_releases,
) -> Hunt[CulpritOptions, Plan, CulpritRecord, Prober]:
    """The culprit hunt, a single culprit's releases bisected by ``releases`` (handed
    the same prober)."""

    def planned(options: CulpritOptions, voice: Voice) -> Plan:
        return plan(options, voice.note)

    def ran(checked: Plan, prober: Prober, voice: Voice) -> tuple[CulpritRecord, int]:
        return run(checked, prober, voice, releases)

    return Hunt("culprit", planned, ran, took_by_cell)


def run(
    checked: Plan, prober: Prober, voice: Voice, releases: ReleaseBisect = bisect_releases
) -> tuple[CulpritRecord, int]:
    """Run a planned hunt; returns the record written and the exit status. ``prober``
    makes every probe; ``releases`` is the release bisect of a single culprit."""
    show, say = voice.show, voice.say
    options, probe, changes, folder = (
        checked.options,
        checked.probe,
        checked.changes,
        checked.folder,
    )
    by_name = checked.by_name
    clock = time.monotonic()
    record = CulpritRecord(
        name=folder.name,
        good_lock=shown_source(options.good.source),
        bad_lock=shown_source(options.bad.source),
        **reproducible(options.pins, probe, checked.index, checked.command),
        changed=[_change_dict(c) for c in changes],
        most_runs=most_runs(len(changes)),
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
            cell = replace(options.cell, pins=pins)
            trial = ProbeTrial(probe, cell, checked.index, folder / "steps", f"step-{step:02d}")
            observation = prober(trial)
            with lock:
                note_sources(record.sources, record.sources_changed, observation)
            failure = observation.failure
            if failure is not None and failure.stage == "resolve":
                return Trial(Outcome.UNRESOLVABLE, failure.message.strip(), observation.seconds)
            return Trial(_OUTCOMES[observation.outcome], observation.detail, observation.seconds)

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
                held = _release_bisect(result, checked)
                if held is not None:
                    _bisect_releases(record, held, releases, prober, voice)
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


def _release_bisect(result: DdminResult, checked: Plan) -> BisectOptions | None:
    """One culprit moved across releases: the bisect of them that finds the first bad
    one, with the good lock's other pins held and what moved along free between its
    two locks' versions (None: a side is no final release)."""
    options, by_name = checked.options, checked.by_name
    [name] = result.culprits
    change = by_name[name]
    if not (_final(change.good) and _final(change.bad)):
        return None
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
    return BisectOptions(
        package=name,
        good=change.good or "",
        bad=change.bad or "",
        probe=checked.probe,
        cell=replace(options.cell, pins=(*pins, *options.pins), taken=()),  # said once
        out=checked.folder / "releases",
        index=checked.index,
    )


def _bisect_releases(
    record: CulpritRecord,
    held: BisectOptions,
    releases: ReleaseBisect,
    prober: Prober,
    voice: Voice,
) -> None:
    """The release bisect of a single culprit, its answer into the record."""
    name, show = held.package, voice.show
    voice.note(f"bisecting {name}'s releases between {held.good} and {held.bad}")
    inner = Voice(
        say=lambda line: voice.note(f"release bisect: {line}"), note=voice.note, console=show
    )
    try:
        bisected, _code = releases(held, prober, inner)
    except UserError as err:
        record.release_bisect = {"status": "not run", "verdict": f"not run: {err}", "steps": 0}
        return
    record.release_bisect = {
        "folder": f"releases/{name}-{held.good}-{held.bad}",
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


def _progress(console: Console, attempt: Attempt, total: int) -> None:
    style = {"good": "green", "bad": "red", "skip": "yellow", "unresolvable": "yellow"}[
        attempt.trial.outcome.value
    ]
    size = len(attempt.applied)
    what = "none" if not size else ("all" if size == total else f"{size}")
    along = f", moved along {', '.join(attempt.moved_along)}" if attempt.moved_along else ""
    cached = "" if attempt.ran or attempt.trial.outcome is Outcome.UNRESOLVABLE else ", known"
    console.print(
        Text.assemble(
            f"  step {attempt.number} ({attempt.role}, {what} of {total} changes{along}): ",
            (attempt.trial.outcome.value, style),
            f" ({attempt.trial.detail[:160]}, {attempt.trial.seconds:.1f}s{cached})",
        )
    )


CULPRIT = culprit_hunt()
