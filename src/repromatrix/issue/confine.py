"""The repro's confinement: ``repromatrix issue run`` runs each job (uv's builds of its
cells, the repro, every process they start) in a bubblewrap sandbox, and stays outside
it as its supervisor:

    repromatrix issue run              root, outside: supervise() (starts, relays, times out)
      bwrap                            root: sets up the view, then the namespace's init
        python -m repromatrix.issue.confine   limits, then uid/gid 65534 (no capability
                                       left, no_new_privs: no sudo, no setuid binary); exec
          repromatrix issue run --sandboxed   the job, as unconfined: cells, probes, the repro

What the job gets:

- **its own unprivileged user** (``REPRO_UID``): the runner's files it may not read stay
  unread (a runner's credentials, another job's folders), whatever it runs.
- **its own PID namespace and /proc**: it sees and signals its own processes only, no
  other process's ``/proc/<pid>/environ`` or memory. Its init (bwrap, root) takes no
  signal from inside, and the supervisor is not in the namespace at all. When the init
  ends, the kernel kills every process of the namespace: when the job's harness ends
  (killed by its repro too), when bwrap or the supervisor dies (``--die-with-parent``,
  procs' parent-death signal), when the time is up. Nothing of it is left for the
  job's next step (the artifact upload, whose runtime token a leftover would read).
- **a read-only view of the machine** (``--ro-bind / /``), a private writable /tmp (a
  fresh folder of the supervisor's, removed after), its answer folder writable, and
  nothing else writable: not the runner's ``_actions/`` (the next step's code), not the
  workspace. A folder it must read (the harness, the plan, a find-links folder) under
  one its user may not enter (the runner's home) is shown alone: the folder it lies in
  is replaced by an empty one.
- **limits** (``Limits``): CPU seconds, data (memory), file size, processes.
- **an environment** built from the run job's allowlist (``run.repro_environment``,
  URLs without credentials) and its own places (HOME, caches and cells in its /tmp).

What it needs: Linux, bubblewrap (``bwrap``, Debian's and Ubuntu's ``bubblewrap``
package) and root for the supervisor (to run the job as another user; the workflow
calls it with ``sudo``). No user namespaces are needed.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import resource
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote

from repromatrix import procs

# nobody/nogroup on Debian and Ubuntu: a user that owns nothing on a runner.
REPRO_UID = 65534
REPRO_GID = 65534
PRIVATE_TMP = Path("/tmp")
# The places the job writes, all in its private /tmp (a shared cache or cell store is
# what a repro would poison for the next job).
SANDBOX_PLACES = {
    "HOME": "/tmp/home",
    "TMPDIR": "/tmp",
    "TEMP": "/tmp",
    "TMP": "/tmp",
    "XDG_CACHE_HOME": "/tmp/home/.cache",
    "XDG_CONFIG_HOME": "/tmp/home/.config",
    "XDG_DATA_HOME": "/tmp/home/.local/share",
    "UV_CACHE_DIR": "/tmp/uv-cache",
    "REPROMATRIX_ENV_DIR": "/tmp/cells",
}
GPU_DEVICES = ("/dev/nvidia*", "/dev/dri", "/dev/kfd")
ANSWER_BYTES = 200 * 1024 * 1024  # what the answer folder may hold for the upload
RELAYED_BYTES = 1024 * 1024  # what the job log shows of the sandbox's own lines


@dataclass(frozen=True)
class Limits:
    """Per process (setrlimit), inherited by everything in the sandbox. Processes count
    every process and thread of REPRO_UID."""

    cpu_seconds: int
    data_bytes: int
    file_bytes: int
    processes: int

    @classmethod
    def for_job(cls, seconds: float) -> Limits:
        """A job's: CPU for every core over its whole time; the data segment of one
        process at most 80% of the machine's memory (not the address space: CUDA
        reserves more than there is); 8 GiB a file (a CUDA wheel is under 3); 4096
        processes and threads."""
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return cls(
            cpu_seconds=int(seconds * (os.cpu_count() or 1)),
            data_bytes=int(memory * 0.8),
            file_bytes=8 * 1024**3,
            processes=4096,
        )

    def args(self) -> list[str]:
        return [
            str(v) for v in (self.cpu_seconds, self.data_bytes, self.file_bytes, self.processes)
        ]


_RLIMITS = (resource.RLIMIT_CPU, resource.RLIMIT_DATA, resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC)


@dataclass(frozen=True)
class View:
    """What the sandbox shows besides the read-only machine: ``private_tmp`` (a folder of
    the supervisor's) as /tmp, ``read`` visible (wherever they are), ``write`` writable;
    and whom it runs as."""

    private_tmp: Path
    read: tuple[Path, ...] = ()
    write: tuple[Path, ...] = ()
    user: tuple[int, int] = (REPRO_UID, REPRO_GID)  # uid, gid


def bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


def unavailable() -> str | None:
    """Why this machine cannot confine a job (one line), or None when it can."""
    if not sys.platform.startswith("linux"):
        return "the repro's confinement needs Linux (bubblewrap)"
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    if os.geteuid() != 0:
        return "the repro's confinement needs root to run it as its own user (sudo)"
    tried = subprocess.run(
        [bwrap(), "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--", "true"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if tried.returncode != 0:
        said = " ".join(tried.stderr.split())[:200] or f"exit {tried.returncode}"
        return f"bubblewrap cannot make a sandbox here: {said}"
    return None


def harness_places() -> list[str]:
    """What the harness runs from: its interpreter, venv and package, and uv."""
    import repromatrix
    from repromatrix.environment.uv import uv_binary

    places = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    places += [os.path.dirname(os.path.realpath(sys.executable))]
    places += [os.path.dirname(os.path.dirname(repromatrix.__file__))]  # an editable install
    with contextlib.suppress(Exception):  # no uv: the job says so, inside
        places.append(os.path.dirname(os.path.realpath(uv_binary())))
    return places


# An absolute path in a variable's value: alone, in a list (PATH, find-links), after a
# name (UV_INDEX's name=URL) or a file:// URL's.
_PATH = re.compile(r"(?:^|(?<=[\s,;:=]))(/[^\s,;:]+)")


def paths_in(environ: Mapping[str, str]) -> list[str]:
    """The folders and files the environment names (PATH's folders, a find-links folder,
    a CA bundle, a file:// index), which the job must still see; its own places aside."""
    found: list[str] = []
    for name, value in environ.items():
        if name in SANDBOX_PLACES:
            continue
        for match in _PATH.finditer(value):
            path = "/" + unquote(match.group(1)).lstrip("/")
            if path != "/" and os.path.exists(path):
                found.append(os.path.normpath(path))
    return found


def _searchable(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` (no other group) may enter ``path``, by its mode bits."""
    mode = os.stat(path)
    if mode.st_uid == uid:
        return bool(mode.st_mode & stat.S_IXUSR)
    if mode.st_gid == gid:
        return bool(mode.st_mode & stat.S_IXGRP)
    return bool(mode.st_mode & stat.S_IXOTH)


def _ancestors(path: Path) -> list[str]:
    """/a, /a/b, ... up to path's parent."""
    parts = path.parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def view_args(view: View) -> list[str]:
    """bwrap's arguments for ``view``: the machine read-only, fresh /proc and /dev (with
    the GPUs), the private /tmp, and each needed path visible at its own place."""
    args = ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm"]
    for pattern in GPU_DEVICES:
        for device in sorted(glob.glob(pattern)):
            args += ["--dev-bind", device, device]
    args += ["--bind", str(view.private_tmp), str(PRIVATE_TMP)]
    hidden = {str(PRIVATE_TMP), "/proc", "/dev"}  # replaced above: shown paths are rebound
    covers: list[str] = []
    needed = [(Path(os.path.realpath(p)), False) for p in view.read if os.path.exists(p)]
    needed += [(Path(os.path.realpath(p)), True) for p in view.write]
    binds: list[tuple[Path, bool, str | None]] = []
    for path, writable in needed:
        if path == Path("/"):
            continue
        cover = None
        for ancestor in _ancestors(path):
            if ancestor in hidden or ancestor in covers:
                cover = ancestor
                break
            if not _searchable(ancestor, *view.user):
                covers.append(ancestor)
                cover = ancestor
                break
        if str(path) in hidden:
            continue  # /tmp itself, /proc, /dev: never shown
        if cover is not None or writable:
            binds.append((path, writable, cover))
    for cover in sorted(covers, key=lambda c: c.count("/")):
        args += ["--perms", "0755", "--tmpfs", cover]  # an empty folder in its place
    for path, writable, cover in sorted(binds, key=lambda b: len(b[0].parts)):
        if cover is not None:
            inner = [a for a in _ancestors(path) if len(a) > len(cover)]
            for folder in inner:
                args += ["--perms", "0755", "--dir", folder]
        args += ["--bind" if writable else "--ro-bind", str(path), str(path)]
    return args


def command(
    inner: Sequence[str],
    view: View,
    env: Mapping[str, str],
    limits: Limits,
    *,
    bwrap: str,
    python: str = sys.executable,
) -> list[str]:
    """The whole command line: bwrap, the view, the environment, then this module's
    entry (limits, the user) that execs ``inner``."""
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
    argv += ["--unshare-uts", "--unshare-cgroup-try", *view_args(view)]
    argv += ["--chdir", str(PRIVATE_TMP), "--clearenv"]
    for name, value in sorted({**env, **SANDBOX_PLACES}.items()):
        argv += ["--setenv", name, value]
    # Only what the entry needs to empty the capability sets and become the job's user.
    argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    argv += ["--"]
    argv += [python, "-I", "-m", "repromatrix.issue.confine", *map(str, view.user)]
    return [*argv, *limits.args(), "--", *inner]


def enter(argv: Sequence[str]) -> NoReturn:
    """Inside the sandbox, as root: the limits, then the user, then ``exec`` the job.
    ``argv``: UID GID CPU DATA FSIZE NPROC -- COMMAND..."""
    uid, gid, *numbers = (int(a) for a in argv[:6])
    assert argv[6] == "--"
    for which, value in zip(_RLIMITS, numbers, strict=True):
        resource.setrlimit(which, (value, value))
    _drop_capability_sets()
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)  # from root: every capability goes with it
    if 0 in os.getresuid() or 0 in os.getresgid():
        raise SystemExit("repromatrix: could not leave root in the sandbox")
    os.makedirs(SANDBOX_PLACES["HOME"], exist_ok=True)
    os.execv(argv[7], list(argv[7:]))


def _drop_capability_sets() -> None:
    """Empty the bounding, inheritable and ambient sets (bwrap leaves them full): the
    user change then leaves no capability anywhere, nor any to gain again."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for capability in range(last + 1):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "could not drop a capability in the sandbox")
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Sets(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint32) for name in ("effective", "permitted", "inheritable")]

    header, sets = Header(_CAPABILITY_VERSION_3, 0), (Sets * 2)()
    if libc.capget(ctypes.byref(header), sets) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    for half in sets:
        half.inheritable = 0
    if libc.capset(ctypes.byref(header), sets) != 0:
        raise OSError(ctypes.get_errno(), "capset")


_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522


# ------------------------------------------------------------------ the supervisor


@contextlib.contextmanager
def private_tmp(uid: int = REPRO_UID, gid: int = REPRO_GID):  # type: ignore[no-untyped-def]
    """A fresh folder of the job's user, its /tmp; removed after, whatever it holds."""
    folder = Path(tempfile.mkdtemp(prefix="repromatrix-sandbox-"))
    try:
        os.chown(folder, uid, gid)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def trust_repositories(private: Path, repositories: Iterable[str]) -> None:
    """The local git repositories the job reads (a package's history, ``repositories:``
    as file:// URLs) trusted by its git: they belong to the runner's user, not the
    job's, and git refuses another user's repository ("dubious ownership") unless a
    global config names it (a ``-c`` does not count). Its HOME's .gitconfig, made here
    in its private /tmp, names those folders only."""
    folders = [str(Path(path)) for path in repositories]
    if not folders:
        return
    home = private / Path(SANDBOX_PLACES["HOME"]).relative_to(PRIVATE_TMP)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, *owner_of(private))
    lines = ["[safe]"]
    for folder in folders:
        lines += [f"\tdirectory = {folder}", f"\tdirectory = {folder}/.git"]
    (home / ".gitconfig").write_text("\n".join(lines) + "\n")


def make_writable(folder: Path, uid: int = REPRO_UID, gid: int = REPRO_GID) -> None:
    """The answer folder, the job user's (created; what was there is the job's too)."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chown(folder, uid, gid)
    os.chmod(folder, 0o755)


def owner_of(path: Path) -> tuple[int, int]:
    """Who owns the nearest existing folder at or above ``path``: whom the answers are
    handed back to (the runner's user, which uploads them)."""
    for place in [path, *path.parents]:
        if place.exists():
            found = place.stat()
            return found.st_uid, found.st_gid
    return os.getuid(), os.getgid()


def hand_back(folder: Path, owner: tuple[int, int], limit: int = ANSWER_BYTES) -> list[str]:
    """What the job wrote, made plain data for the upload step: every link, device,
    pipe or socket and every hard-linked file removed (upload-artifact would follow a
    link to a file of the runner's), set-id bits dropped, owned by ``owner``; the
    largest files removed while the folder holds more than ``limit`` bytes. The
    paths removed, relative to ``folder``."""
    removed: list[str] = []
    files: list[tuple[int, Path]] = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in [*dirs, *names]:
            path = Path(root, name)
            found = path.lstat()
            plain_dir = stat.S_ISDIR(found.st_mode)
            plain_file = stat.S_ISREG(found.st_mode) and found.st_nlink == 1
            if not (plain_dir or plain_file):
                path.unlink()
                removed.append(str(path.relative_to(folder)))
                continue
            os.lchown(path, *owner)
            os.chmod(path, (found.st_mode & 0o777) | (0o700 if plain_dir else 0o600))
            if plain_file:
                files.append((found.st_size, path))
        dirs[:] = [d for d in dirs if Path(root, d).is_dir() and not Path(root, d).is_symlink()]
    os.lchown(folder, *owner)
    total = sum(size for size, _ in files)
    for size, path in sorted(files, reverse=True):
        if total <= limit:
            break
        if path.name == "answer.json":
            continue
        path.unlink()
        total -= size
        removed.append(str(path.relative_to(folder)))
    return removed


def supervise(
    argv: Sequence[str],
    *,
    timeout: float,
    say: Callable[[str], None],
) -> int | None:
    """Run the sandbox (``argv`` from :func:`command`) to its end or ``timeout``; its
    lines are relayed to ``say`` with GitHub's workflow commands stopped (a repro's
    ``::set-output`` or ``::add-mask`` means nothing) and at most RELAYED_BYTES of them.
    Its exit status (128 + the signal, as bwrap says a killed job), None when out of time."""
    stop = secrets.token_hex(16)
    say(f"::stop-commands::{stop}")
    try:
        with procs.started(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT) as proc:  # fmt: skip
            relay = threading.Thread(target=_relay, args=(proc.stdout, say), daemon=True)
            relay.start()
            try:
                code: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                procs.kill_group(proc)  # bwrap: its namespace ends with it
                proc.wait()
            relay.join(timeout=5)
    finally:
        say(f"::{stop}::")
    return code


def _relay(stream: Iterable[bytes], say: Callable[[str], None]) -> None:
    shown = 0
    for raw in stream:
        shown += len(raw)
        if shown <= RELAYED_BYTES:
            say(raw.decode("utf-8", errors="replace").rstrip("\n"))
        elif shown - len(raw) <= RELAYED_BYTES:
            say("… (the rest of the sandbox's lines are not shown)")


if __name__ == "__main__":
    enter(sys.argv[1:])
