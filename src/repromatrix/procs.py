"""Child processes that can always be stopped: each runs in its own process group,
so a timeout or an interrupt ends the child and everything it started (uv's build
workers, pytest's xdist workers, a DDP case's ranks).

Three ways a child is stopped from outside its own time limit:

- ``cancel_all()``: the harness was interrupted while several combinations ran in
  threads (``--jobs N``); only the main thread sees Ctrl-C, so it kills every live
  child group here and the threads that waited on them raise :class:`Cancelled`
  instead of recording a crash that never happened;
- the harness itself is killed (SIGKILL, an OOM kill, a cancelled CI job): on Linux
  each child is started with a parent-death signal, so no uv or pytest outlives it
  and races a resumed run over the same environment or records;
- ``kill_group`` on a timeout, as before.

The harness itself stops the same way whatever stops it: SIGTERM (a CI job
cancelled, ``kill``) and SIGHUP (the terminal closed) become :class:`Interrupted`,
a KeyboardInterrupt, inside :func:`stop_signals`, so every path that handles
Ctrl-C (cells cancelled, partial results written, ``--resume``) handles them.
A closed stdout (``repromatrix run | head -2``) is :func:`output_closed`: the
combinations running finish and are recorded, no new one starts, and the run
then ends as interrupted.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO


class Cancelled(Exception):
    """The run was interrupted: stop this work without recording anything."""


class Interrupted(KeyboardInterrupt):
    """The harness was stopped from outside other than by Ctrl-C: handled as Ctrl-C,
    with its own words and exit status (128 + the signal, as a shell reports it)."""

    def __init__(self, why: str, exit_code: int) -> None:
        super().__init__(why)
        self.why = why
        self.exit_code = exit_code


def interrupt_words(err: KeyboardInterrupt) -> tuple[str, int]:
    """("interrupted", 130) for Ctrl-C; an Interrupted's own words and status."""
    if isinstance(err, Interrupted):
        return err.why, err.exit_code
    return "interrupted", 128 + int(signal.SIGINT)


