"""uv and the interpreter a cell is built on: finding them, and uv's errors on one line."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sys
from dataclasses import dataclass

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.redact import redact_text


class InstallError(Exception):
    """A cell that cannot be built; recorded as install-error, the run goes on."""

    def __init__(self, stage: str, message: str, log: str = "") -> None:
        super().__init__(message)
        self.stage = stage  # python | resolve | install | timeout
        self.message = message
        self.log = log
        # The time travel of the request (environment/as_of.py), set where it applied.
        self.time_travel: object | None = None


@dataclass(frozen=True)
class Interpreter:
    executable: str
    version: str
    implementation: str


def uv_binary() -> str:
    if sys.prefix != sys.base_prefix:
        # In a venv the uv wheel's binary is beside this interpreter: the first place
        # find_uv_bin looks, without its sysconfig scheme lookups (5 ms of a new cell).
        beside = os.path.join(os.path.dirname(sys.executable), "uv")
        if os.path.isfile(beside):
            return beside
    try:
        from uv import find_uv_bin  # the `uv` wheel ships the binary

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if not found:
            raise UserError(
                "uv is not installed: pip install uv (repromatrix builds cells with it)"
            ) from None
        return found


def find_interpreter(spec: str | None, uv: str | None = None) -> Interpreter:
    """The base interpreter of a cell: a version ('3.11') or a path, found by uv;
    by default the interpreter this harness runs on (outside any venv), which is
    also where ``system`` packages are looked up."""
    if spec is None:
        executable = getattr(sys, "_base_executable", None) or sys.executable
        if os.path.realpath(executable) == os.path.realpath(sys.executable) or sys.prefix != (
            sys.base_prefix
        ):
            # This interpreter (or the base of the venv it runs in): the same build, so
            # no child process is needed to ask its version (a cell's reuse path).
            return Interpreter(
                executable=executable,
                version=platform.python_version(),
                implementation=platform.python_implementation(),
            )
    else:
        done = procs.run([uv or uv_binary(), "python", "find", "--no-project", spec], timeout=120)
        if done.returncode != 0 or not done.stdout.strip():
            detail = uv_message(done.stderr) if done.stderr.strip() else "not found"
            raise InstallError("python", f"no Python interpreter matches {spec!r}: {detail}")
        executable = done.stdout.strip().splitlines()[-1]
    probe = procs.run(
        [
            executable,
            "-c",
            "import json,sys,platform;print(json.dumps([sys.executable,"
            "platform.python_version(),platform.python_implementation()]))",
        ],
        timeout=60,
    )
    if probe.returncode != 0:
        raise InstallError("python", f"interpreter {spec or 'default'} does not start")
    exe, version, impl = json.loads(probe.stdout)
    return Interpreter(executable=exe, version=version, implementation=impl)


# uv's chain for an index page it could not read: "Failed to fetch: URL/PACKAGE/", then
# "cause:" lines down to the operating system's words.
_FAILED_FETCH = re.compile(r"Failed to fetch: `?(?P<page>[a-z+]+://\S+?/)`?$")


def unreachable_index(lines: list[str]) -> str | None:
    """``cannot reach index URL for PACKAGE (cause): ...the fix`` from uv's lines, or
    None when they are not about an index page uv could not read."""
    for number, line in enumerate(lines):
        found = _FAILED_FETCH.search(line)
        if found is None:
            continue
        index, _, package = found.group("page").rstrip("/").rpartition("/")
        causes = [
            c.removeprefix("cause:").strip() for c in lines[number + 1 :] if c.startswith("cause:")
        ]
        cause = causes[-1] if causes else "no answer"
        return (
            f"cannot reach index {index} for {package} ({cause}): correct its URL, or take it "
            "out where it is set (matrix.yaml's package_indexes / extra_index_urls / "
            f"index_url, or your PIP_* / UV_* variables) so that {package} comes from your "
            "other indexes"
        )
    return None


def uv_message(stderr: str) -> str:
    """uv's error, on one line: the lines after 'error:' / '×', joined; an index that
    cannot be reached, as the one line that names it, the package and the fix."""
    lines = [line.strip() for line in redact_text(stderr).splitlines() if line.strip()]
    unreachable = unreachable_index(lines)
    if unreachable is not None:
        return unreachable
    for i, line in enumerate(lines):
        if line.startswith(("error:", "×")):
            return " ".join(lines[i:])[:2000]
    return " ".join(lines[-5:])[:2000] or "uv failed without a message"
