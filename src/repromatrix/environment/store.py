"""One isolated uv environment per resolved pin set.

Building a cell is a function of a pin set (not of a nox session), so that the
matrix, `check` and `bisect` share it:

1. find the base interpreter;
2. resolve the request with ``uv pip compile`` into a complete lock (every
   package at an exact version): floating pins (``latest``, ranges, git refs)
   are decided here, at build time;
3. hash lock + interpreter + indexes + cell env -> the environment's identity;
4. reuse the stored environment with that identity, or build it with
   ``uv venv`` + ``uv pip sync`` (a changed pin changes the lock, hence the
   identity, so only that cell is rebuilt; nox's own reuse ignores pins);
5. record every installed distribution's version.

Two fast paths (the cell at raw-uv speed): a request of exact pins only (a git URL
at a full sha counts) is looked up by the request itself before resolving
(``_requests/``), since it resolves the same way every time; and a new one is built
as raw uv builds it, ``uv venv --relocatable`` + ``uv pip install`` in a staging
slot (staging.py: a fixed folder, so uv asks its interpreter once), its lock read from
what it holds, then moved to its identity's folder. Floating pins, ``system`` and
``null`` pins take steps 2-4 every time.

``system`` pins (torch from a CUDA image, say) are not installed: the package and
the installed closure of its requirements are linked from the base interpreter
into a private folder that the cell sees after its own site-packages, so the
rest of the base interpreter's packages stay invisible.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix import procs
from repromatrix.environment.gc import used_cell
from repromatrix.environment.identity import (
    cell_identity,
    identity_document,
    installable_first,
)
from repromatrix.environment.known_requests import known_cell, remember_cell
from repromatrix.environment.lock import lock_of_venv, lock_versions, packages_of_lock
from repromatrix.environment.project_input import lock_input, overrides_file, project_file
from repromatrix.environment.request import Environment, EnvRequest
from repromatrix.environment.staging import staging_slot
from repromatrix.environment.system import inspect_system, write_stub_wheel
from repromatrix.environment.uv import (
    InstallError,
    Interpreter,
    find_interpreter,
    uv_binary,
    uv_message,
)
from repromatrix.matrix.pins import PinKind
from repromatrix.redact import redact, redact_text

if TYPE_CHECKING:
    from repromatrix.environment.as_of import TimeTravel

LOCK_POLL_SECONDS = 0.2

Log = Callable[[str], None]


def default_store_root() -> Path:
    if os.environ.get("REPROMATRIX_ENV_DIR"):
        return Path(os.environ["REPROMATRIX_ENV_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "repromatrix" / "envs"


# Runs inside the cell: what it really sees, in sys.path order (first one wins).
_INSPECT_CELL = r"""
import json, re, sys, sysconfig
import importlib.metadata as md
overlay = sys.argv[1]
seen = {}
for dist in md.distributions():
    name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
    if name and name not in seen:
        origin = "system" if str(dist.locate_file("")).startswith(overlay) else "env"
        seen[name] = [dist.version, origin]
