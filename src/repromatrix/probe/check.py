"""One verdict: build (or reuse) the environment of a pin set, run one probe in it,
and say good, bad or skip, with git bisect run's exit codes (0 / 1 / 125).

A probe is either

- a case of cases/ (a pytest node id relative to cases/), run by the CaseRunner:
  passed = good, skipped = untestable, anything else (failed, error, crashed,
  timed out) = bad; or
- a standalone script, run with the environment's interpreter: exit 0 = good,
  125 = untestable, anything else = bad (a crash or a time-out included).

An environment that cannot be built with the pins is untestable (skip), as in
git bisect: it says nothing about the behaviour being looked for. So is a probe
that dies importing a package nobody pinned (ModuleNotFoundError / ImportError
naming a module of no pinned package): the environment lacks what the probe
needs, and calling that "bad" would bisect the wrong bug.

A script step's detail is its exit status and the probe's own reason (reason.py:
an uncaught exception's line, else its last stdout line, else stderr's last line
that is no warning's).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix import procs
from repromatrix.environment import Environment, EnvRequest, EnvStore, InstallError
from repromatrix.environment.request import CELL_TOOLING
from repromatrix.execution._cell.signature import Signature, signature_of_traceback
from repromatrix.execution.cell import run_in_cell
from repromatrix.execution.runner import CaseRecord, CaseRunner, run_script
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.names import canonicalize_name
from repromatrix.outcomes import COLLECTION_ID, ProbeOutcome
from repromatrix.probe.observation import (
    BuiltCell,
    DateCap,
    InstallFailure,
    Observation,
)
from repromatrix.probe.reason import one_line, probe_reason
from repromatrix.probe.spec import Probe, Trial
from repromatrix.redact import machine_places, redact_text, shorten_paths

# The upload-date client (as_of.py) loads where a cutoff is given: a plain check
# in a reused cell does not pay for it.
if TYPE_CHECKING:
    from repromatrix.environment.as_of import TimeTravel

SCRIPT_SKIP = 125
OUTPUT_TAIL = 4000  # characters of a script's output kept per step

# The last line of a Python traceback that says an import failed, and the module it names:
# "ModuleNotFoundError: No module named 'peft.tuners'", "ImportError: cannot import name
# 'X' from 'peft' (...)".
_IMPORT_ERROR = re.compile(
    r"(?:^|: )(?:ModuleNotFoundError|ImportError): "
    r"(?:No module named '(?P<missing>[^']+)'|cannot import name '[^']+' from '(?P<source>[^']+)')"
)


Log = Callable[[str], None]


def check(
    trial: Trial,
    *,
    store: EnvStore | None = None,
    install_timeout: float = 1800.0,
    log: Log | None = None,
) -> Observation:
    """Build (or reuse) the cell of ``trial`` and run its probe in it (the default
    store: $REPROMATRIX_ENV_DIR or the user's cache). The observation names the cell
    it ran in (its identity, whether it was reused, every resolved version), or why
    none could be built."""
    say = log or (lambda _line: None)
    started = time.monotonic()
    trial.workdir.mkdir(parents=True, exist_ok=True)
    # A script runs with the cell's Python alone: its cell holds the pins and what they
    # need, as raw uv would build it. A case needs the runner's pytest.
    tooling = () if trial.probe.script is not None else CELL_TOOLING
    ran = run_in_cell(
        store or EnvStore(),
        EnvRequest.for_cell(trial.cell, trial.index, tooling),
        lambda env: _probed(env, trial, say),
        timeout=install_timeout,
        install_log=trial.workdir / f"{trial.name}.install.log",
    )
    if isinstance(ran, InstallError):
        travel: TimeTravel | None = ran.time_travel
        capped = travel.capped_in(ran.message) if travel is not None else ()
        return Observation(
            ProbeOutcome.SKIP,
            f"install-error: {ran.stage}: {one_line(ran.message)}",
            time.monotonic() - started,
            failure=InstallFailure(
                ran.stage,
                ran.message,
                # The date cap refused what a pin needs: bisect.md / sweep.md say so.
                DateCap(travel.as_of, travel.cutoff, capped) if travel and capped else None,
            ),
        )
    outcome, detail, cell, tail, signature = ran
    return Observation(
        outcome,
        detail,
        time.monotonic() - started,
        cell,
        output_tail=tail,
        signature=signature,
    )


def _probed(
    env: Environment, trial: Trial, say: Log
) -> tuple[ProbeOutcome, str, BuiltCell, str, Signature | None]:
    """The probe of ``trial`` in its built cell: outcome, detail, the cell, the output's
    tail (a script's), what a bad one died of."""
    say(f"environment {env.identity[:16]} {'reused' if env.reused else 'built'}")
    if env.time_travel is not None:
        say(env.time_travel.line())
    cell = BuiltCell(
        identity=env.identity[:16],
        reused=env.reused,
        build_seconds=round(env.seconds, 2),
        python=env.interpreter.version,
        resolved=env.resolved,
        travel=env.time_travel,
        interpreter=env.python,
        sources={tree.package: tree.record() for tree in env.sources},
    )
    for tree in env.sources:  # packages built from a folder: which tree exactly
        say(tree.line())
    probe, tail = trial.probe, ""
    if probe.script is not None:
        places = machine_places(env=env.root, script=probe.script.parent)
        outcome, detail, output = _run_script(
            env, probe, lambda t: shorten_paths(t, places), trial.probe_env()
        )
        output = shorten_paths(redact_text(output), places)
        (trial.workdir / f"{trial.name}.run.log").write_text(output)
        tail = output[-OUTPUT_TAIL:]
        signature = _script_signature(detail, output) if outcome is ProbeOutcome.BAD else None
    else:
        outcome, detail, signature = _run_case(
            env, probe, trial.workdir, trial.name, trial.probe_env()
        )
    if outcome is ProbeOutcome.BAD and (
        missing := unpinned_import(detail, trial.cell.pins, lambda m: _distributions(env, m))
    ):
        outcome = ProbeOutcome.SKIP
        detail = f"untestable ({missing} is not pinned): {detail}"
        signature = None
    return outcome, detail, cell, tail, signature


def _script_signature(detail: str, output: str) -> Signature:
    """A bad script's signature: of the Python traceback its output ends with, else its
    exit status ("exit 1", "timed out after 300 s") and its reason line."""
    found = signature_of_traceback(output)
    if found is not None:
        return found
    head, _, said = detail.partition(": ")
    return Signature.of(head, (), said)


def unpinned_import(
    detail: str,
    pins: Sequence[Pin],
    distributions: Callable[[str], list[str]] = lambda _module: [],
) -> str | None:
    """The top-level module a failed import names, when no pin is for it (None
    otherwise, or when ``detail`` holds no import error). A module is a pinned
    package's by name (``peft``; ``unsloth_zoo`` is ``unsloth-zoo``) or by the
    distributions that provide it in the environment (``PIL`` is ``pillow``'s)."""
    match = _IMPORT_ERROR.search(detail)
    if match is None:
        return None
    module = (match.group("missing") or match.group("source")).split(".", 1)[0]
    pinned = {pin.package for pin in pins if pin.kind is not PinKind.ABSENT}
    if canonicalize_name(module) in pinned:
        return None
    if any(canonicalize_name(name) in pinned for name in distributions(module)):
        return None
    return canonicalize_name(module)


# importlib.metadata in the environment: the distributions that provide a top-level module.
_PROVIDERS = (
    "import importlib.metadata as m, json, sys; "
    "print(json.dumps(m.packages_distributions().get(sys.argv[1], [])))"
)


def _distributions(env: Environment, module: str) -> list[str]:
    done = procs.run(
        [str(env.python), "-c", _PROVIDERS, module], env=env.subprocess_env(), timeout=60
    )
    try:
        found = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        return []
    return [str(name) for name in found] if isinstance(found, list) else []


def _run_script(
    env: Environment,
    probe: Probe,
    shorten: Callable[[str], str],
    extra_env: dict[str, str] | None = None,
) -> tuple[ProbeOutcome, str, str]:
    assert probe.script is not None
    done = run_script(env, probe.script, timeout=probe.timeout, extra_env=extra_env or {})
    output = done.stdout + ("\n" if done.stdout and done.stderr else "") + done.stderr
    said = shorten(redact_text(probe_reason(done.returncode, done.stdout, done.stderr)))
    if done.timed_out:
        return ProbeOutcome.BAD, _with(f"timed out after {probe.timeout:.0f} s", said), output
    if done.returncode == 0:
        return ProbeOutcome.GOOD, _with("exit 0", said), output
    if done.returncode == SCRIPT_SKIP:
        return ProbeOutcome.SKIP, _with(f"exit {SCRIPT_SKIP}: untestable", said), output
    if done.returncode < 0:
        return ProbeOutcome.BAD, _with(f"killed by signal {-done.returncode}", said), output
    return ProbeOutcome.BAD, _with(f"exit {done.returncode}", said), output


def _with(head: str, said: str) -> str:
    return f"{head}: {said}" if said else head


def _run_case(
    env: Environment,
    probe: Probe,
    workdir: Path,
    name: str,
    extra_env: dict[str, str] | None = None,
) -> tuple[ProbeOutcome, str, Signature | None]:
    assert probe.case is not None
    records = workdir / f"{name}.records.jsonl"
    records.unlink(missing_ok=True)  # records of another environment are not ours
    runner = CaseRunner(
        env,
        probe.cases_root,
        case_timeout=probe.timeout,
        extra_env=extra_env or {},
        log_path=workdir / f"{name}.run.log",
    )
    ran = runner.run([probe.case], records)
    if _not_found(ran.cases):
        return ProbeOutcome.SKIP, f"no case matched {probe.case}", None
    outcomes = {record.outcome for record in ran.cases}
    failing = [r for r in ran.cases if r.outcome not in ("passed", "skipped")]
    if failing:
        first = failing[0]
        said = [part for part in (first.error_type, one_line(first.message)) if part]
        if len(said) == 2 and said[1].startswith(said[0]):
            said = said[1:]
        return ProbeOutcome.BAD, ": ".join([first.outcome, *said]), first.signature
    if "passed" in outcomes:
        return ProbeOutcome.GOOD, "passed", None
    if ran.cases:
        return ProbeOutcome.SKIP, f"skipped: {one_line(ran.cases[0].message)}", None
    return ProbeOutcome.SKIP, f"no case matched {probe.case}", None


def _not_found(records: list[CaseRecord]) -> bool:
    """pytest refused the node id: this checkout of cases/ does not have that case
    (under git bisect run, an older commit), which makes it untestable, not bad.
    pytest says so as "ERROR: not found: <id>" and exits with status 4."""
    return (
        len(records) == 1
        and records[0].id == COLLECTION_ID
        and "ERROR: not found:" in records[0].message
    )
