"""The ``run`` job: each job of the plan through the library (bisect.sweep.run_sweep,
bisect.flow.run_bisect, bisect.check.check), its answer to answers/<issue>/.

This is the one place code from the internet runs. The job has no token
(``permissions: {}``) and no secret; ``scrub_environment`` also takes every token-like
variable out of this process before anything is built, so that a runner that sets
one anyway (act sets ACTIONS_RUNTIME_TOKEN in every step) does not hand it to the
repro. A run stops after the plan's minutes: what was done so far is the answer.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from rich.console import Console

from repromatrix import procs
from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.bisect.report import markdown as bisect_markdown
from repromatrix.hunts.bisect.run import run_bisect
from repromatrix.hunts.sweep.run import run_sweep
from repromatrix.issue.answer import MAX_MARKDOWN, Result, answer_folder, write_result
from repromatrix.issue.plan import Job, Plan, bisect_options, pins_of, probe_for, sweep_options
from repromatrix.matrix.cell import CellSpec
from repromatrix.probe.check import pins_text
from repromatrix.probe.prober import CellProber
from repromatrix.probe.spec import Trial
from repromatrix.redact import redact_text
from repromatrix.search.bisection import ProbeOutcome

# Variables a repro must never see: tokens of GitHub, of the Actions runtime, secrets.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|^ACTIONS_", re.I)


def scrub_environment(environ: dict[str, str] | os._Environ = os.environ) -> list[str]:
    """Remove token-like variables; the names removed (for the log)."""
    names = sorted(name for name in environ if _SECRET_NAME.search(name))
    for name in names:
        del environ[name]
    return names


class OutOfTime(BaseException):
    """The run's minutes are spent (a BaseException: the library's own handlers save
    what they have and let it through, as for Ctrl-C)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expire(_signum: int, _frame: FrameType | None) -> None:
        procs.cancel_all()
        raise OutOfTime()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        procs.reset_cancelled()


def run_plan(
    plan: Plan, folder: Path, out: Path, cases: Path, say: Callable[[str], None] = print
) -> list[Result]:
    """Run every job of the plan (read from ``folder``), answers into ``out``."""
    removed = scrub_environment()
    if removed:
        say(f"removed from the environment before running repros: {', '.join(removed)}")
    results = []
    for job in plan.jobs:
        say(f"#{job.issue}: {job.line}")
        try:
            result = run_job(job, folder, answer_folder(out, job.issue), cases)
        except Exception as err:  # a fault of repromatrix, not of the command: said on the issue
            line = f"{type(err).__name__}: {redact_text(str(err))}"[:500]
            result = Result(issue=job.issue, kind=job.kind, status="failed", headline=line)
        write_result(out, result)
        say(f"#{job.issue}: {result.status}: {result.headline}")
        results.append(result)
    return results


def run_job(job: Job, folder: Path, out: Path, cases: Path) -> Result:
    started = time.monotonic()
    base = {"issue": job.issue, "kind": job.kind}
    try:
        with deadline(job.timeout + 60):
            result = ANSWERS[job.kind](job, folder, out, cases)
    except UserError as err:
        result = Result(**base, status="refused", headline=str(err))
    except OutOfTime:
        said = _partial(out)
        minutes = round(job.timeout / 60)
        headline = f"stopped after {minutes} minutes (the repository's limit)"
        result = Result(**base, status="timed-out", headline=headline, markdown=said)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _partial(out: Path) -> str:
    """What an interrupted sweep or bisect wrote so far."""
    for name in ("sweep.md", "bisect.md"):
        for path in out.rglob(name):
            return _bounded(path.read_text(encoding="utf-8"))
    return ""


def _bounded(text: str) -> str:
    text = redact_text(text)
    if len(text) <= MAX_MARKDOWN:
        return text
    return text[: MAX_MARKDOWN - 80] + "\n\n… (cut: the whole report is in the run's artifact)\n"


def _quiet() -> Console:
    return Console(stderr=True, highlight=False)


