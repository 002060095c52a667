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

import hashlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix import procs, redact
from repromatrix.environment import Environment, EnvRequest, EnvStore, IndexSettings, InstallError
from repromatrix.environment.request import CELL_TOOLING
from repromatrix.errors import UserError
from repromatrix.execution.runner import CaseRecord, CaseRunner, run_script
from repromatrix.matrix.defaults import DEFAULT_PACKAGES
from repromatrix.matrix.pins import Pin, PinKind, is_version, parse_pin, pin_text
from repromatrix.names import canonicalize_name
from repromatrix.outcomes import COLLECTION_ID
from repromatrix.probe.reason import one_line, probe_reason
from repromatrix.redact import machine_places, portable_path, redact_text, shorten_paths
from repromatrix.search.bisection import Observation, ProbeOutcome

# The upload-date client (as_of.py) loads where a cutoff is given: a plain check
# in a reused cell does not pay for it.
if TYPE_CHECKING:
    from repromatrix.environment.as_of import TimeTravel

EXIT_CODES = {ProbeOutcome.GOOD: 0, ProbeOutcome.BAD: 1, ProbeOutcome.SKIP: 125}
SCRIPT_SKIP = 125
OUTPUT_TAIL = 4000  # characters of a script's output kept per step

# The last line of a Python traceback that says an import failed, and the module it names:
# "ModuleNotFoundError: No module named 'peft.tuners'", "ImportError: cannot import name
# 'X' from 'peft' (...)".
_IMPORT_ERROR = re.compile(
    r"(?:^|: )(?:ModuleNotFoundError|ImportError): "
    r"(?:No module named '(?P<missing>[^']+)'|cannot import name '[^']+' from '(?P<source>[^']+)')"
)
_PIN = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(.*?)\s*$")


def parse_pin_option(text: str) -> Pin:
    """``--pin`` as written on a command line:

    ``torch==2.13.0``, ``torch>=2.5,<2.14``, ``torch=system``, ``peft=latest``,
    ``unsloth=null`` (kept out), ``peft@git+https://...``."""
    redact.remember(texts=[text])  # credentials of a URL, masked wherever they appear
    match = _PIN.match(text)
    if not match or not match.group(2):
        raise UserError(
            f"--pin {text!r}: expected PACKAGE==VERSION, PACKAGE<specifier>, "
            "PACKAGE=system|latest|null or PACKAGE@URL"
        )
    name, rest = match.groups()
    if rest.startswith("@"):
        raw: str | None = rest[1:].strip()
    elif rest.startswith("==") and is_version(rest[2:]):
        raw = rest[2:].strip()
    elif rest.startswith("=") and not rest.startswith("=="):
        raw = rest[1:].strip()
        if raw not in ("system", "latest", "null"):
            # 'torch=>2' is a typo of 'torch>=2', not a pin to guess at
            raise UserError(
                f"--pin {text!r}: after a single '=' comes system, latest or null "
                "(a version takes '==')"
            )
        raw = None if raw == "null" else raw
    else:
        raw = rest  # a specifier: >=, <, ~=, !=, ==4.5.*
    try:
        return parse_pin(name, raw)
    except ValueError as err:
        raise UserError(f"--pin {text!r}: {err}") from None


def unique_pins(pins: Sequence[Pin]) -> tuple[Pin, ...]:
    seen: dict[str, Pin] = {}
    for pin in pins:
        if pin.package in seen and seen[pin.package] != pin:
            raise UserError(f"--pin: {pin.package} is pinned twice ({seen[pin.package]}, {pin})")
        seen[pin.package] = pin
    return tuple(seen.values())


# --------------------------------------------------------------------------- probes