print(json.dumps({"purelib": sysconfig.get_paths()["purelib"], "packages": seen}))
"""


class EnvStore:
    """Built environments, one folder per identity, reused across runs and tools."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_store_root()

    def build(
        self,
        request: EnvRequest,
        *,
        timeout: float = 1800.0,
        log: Log | None = None,
    ) -> Environment:
        started = time.monotonic()
        deadline = started + timeout
        say = log or (lambda _line: None)
        request = request.with_sources()  # a folder's package: keyed on its source
        for tree in request.sources:
            say(tree.line())
        interpreter = find_interpreter(request.python)
        system = inspect_system(request.pins, interpreter)
        self.root.mkdir(parents=True, exist_ok=True)

        stubs = self.root / "_stubs"
        # Fast reuse: a request of exact pins only resolves the same way every time
        # (floating pins, ranges and branches must be resolved again: they move).
        known = known_cell(self.root, request, interpreter, system)
        if known is not None:
            say(f"reusing environment {known.identity[:16]} (same exact pins)")
            return self._environment(
                known.home,
                known.identity,
                interpreter,
                known.packages,
                True,
                started,
                known.time_travel,
                request.sources,
            )
        uv = uv_binary()  # found only now: a reused cell needs no uv (nor its import)
        # What uv builds: folder pins from their copy (named by digest) in the store.
        build = request.staged_in(self.root)
        travel = None
        if request.as_of is not None:
            # Loaded here, not at the top: a reused cell (check in a bisect step) does
            # not pay for the upload-date client.
            from repromatrix.environment.as_of import keep_what_newer_pins_need, time_travel

            travel = time_travel(request.as_of, request.pins, request.stack, request.index)
            travel = keep_what_newer_pins_need(
                travel, request.pins, request.index, uv=uv, python=interpreter.executable
            )
            say(travel.line())
        exclusions = travel.exclusions() if travel else ()
        # A staging slot, where one is taken, is held until its venv has moved on.
        with contextlib.ExitStack() as held:
            staged = None
            try:
                if installable_first(request):
                    # New exact request: install as raw uv would (one resolve, in `uv
                    # pip install`) into a relocatable venv, then name it by what it holds.
                    staged = held.enter_context(staging_slot(self.root, interpreter.executable))
                    lock = self._install_first(
                        build, interpreter, uv, deadline, say, exclusions, staged
                    )
                else:
                    lock = self._resolve(
                        build, interpreter, system, uv, stubs, deadline, say, exclusions
                    )
            except InstallError as err:
                err.time_travel = travel  # which date cap a refusal names (TimeTravel.capped_in)
                raise
            return self._store(
                request, build, interpreter, system, uv, lock, staged, deadline, say, travel,
                started,
            )  # fmt: skip

    @contextmanager
    def use(
        self, request: EnvRequest, *, timeout: float = 1800.0, log: Log | None = None
    ) -> Iterator[Environment]:
        """``build``, the cell held in use while the block runs: `repromatrix gc`
        leaves it alone (environment/gc.py)."""
        said = log or (lambda _l: None)
        with used_cell(self.root, lambda: self.build(request, timeout=timeout, log=said)) as env:
            yield env

    def _store(
        self,
        request: EnvRequest,
        build: EnvRequest,
        interpreter: Interpreter,
        system: dict,
        uv: str,
        lock: str,
        staged: Path | None,
        deadline: float,
        say: Log,
        travel: TimeTravel | None,
        started: float,
    ) -> Environment:
        """The cell of ``lock`` in its identity's folder: found there, moved there from
        ``staged``, or installed there. ``request`` names it; ``build`` is what uv
        builds (EnvRequest.staged_in)."""
        exclusions = travel.exclusions() if travel else ()
        identity = cell_identity(request, interpreter, system, lock, exclusions)
        home = self.root / identity[:16]
        with _locked(self.root / f"{identity[:16]}.lock"):
            if (home / "complete").exists() and (home / "venv").exists():
                say(f"reusing environment {identity[:16]}")
                packages = json.loads((home / "resolved.json").read_text())
                remember_cell(self.root, request, interpreter, system, identity, travel)
                return self._environment(
                    home, identity, interpreter, packages, True, started, travel, request.sources
                )
            if home.exists():
                shutil.rmtree(home)  # an interrupted build: start over
            home.mkdir(parents=True)
            (home / "lock.txt").write_text(lock)
            (home / "request.json").write_text(
                json.dumps(
                    redact(identity_document(request, interpreter, system, lock, exclusions)),
                    indent=2,
                    sort_keys=True,
                )
            )
            if staged is not None:
                (staged / "venv").rename(home / "venv")
                packages = packages_of_lock(lock) or self._install(
                    build, interpreter, system, uv, home, deadline, say, synced=True
                )
            else:
                packages = self._install(build, interpreter, system, uv, home, deadline, say)
            (home / "resolved.json").write_text(json.dumps(packages, indent=2, sort_keys=True))
            (home / "complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        remember_cell(self.root, request, interpreter, system, identity, travel)
        return self._environment(
            home, identity, interpreter, packages, False, started, travel, request.sources
        )

    def _install_first(
        self,
        request: EnvRequest,
        interpreter: Interpreter,
        uv: str,
        deadline: float,
        say: Log,
        exclusions: tuple[tuple[str, str], ...],
        staging: Path,
    ) -> str:
        """venv + ``uv pip install`` into ``staging`` (a slot, staging.py); returns
        its lock (what it holds, sorted): the same steps as raw uv, nothing more."""
        venv = staging / "venv"
        python = str(venv / "bin" / "python")
        requirements = [r for p in request.pins if (r := p.requirement())] + list(request.tooling)
        project = project_file(self.root, requirements, request.index)
        given = str(project) if project is not None else "-"
        install = [uv, "pip", "install", "-r", given, "--python", python, *request.index.uv_args()]
        install += request.source_args()
        install += _resolution_flags(request, exclusions, self.root / "_overrides")
        say(f"installing: {' '.join(requirements)}")
        steps = [
            (
                [
                    uv,
                    "venv",
                    "--quiet",
                    "--relocatable",
                    "--python",
                    interpreter.executable,
                    str(venv),
                ],
                None,
            ),
            (install, None if project is not None else "\n".join(requirements) + "\n"),
        ]

        def run(cmd: list[str], given: str | None = None) -> str:
            done = procs.run(cmd, input=given, timeout=_remaining(deadline))
            if done.timed_out or done.returncode != 0:
                if done.timed_out:
                    raise InstallError("timeout", "install timed out", redact_text(done.stderr))
                stage = "resolve" if "No solution found" in done.stderr else "install"
                raise InstallError(stage, uv_message(done.stderr), redact_text(done.stderr))
            return done.stdout

        for cmd, given in steps:
            run(cmd, given)
        lock = lock_of_venv(venv)
        if lock is None:  # a distribution from a URL: its lock line is uv's to write
            frozen = run([uv, "pip", "freeze", "--python", python])
            lock = "".join(f"{line}\n" for line in sorted(frozen.splitlines()) if line.strip())
        return lock

    # ------------------------------------------------------------------ steps

    def _resolve(
        self,
        request: EnvRequest,
        interpreter: Interpreter,
        system: dict,
        uv: str,
        stubs: Path,
        deadline: float,
        say: Log,
        exclusions: tuple[tuple[str, str], ...] = (),
    ) -> str:
        requirements = [r for p in request.pins if (r := p.requirement())]
        args = [
            uv,
            "pip",
            "compile",
            "-",
            "--python",
            interpreter.executable,
            "--no-header",
            "--no-annotate",
            "--quiet",
            *request.index.uv_args(),
            *request.source_args(),
        ]
        args += _resolution_flags(request, exclusions, stubs.parent / "_overrides")
        for pin in request.pins:
            if pin.kind in (PinKind.ABSENT, PinKind.SYSTEM):
                args += ["--no-emit-package", pin.package]
        system_pins = [p.package for p in request.pins if p.kind is PinKind.SYSTEM]
        if system_pins:
            # The resolver must see the system copy's exact version (a local one such
            # as 2.11.0+cu128 that no index has): offer it a metadata-only stub.
            stubs.mkdir(parents=True, exist_ok=True)
            for package in system_pins:
                info = system[package]
                write_stub_wheel(stubs, info["name"], info["version"])
                requirements.append(f"{package}=={info['version']}")
            args += ["--find-links", str(stubs)]
        requirements += list(request.tooling)
        say(f"resolving: {' '.join(requirements)}")
        project = project_file(stubs.parent, requirements, request.index, frozenset(system_pins))
        text = "\n".join(requirements) + "\n"
        if project is not None:  # a package with its own index: the project file instead
            args[args.index("-")], text = str(project), None
        done = procs.run(args, input=text, timeout=_remaining(deadline))
        if done.timed_out:
            raise InstallError("timeout", "resolution timed out", redact_text(done.stderr))
        if done.returncode != 0:
            raise InstallError("resolve", uv_message(done.stderr), redact_text(done.stderr))
        return done.stdout

    def _install(
        self,
        request: EnvRequest,
        interpreter: Interpreter,
        system: dict,
        uv: str,
        home: Path,
        deadline: float,
        say: Log,
        *,
        synced: bool = False,
    ) -> dict:
        venv = home / "venv"
        log_lines: list[str] = []
        steps = (
            []
            if synced
            else [
                [uv, "venv", "--quiet", "--python", interpreter.executable, str(venv)],
                [
                    uv,
                    "pip",
                    "sync",
                    str(lock_input(self.root, home, request.index)),
                    "--python",
                    str(venv / "bin" / "python"),
                    *request.index.uv_args(),
                    *request.source_args(),
                ],
            ]
        )
        for cmd in steps:
            say(" ".join(cmd[1:3]))
            done = procs.run(cmd, timeout=_remaining(deadline))
            if cmd[1:3] == ["pip", "sync"] and _stale_index(done.returncode, done.stderr):
                # The lock names a release that uv's cached index page does not list
                # yet (the resolve read a fresher one): once more with the pages read
                # again, not an install-error that a nightly would call new.
                log_lines += [done.stdout, done.stderr]
                say("pip sync --refresh (a release newer than uv's cached index page)")
                done = procs.run([*cmd, "--refresh"], timeout=_remaining(deadline))
            log_lines += [done.stdout, done.stderr]
            (home / "install.log").write_text(redact_text("".join(log_lines)))
            if done.timed_out:
                raise InstallError("timeout", "install timed out", redact_text(done.stderr))
            if done.returncode != 0:
                raise InstallError("install", uv_message(done.stderr), redact_text(done.stderr))
        overlay = home / "system-site"
        overlay.mkdir()
        if not system:
            listed = lock_versions((home / "lock.txt").read_text())
            if listed is not None:
                # No system overlay and every line an exact pin: what sync installed is
                # the lock, so no child process is needed to list it.
                return {name: [version, "env"] for name, version in listed.items()}
        for info in system.values():
            for top in info["tops"]:
                link = overlay / top
                if not link.exists():
                    link.symlink_to(Path(info["site"]) / top)
        done = procs.run(
            [str(venv / "bin" / "python"), "-c", _INSPECT_CELL, str(overlay)], timeout=120
        )
        if done.returncode != 0:
            raise InstallError(
                "install", "the new environment's Python does not start", redact_text(done.stderr)
            )
        purelib = Path(json.loads(done.stdout)["purelib"])
        if system:
            # After the cell's own site-packages: what the cell installed wins.
            (purelib / "_repromatrix_system.pth").write_text(f"{overlay}\n")
            done = procs.run(
                [str(venv / "bin" / "python"), "-c", _INSPECT_CELL, str(overlay)], timeout=120
            )
        return json.loads(done.stdout)["packages"]

    def _environment(
        self,
        home: Path,
        identity: str,
        interpreter: Interpreter,
        packages: dict,
        reused: bool,
        started: float,
        travel: TimeTravel | None = None,
        sources: tuple = (),
    ) -> Environment:
        return Environment(
            root=home,
            identity=identity,
            python=home / "venv" / "bin" / "python",
            resolved={name: version for name, (version, _) in sorted(packages.items())},
            system={
                name: v for name, (v, origin) in sorted(packages.items()) if origin == "system"
            },
            reused=reused,
            seconds=time.monotonic() - started,
            interpreter=interpreter,
            time_travel=travel,
            sources=sources,
        )


def _stale_index(returncode: int, stderr: str) -> bool:
    """uv refused a lock's exact pin as absent from the index ("there is no version
    of packaging==26.4"): after a resolve that saw it, the page uv had cached."""
    return returncode != 0 and "there is no version of" in stderr


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise InstallError("timeout", "install time limit reached")
    return left


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder per identity at a time, across processes (two runs, --jobs N).
    Waits by polling, so that an interrupted run stops waiting too."""
    with open(path, "a+") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                procs.check_cancelled()
                time.sleep(LOCK_POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _resolution_flags(
    request: EnvRequest, exclusions: Iterable[tuple[str, str]], overrides_dir: Path
) -> list[str]:
    """uv's time travel (--exclude-newer, per package too) and --override, the same for
    the install and the lock's compile."""
    flags = ["--exclude-newer", request.exclude_newer] if request.exclude_newer else []
    for package, cutoff in exclusions:
        flags += ["--exclude-newer-package", f"{package}={cutoff}"]
    if request.overrides:
        flags += ["--override", str(overrides_file(overrides_dir, request.overrides))]
    return flags
