"""Child processes that can always be stopped: each runs in its own process group,
so a timeout or an interrupt ends the child and everything it started (uv's build
workers, pytest's xdist workers, a DDP case's ranks)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def run(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    input: str | None = None,
    cwd: str | Path | None = None,
) -> Completed:
    started = time.monotonic()
    proc = subprocess.Popen(
        list(cmd),
        env=dict(env) if env is not None else None,
        cwd=cwd,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        return Completed(proc.returncode, out, err, time.monotonic() - started, timed_out=True)
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    return Completed(proc.returncode, out, err, time.monotonic() - started)


def signal_name(returncode: int) -> str | None:
    """'SIGSEGV' for a child killed by a signal (negative return code), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