@dataclass(frozen=True)
class Probe:
    """What is run in each environment: a case of cases/, or a script."""

    case: str | None = None
    script: Path | None = None
    cases_root: Path = Path("cases")
    timeout: float = 900.0  # seconds for the run itself (not the install)

    def __post_init__(self) -> None:
        if (self.case is None) == (self.script is None):
            raise UserError("give one of --case CASE_ID or --script FILE.py")

    @property
    def label(self) -> str:
        return f"case {self.case}" if self.case else f"script {self.script.name}"  # type: ignore[union-attr]

    def validated(self) -> Probe:
        """The probe with absolute paths, or a UserError naming what is missing."""
        if self.script is not None:
            script = self.script.expanduser().resolve()
            if not script.is_file():
                raise UserError(f"--script {self.script}: no such file")
            return Probe(script=script, cases_root=self.cases_root, timeout=self.timeout)
        root = self.cases_root.expanduser().resolve()
        if not root.is_dir():
            raise UserError(f"--cases {self.cases_root}: no such folder")
        path = (self.case or "").split("::", 1)[0]
        if not path or not (root / path).exists():
            raise UserError(f"--case {self.case}: no {path or 'file'} in {self.cases_root}")
        return Probe(case=self.case, cases_root=root, timeout=self.timeout)

    def record(self) -> dict:
        """The probe as bisect.json, sweep.json and culprit.json store it: the case, or
        the script by a portable path and its sha256 (which script exactly ran)."""
        if self.case is not None:
            return {"case": self.case, "timeout": self.timeout}
        assert self.script is not None
        return {
            "script": portable_path(self.script),
            "sha256": hashlib.sha256(self.script.read_bytes()).hexdigest(),
            "timeout": self.timeout,
        }

    def defined(self, say: Callable[[str], None] | None = None) -> Probe:
        """The validated probe, whose case the file also defines: the test function
        or class, and the ``[param]`` id when the parametrize marks can be read
        (matrix/case_ids.py; read from the source, nothing is imported). A search
        over a case that does not exist could only end "could not conclude", and
        ``check`` would answer "untestable" at every commit of a git bisect run.
        Parameter ids made at collection time cannot be checked: ``say`` gets one
        line that says so (stderr by default), and the id is kept."""
        probe = self.validated()
        if probe.case is None or "::" not in probe.case:
            return probe
        path = probe.case.split("::", 1)[0]
        import ast  # only a case probe is read statically

        try:
            ast.parse((probe.cases_root / path).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as err:
            raise UserError(f"--case {self.case}: cannot read {path} ({err})") from None
        from repromatrix.matrix.case_ids import CaseIndex  # a case probe's only

        index = CaseIndex(probe.cases_root)
        problem = index.problem(probe.case)
        if problem:
            raise UserError(f"--case {self.case}: {problem}")
        unchecked = index.unchecked_param(probe.case)
        if unchecked:
            line = (
                f"note: --case {self.case}: its parameter id cannot be checked before "
                f"it runs ({unchecked})"
            )
            (say or (lambda text: print(text, file=sys.stderr)))(line)
        return probe


def searched_probe(
    package: str, pins: Iterable[Pin], probe: Probe, *, as_of: str | None, searched: str
) -> Probe:
    """What every search over one package's versions (bisect, sweep) asks of its input
    before anything is built: the package is not also pinned, an as-of package held
    fixed has an exact pin (its date comes from it), and the probe exists (a case its
    file defines). Returns the probe with absolute paths."""
    pins = tuple(pins)
    if any(pin.package == package for pin in pins):
        raise UserError(
            f"--pin: {package} is the package being {searched}; it cannot be pinned too"
        )
    from repromatrix.environment.as_of import dated_release, is_date

    if as_of is not None and canonicalize_name(as_of) != package and not is_date(as_of):
        dated_release(as_of, pins)  # a package held fixed: it needs an exact pin
    return probe.defined()


@dataclass(frozen=True)
class CellSettings:
    """What a combination sets for its cell beyond pins and indexes (``--cell``, a
    nightly hunt): uv's overrides and the variables its probe runs with. Both are
    part of the environment's identity, as in a matrix run."""

    overrides: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class CheckOptions:
    pins: tuple[Pin, ...]
    probe: Probe
    index: IndexSettings = field(default_factory=IndexSettings.from_environment)
    python: str | None = None
    env_dir: Path | None = None
    install_timeout: float = 1800.0
    as_of: str | None = None  # time travel (environment/as_of.py); None: today's stack
    stack: tuple[str, ...] = DEFAULT_PACKAGES
    # CUDA_VISIBLE_DEVICES for the probe (parallel probes on a multi-GPU host, one GPU
    # group each); None: what this process sees.
    visible_devices: str | None = None
    cell: CellSettings = field(default_factory=CellSettings)

    def probe_env(self) -> dict[str, str]:
        env = dict(self.cell.env)
        if self.visible_devices is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.visible_devices
        return env


Log = Callable[[str], None]


def check(
    options: CheckOptions,
    *,
    workdir: Path,
    name: str = "check",
    log: Log | None = None,
    on_environment: Callable[[Environment], None] | None = None,
) -> Observation:
    """Build (or reuse) the environment of ``options.pins`` and run the probe in it.

    ``workdir`` receives ``<name>.install.log``, ``<name>.run.log`` and, for a case,
    ``<name>.records.jsonl``. The observation's ``extra`` holds the environment's
    identity, whether it was reused, and every resolved version."""
    say = log or (lambda _line: None)
    started = time.monotonic()
    workdir.mkdir(parents=True, exist_ok=True)
    install_lines: list[str] = []
    request = EnvRequest(
        pins=options.pins,
        python=options.python,
        index=options.index,
        as_of=options.as_of,
        stack=options.stack if options.as_of else (),
        overrides=options.cell.overrides,
        env=options.cell.env,
        # A script runs with the cell's Python alone: its cell holds the pins and what
        # they need, as raw uv would build it. A case needs the runner's pytest.
        tooling=() if options.probe.script is not None else CELL_TOOLING,
    )
    try:
        env = EnvStore(options.env_dir).build(
            request, timeout=options.install_timeout, log=install_lines.append
        )
    except InstallError as err:
        (workdir / f"{name}.install.log").write_text(
            redact_text("\n".join([*install_lines, err.log]))
        )
        failed: dict = {"install_error": f"{err.stage}: {err.message}"}
        travel: TimeTravel | None = err.time_travel
        if travel is not None and (capped := travel.capped_in(err.message)):
            # The date cap refused what a pin needs: bisect.md / sweep.md say so.
            failed["as_of_cap"] = {"as_of": travel.as_of, "date": travel.cutoff, "packages": capped}
        return Observation(
            ProbeOutcome.SKIP,
            f"install-error: {err.stage}: {one_line(err.message)}",
            time.monotonic() - started,
            failed,
        )
    (workdir / f"{name}.install.log").write_text(redact_text("\n".join(install_lines)))
    say(f"environment {env.identity[:16]} {'reused' if env.reused else 'built'}")
    if env.time_travel is not None:
        say(env.time_travel.line())
    if on_environment is not None:
        on_environment(env)
    extra = {
        "environment": env.identity[:16],
        "reused": env.reused,
        "build_seconds": round(env.seconds, 2),
        "python": env.interpreter.version,
        "resolved": env.resolved,
    }
    if env.time_travel is not None:
        extra["as_of"] = env.time_travel.describe()
    probe = options.probe
    if probe.script is not None:
        places = machine_places(env=env.root, script=probe.script.parent)
        outcome, detail, output = _run_script(
            env, probe, lambda t: shorten_paths(t, places), options.probe_env()
        )
        output = shorten_paths(redact_text(output), places)
        (workdir / f"{name}.run.log").write_text(output)
        extra["output_tail"] = output[-OUTPUT_TAIL:]
    else:
        outcome, detail = _run_case(env, probe, workdir, name, options.probe_env())
    if outcome is ProbeOutcome.BAD and (
        missing := unpinned_import(detail, options.pins, lambda m: _distributions(env, m))
    ):
        outcome = ProbeOutcome.SKIP
        detail = f"untestable ({missing} is not pinned): {detail}"
    return Observation(outcome, detail, time.monotonic() - started, extra)


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
) -> tuple[ProbeOutcome, str]:
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
        return ProbeOutcome.SKIP, f"no case matched {probe.case}"
    outcomes = {record.outcome for record in ran.cases}
    failing = [r for r in ran.cases if r.outcome not in ("passed", "skipped")]
    if failing:
        first = failing[0]
        said = [part for part in (first.error_type, one_line(first.message)) if part]
        if len(said) == 2 and said[1].startswith(said[0]):
            said = said[1:]
        return ProbeOutcome.BAD, ": ".join([first.outcome, *said])
    if "passed" in outcomes:
        return ProbeOutcome.GOOD, "passed"
    if ran.cases:
        return ProbeOutcome.SKIP, f"skipped: {one_line(ran.cases[0].message)}"
    return ProbeOutcome.SKIP, f"no case matched {probe.case}"