_STOP_SIGNALS = {
    signal.SIGTERM: "terminated (SIGTERM)",
    signal.SIGHUP: "hung up (SIGHUP)",
}
_OUTPUT_CLOSED = threading.Event()


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted in the main thread while inside (the
    handlers before are put back after; one the process ignores, as nohup has
    SIGHUP ignored, stays ignored); elsewhere than the main thread, nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise Interrupted(_STOP_SIGNALS[signal.Signals(signum)], 128 + signum)

    # An ignored signal stays ignored: under `nohup`, SIGHUP must not stop the run.
    saved = {
        sig: signal.signal(sig, stop)
        for sig in _STOP_SIGNALS
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    _OUTPUT_CLOSED.clear()
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def output_closed() -> None:
    """Our stdout (or stderr) was closed by its reader: finish what runs, start
    nothing new (:func:`stop_wanted`)."""
    _OUTPUT_CLOSED.set()


def stop_wanted() -> Interrupted | None:
    """The Interrupted to end with once the running work is recorded, when the
    output was closed; None otherwise."""
    if _OUTPUT_CLOSED.is_set():
        return Interrupted("stopped: its output was closed", 128 + int(signal.SIGPIPE))
    return None


_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()
_CANCELLED = threading.Event()


def cancel_all() -> None:
    """Stop every child started through this module, and make the threads that
    wait on them raise Cancelled. The flag is set first, so that a thread that
    sees its child die knows why."""
    _CANCELLED.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        kill_group(proc)


def cancelled() -> bool:
    return _CANCELLED.is_set()


def check_cancelled() -> None:
    if _CANCELLED.is_set():
        raise Cancelled("interrupted")


def reset_cancelled() -> None:
    """A new run in the same process (tests, a library caller) starts uncancelled."""
    _CANCELLED.clear()


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl (Linux), looked up once per process; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: a command that starts no child does not load it

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _parent_death_hook() -> Callable[[], None] | None:
    """Linux: a preexec hook that asks the kernel to SIGKILL the child when the
    thread that started it dies. Resolved here, before any fork, so that the child
    runs no import and takes no Python lock (preexec_fn with threads is only safe
    that way)."""
    prctl = _prctl()
    if prctl is None:
        return None
    pr_set_pdeathsig = 1
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def hook() -> None:
        prctl(pr_set_pdeathsig, kill, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request: go too
            os.kill(os.getpid(), kill)

    return hook


@contextlib.contextmanager
def started(cmd: Sequence[str], **popen_args: object) -> Iterator[subprocess.Popen]:
    """Popen in its own session, killed with the harness, known to cancel_all()."""
    check_cancelled()
    hook = _parent_death_hook()
    proc = subprocess.Popen(  # type: ignore[call-overload]
        list(cmd), start_new_session=True, preexec_fn=hook, **popen_args
    )
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        yield proc
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)


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
    output_limit: int | None = None,
) -> Completed:
    """``cmd`` to its end (or ``timeout``), its output as text. With ``output_limit``,
    each stream is kept in a bounded file instead of memory (:func:`bounded_run`)."""
    if output_limit is not None:
        assert input is None, "a bounded run reads no input"
        return bounded_run(cmd, output_limit, env=env, timeout=timeout, cwd=cwd)
    began = time.monotonic()
    with started(
        cmd,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            out, err = proc.communicate(input=input, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            out, err = proc.communicate()
            check_cancelled()
            return Completed(proc.returncode, out, err, time.monotonic() - began, timed_out=True)
        except BaseException:
            kill_group(proc)
            proc.wait()
            raise
    check_cancelled()  # killed by cancel_all(): its output means nothing
    return Completed(proc.returncode, out, err, time.monotonic() - began)


# ------------------------------------------------------------------ bounded output
# A child's output as it comes, each stream into its own file: the first part kept as
# written, then only the last TAIL_BYTES (in memory, bounded) with a line that says how
# much was cut. A child that prints 100 MB costs its limit on disk and TAIL_BYTES in
# memory, and is not stopped for it.

TAIL_BYTES = 64 * 1024
_CHUNK = 65536
_DRAIN_AFTER_EXIT = 1.0  # seconds a pipe a leftover process holds is read after the exit


class BoundedSink:
    """One stream's copy, at most ``limit`` bytes (plus the line saying what was cut)."""

    def __init__(self, file: BinaryIO, limit: int) -> None:
        self.file = file
        self.head = max(0, limit - TAIL_BYTES)
        self.tail = bytearray()
        self.tail_limit = min(TAIL_BYTES, limit)
        self.written = 0
        self.cut = 0

    def write(self, data: bytes) -> None:
        room = self.head - self.written
        if room > 0:
            self.file.write(data[:room])
            self.written += min(room, len(data))
            data = data[room:]
        if not data:
            return
        self.tail += data
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.cut += excess

    def text(self) -> str:
        """What was kept, as text: the head, the cut, the tail."""
        if self.cut:
            self.file.write(f"\n… ({self.cut} bytes of output cut) …\n".encode())
        self.file.write(bytes(self.tail))
        self.file.flush()
        self.file.seek(0)
        text = self.file.read().decode("utf-8", errors="replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it


def bounded_run(
    cmd: Sequence[str],
    limit: int,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    cwd: str | Path | None = None,
) -> Completed:
    """``cmd`` with its stdout and stderr each streamed into a bounded temporary file
    (``limit`` bytes) and read back from there: memory holds a chunk and a tail."""
    import selectors
    import tempfile

    began = time.monotonic()
    with (
        tempfile.TemporaryFile() as out_file,
        tempfile.TemporaryFile() as err_file,
        started(
            cmd,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc,
    ):
        sinks = {
            proc.stdout: BoundedSink(out_file, limit),
            proc.stderr: BoundedSink(err_file, limit),
        }
        timed_out = False
        try:
            with selectors.DefaultSelector() as selector:
                for stream in sinks:
                    selector.register(stream, selectors.EVENT_READ)
                exited_at: float | None = None
                while selector.get_map():
                    for key, _ in selector.select(timeout=0.1):
                        data = os.read(key.fd, _CHUNK)
                        if data:
                            sinks[key.fileobj].write(data)
                        else:
                            selector.unregister(key.fileobj)
                    now = time.monotonic()
                    if exited_at is None and proc.poll() is not None:
                        exited_at = now
                    if exited_at is not None and now - exited_at > _DRAIN_AFTER_EXIT:
                        break  # a process it left holds the pipe: what it said is enough
                    if exited_at is None and timeout is not None and now - began > timeout:
                        kill_group(proc)
                        timed_out = True
                        exited_at = now
        except BaseException:
            kill_group(proc)
            proc.wait()
            raise
        finally:
            for stream in sinks:
                stream.close()
        proc.wait()
        stdout, stderr = (sink.text() for sink in sinks.values())
    check_cancelled()  # killed by cancel_all(): its output means nothing
    return Completed(proc.returncode, stdout, stderr, time.monotonic() - began, timed_out)


def signal_name(returncode: int) -> str | None:
    """'SIGSEGV' for a child killed by a signal (negative return code), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


# ------------------------------------------------------------------ every descendant
# A child started here runs in its own session and dies with us, and a timeout kills its
# group; a grandchild that forks again and leaves the session (a daemon) escapes both,
# and init adopts it. A child subreaper adopts it instead: inside `child_subreaper()`,
# every orphan below this process is re-parented to it, so `kill_descendants()` finds
# each one by walking /proc from here, however it detached and whatever it closed.

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


@contextlib.contextmanager
def child_subreaper() -> Iterator[bool]:
    """Linux: inside, this process adopts its orphaned descendants (whether it can: False
    elsewhere); after, it is what it was (a library caller, a test, is left as found)."""
    prctl = _prctl()
    if prctl is None:
        yield False
        return
    import ctypes

    before = ctypes.c_int(0)
    prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(before), 0, 0, 0)
    adopts = prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    try:
        yield adopts
    finally:
        prctl(_PR_SET_CHILD_SUBREAPER, before.value, 0, 0, 0)


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc (Linux): the live ones, and our own that
    ended and wait to be collected."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                # pid (comm) state ppid ...: comm may hold spaces and parentheses.
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parent = int(fields[1])
        if fields[0] == b"Z" and parent != os.getpid():
            continue  # ended: its parent collects it (a zombie of ours is reaped here)
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(root: int | None = None) -> list[int]:
    """Every live process below ``root`` (this process), parents before children."""
    if not sys.platform.startswith("linux"):
        return []
    tree = _children()
    found, queue = [], list(tree.get(root or os.getpid(), []))
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue.extend(tree.get(pid, []))
    return found


def kill_descendants(keep: Collection[int] = (), rounds: int = 50) -> int:
    """SIGKILL every process below this one but ``keep`` (those that were there before
    the work began), again until none is left (one that forked meanwhile is adopted here
    and found by the next round), reaping what this process adopted. How many were
    killed. Call it when no child of the work should be running."""
    if not sys.platform.startswith("linux"):
        return 0
    killed: set[int] = set()
    for _ in range(rounds):
        found = [pid for pid in descendants() if pid not in keep]
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        _reap(found)
        if not found:
            break
        time.sleep(0.02)
    return len(killed)


def _reap(pids: Collection[int]) -> None:
    """Collect those of ``pids`` that are our children and have ended (adopted orphans
    included); a child of someone else's is theirs to collect."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