def _sweep(job: Job, folder: Path, out: Path, cases: Path) -> Result:
    record, _status = run_sweep(sweep_options(job, folder, cases, out), console=_quiet())
    report = next(out.glob("*/sweep.md"))
    bad = next((r for r in record.results if r.outcome == ProbeOutcome.BAD.value), None)
    lines = [f"**{record.summary}**"]
    if bad is not None and bad.message:
        lines.append(f"- error ({record.package} {bad.version}): `{_code(bad.message)}`")
    lines.append(f"- environment: {_environment(bad or (record.results or [None])[0], job)}")
    lines.append("- reproducers: `reproduce-<version>.py` per bad release, in the run's artifact")
    body = "\n".join(lines) + "\n\n" + report.read_text(encoding="utf-8")
    return Result(
        issue=job.issue,
        kind="sweep",
        status="done",
        headline=record.summary,
        markdown=_bounded(body),
    )


def _bisect(job: Job, folder: Path, out: Path, cases: Path) -> Result:
    record, _status = run_bisect(bisect_options(job, folder, cases, out), console=_quiet())
    script = (folder / job.repro_name()).read_text() if job.case is None else None
    bad = next((s for s in record.steps if s.outcome == ProbeOutcome.BAD.value), None)
    lines = [f"**{record.verdict}**"]
    if bad is not None:
        lines.append(f"- error ({record.package} {bad.version}): `{_code(bad.detail)}`")
    body = "\n".join(lines) + "\n\n" + bisect_markdown(record, script_text=script)
    return Result(
        issue=job.issue,
        kind="bisect",
        status="done",
        headline=record.verdict,
        markdown=_bounded(body),
    )


def _check(job: Job, folder: Path, out: Path, cases: Path) -> Result:
    pins = pins_of(job)
    probe = probe_for(job, folder, cases).defined()
    observation = CellProber()(
        Trial(probe, CellSpec(pins=pins), IndexSettings.from_environment(), out / "steps")
    )
    resolved = observation.resolved
    followed = job.watched or [p.package for p in pins]
    versions = {name: resolved[name] for name in followed if name in resolved}
    outcome = observation.outcome.value
    said = " ".join(f"{name} {version}" for name, version in versions.items()) or pins_text(pins)
    headline = f"{outcome} with {said} ({_code(observation.detail)})"
    lines = [f"**{outcome}** with {said}"]
    if outcome != "good":
        lines.append(f"- error: `{_code(observation.detail)}`")
    python = observation.cell.python if observation.cell else None
    shown = {p.package: resolved.get(p.package, "not installed") for p in pins}
    environment = ", ".join(f"{k} {v}" for k, v in shown.items())
    lines.append(f"- environment: Python {python or '?'}; {environment}")
    lines.append(f"- pins: `{pins_text(pins)}`")
    tail = observation.output_tail
    if tail.strip() and outcome != "good":
        lines += ["", "<details><summary>output (last lines)</summary>", "", "```"]
        lines += [tail.strip()[-3000:].replace("```", "'''"), "```", "", "</details>"]
    return Result(
        issue=job.issue,
        kind="watch" if job.kind == "watch" else "check",
        status="done",
        headline=headline,
        markdown=_bounded("\n".join(lines) + "\n"),
        outcome=outcome,  # type: ignore[arg-type]
        versions=versions,
    )


# Each kind's run and answer: the hunts the bot offers (hunt_table.py's issue rows),
# and a night's watch, which is a check.
ANSWERS: dict[str, Callable[[Job, Path, Path, Path], Result]] = {
    "sweep": _sweep,
    "bisect": _bisect,
    "check": _check,
    "watch": _check,
}


def _environment(result: object, job: Job) -> str:
    if result is None:
        return "nothing was built"
    resolved = getattr(result, "resolved", {}) or {}
    names = [job.package or "", *(pin.package for pin in pins_of(job))]
    shown = ", ".join(f"{n} {resolved[n]}" for n in names if n in resolved)
    return f"Python {getattr(result, 'python', None) or '?'}; {shown or 'nothing resolved'}"


def _code(text: str) -> str:
    return " ".join(redact_text(text).split()).replace("`", "'")[:500]