def _not_found(records: list[CaseRecord]) -> bool:
    """pytest refused the node id: this checkout of cases/ does not have that case
    (under git bisect run, an older commit), which makes it untestable, not bad.
    pytest says so as "ERROR: not found: <id>" and exits with status 4."""
    return (
        len(records) == 1
        and records[0].id == COLLECTION_ID
        and "ERROR: not found:" in records[0].message
    )


# --------------------------------------------------------------------------- the command


def run_check(options: CheckOptions, *, say: Log = print, tell: Log = print) -> int:
    """``repromatrix check``: one verdict as git bisect run's exit code; what the run
    printed goes to ``say``, the verdict line to ``tell``."""
    probe = options.probe.defined(say)
    if options.as_of is not None:
        from repromatrix.environment.as_of import dated_release, is_date

        if not is_date(options.as_of):
            dated_release(options.as_of, options.pins)  # bad input: before anything is built
    options = replace(options, probe=probe)
    with tempfile.TemporaryDirectory(prefix="repromatrix-check-") as folder:
        observation = check(options, workdir=Path(folder), log=say)
        tail = observation.extra.get("output_tail", "")
        if tail.strip():
            say(tail.rstrip())
        elif observation.outcome is not ProbeOutcome.GOOD:
            for log_name in ("check.install.log", "check.run.log"):
                path = Path(folder) / log_name
                if path.exists() and path.read_text().strip():
                    lines = path.read_text().strip().splitlines()[-20:]
                    say("\n".join(lines))
    floating = resolved_floating(options.pins, observation.extra.get("resolved") or {})
    if floating:
        say(f"resolved: {floating}")
    travelled = observation.extra.get("as_of") or {}
    when = f" (rest of the stack as of {travelled['date']})" if travelled.get("date") else ""
    tell(
        f"{observation.outcome.value}: {probe.label} with {pins_text(options.pins)}{when} "
        f"({observation.detail}, {observation.seconds:.1f}s)"
    )
    return EXIT_CODES[observation.outcome]


def resolved_floating(pins: Sequence[Pin], resolved: dict[str, str]) -> str:
    """What the pins that name no exact version resolved to, for the console:
    ``peft>=0.15 -> 0.17.1, trl=latest -> 0.26.2`` (empty when all pins are exact)."""
    shown = [
        f"{pin_text(pin)} -> {resolved.get(pin.package, 'not installed')}"
        for pin in pins
        if pin.kind not in (PinKind.EXACT, PinKind.ABSENT)
    ]
    return ", ".join(shown)


def pins_text(pins: Sequence[Pin]) -> str:
    """``torch==2.13.0 peft>=0.15`` for logs and reports."""
    return " ".join(pin_text(p) for p in pins)
