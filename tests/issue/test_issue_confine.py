"""The repro's sandbox (issue/confine.py), one property a test, each proved here in a
real bubblewrap sandbox (seconds): its own user, PID namespace and /proc, a read-only
view with a private /tmp, limits, a supervisor it cannot kill, nothing left after.
docs/issue-repro.md's security table names these tests."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.confinement import processes_with, sandboxed

from repromatrix.issue import confine

pytestmark = pytest.mark.usefixtures("confinable")


def test_the_job_runs_as_its_own_user_with_no_capability_and_no_new_privileges(
    tmp_path: Path,
) -> None:
    code = textwrap.dedent("""\
        import json, os
        status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
        print(json.dumps({
            "ids": [os.getresuid(), os.getresgid(), os.getgroups()],
            "caps": [status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")],
            "no_new_privs": status["NoNewPrivs"].strip(),
        }))
    """)
    status, said, _ = sandboxed(code, tmp_path)
    assert status == 0, said
    seen = json.loads(said[-1])
    uid, gid = confine.REPRO_UID, confine.REPRO_GID
    assert seen["ids"] == [[uid, uid, uid], [gid, gid, gid], []]
    assert seen["caps"] == ["0000000000000000"] * 4 and seen["no_new_privs"] == "1"


def test_it_sees_no_other_process_and_cannot_kill_its_supervisor_or_init(tmp_path: Path) -> None:
    # A process of the runner's with a secret in its environment, as the upload step is.
    outside = subprocess.Popen(
        ["sleep", "60"], env={"PATH": os.environ["PATH"], "UPLOAD_SECRET": "s3cr3t-outside"}
    )
    code = textwrap.dedent("""\
        import os, signal, sys
        seen, secrets, refused = [], [], []
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            seen.append(int(pid))
            try:
                if b"s3cr3t-outside" in open(f"/proc/{pid}/environ", "rb").read():
                    secrets.append(pid)
            except OSError:
                pass
        for target in (1, int(sys.argv[1]), int(sys.argv[2])):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError as err:
                refused.append(err.errno)
        print(len(seen), secrets, refused)
    """)
    try:
        status, said, _ = sandboxed(code, tmp_path, args=[str(os.getpid()), str(outside.pid)])
        assert outside.poll() is None and status == 0, said
    finally:
        outside.kill()
        outside.wait()
    count, secrets, refused = said[-1].split(" ", 2)
    assert int(count) <= 3  # bwrap's init, the job, its `ls`: nothing of the machine
    assert secrets == "[]"
    assert refused.count(",") == 2  # init, this process and the outside one: all refused


def test_it_writes_its_private_tmp_and_answer_folder_and_nothing_else(tmp_path: Path) -> None:
    # What a runner lets anyone write: a workspace folder and _actions/ (shown to the job,
    # as the plan and the harness are), a world-writable folder outside /tmp.
    workspace = tmp_path / "workspace"
    actions = tmp_path / "_actions"
    shared = Path(f"/var/tmp/repromatrix-test-{os.getpid()}-{time.monotonic_ns()}")
    for folder in (workspace, actions, shared):
        folder.mkdir()
        folder.chmod(0o777)
    code = textwrap.dedent("""\
        import os, sys
        for folder in sys.argv[1:]:
            try:
                with open(os.path.join(folder, "written"), "w") as out:
                    out.write("x")
                print("wrote", folder)
            except OSError as err:
                print("refused", folder, err.strerror)
    """)
    try:
        targets = [
            workspace,
            actions,
            shared,
            Path("/tmp"),
            Path(sys.prefix),
            tmp_path / "answers/7",
        ]
        status, said, answers = sandboxed(
            code, tmp_path, args=[str(t) for t in targets], read=[workspace, actions]
        )
        assert status == 0, said
        assert said == [
            f"refused {workspace} Read-only file system",
            f"refused {actions} Read-only file system",
            f"refused {shared} Read-only file system",
            "wrote /tmp",
            f"refused {sys.prefix} Read-only file system",
            f"wrote {answers}",
        ]
        assert not [t for t in targets[:3] if (t / "written").exists()]
        assert (answers / "written").read_text() == "x"
    finally:
        for folder in (shared,):
            for child in folder.iterdir():
                child.unlink()
            folder.rmdir()


def test_a_folder_it_needs_inside_one_it_may_not_enter_is_shown_alone(tmp_path: Path) -> None:
    # The runner's home (0750) holds the workspace, the plan and the harness.
    home = Path(f"/var/tmp/repromatrix-home-{os.getpid()}-{time.monotonic_ns()}")
    needed = home / "work" / "plan"
    needed.mkdir(parents=True)
    home.chmod(0o700)
    (home / ".credentials").write_text("runner credentials")
    (needed / "plan.json").write_text("{}")
    code = "import os, sys; print(open(sys.argv[1]).read(), sorted(os.listdir(sys.argv[2])))"
    try:
        status, said, _ = sandboxed(
            code, tmp_path, args=[str(needed / "plan.json"), str(home)], read=[needed]
        )
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=True)
    assert status == 0, said
    assert said[-1] == "{} ['work']"  # the home is an empty folder but for the path to the plan


def test_limits_bound_memory_file_size_processes_and_cpu(tmp_path: Path) -> None:
    code = textwrap.dedent("""\
        import os, subprocess, sys, time
        try:
            hog = bytearray(400 * 1024 * 1024)
            print("memory: allocated")
        except MemoryError:
            print("memory: refused")
        try:
            with open("/tmp/big", "wb") as out:
                out.write(b"x" * (3 * 1024 * 1024))
            print("file: written")
        except OSError as err:
            print("file:", err.strerror, os.path.getsize("/tmp/big"))
        started = []
        try:
            for _ in range(200):
                started.append(subprocess.Popen(["sleep", "30"]))
            print("processes: 200")
        except OSError as err:
            print("processes:", err.strerror, len(started) < 64)
        for child in started:
            child.kill()
            child.wait()
        spin = subprocess.run([sys.executable, "-c", "while True: pass"])
        print("cpu:", spin.returncode)
    """)
    limits = confine.Limits(
        cpu_seconds=2, data_bytes=200 * 1024**2, file_bytes=1024**2, processes=64
    )
    # A user of this test's own: the process count is per user, and other sandboxes of
    # the test session run as REPRO_UID meanwhile.
    status, said, _ = sandboxed(code, tmp_path, limits=limits, user=(64999, 64999))
    assert status == 0, said
    assert said[0] == "memory: refused"
    assert said[1] == f"file: File too large {1024**2}"
    assert said[2] == "processes: Resource temporarily unavailable True"
    assert said[3] == f"cpu: {-signal.SIGKILL}"  # at the hard limit


# A daemon (forked, a session of its own) and its parent, both sleeping with a marker
# made of their arguments (sandboxed's command line holds only its parts).
DAEMON = """\
import os, subprocess, sys
sleeper = [sys.executable, "-c", "import time; time.sleep(600)", "-".join(sys.argv[1:])]
if os.fork() == 0:
    os.setsid()
    subprocess.run(sleeper)
else:
    subprocess.run(sleeper)
"""


def test_when_its_supervisor_is_killed_nothing_of_it_is_left(tmp_path: Path) -> None:
    """SIGKILL on the supervisor (a cancelled job, an OOM kill): bwrap dies with it, and
    with bwrap its namespace, a daemon that left the session included."""
    unique = f"{os.getpid()}-{time.monotonic_ns()}"
    marker = f"beacon-{unique}"  # only the beacons' command lines hold it whole
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(f"""\
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from support.confinement import sandboxed
        sandboxed({DAEMON!r}, Path(sys.argv[1]), args=["beacon", {unique!r}])
        """)
    )
    supervisor = subprocess.Popen([sys.executable, str(driver), str(tmp_path)])
    try:
        deadline = time.monotonic() + 30
        while len(processes_with(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(processes_with(marker)) == 2, "the sandbox's daemon never started"
    finally:
        supervisor.kill()
        supervisor.wait()
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = processes_with(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "a process of the sandbox outlived its supervisor"


def test_out_of_time_the_sandbox_is_ended_with_everything_in_it(tmp_path: Path) -> None:
    unique = f"{os.getpid()}-{time.monotonic_ns()}"
    marker = f"late-{unique}"
    began = time.monotonic()
    status, _, _ = sandboxed(DAEMON, tmp_path, args=["late", unique], timeout=3)
    assert status is None and time.monotonic() - began < 15
    assert not processes_with(marker)


def test_what_it_says_cannot_give_the_runner_workflow_commands(tmp_path: Path) -> None:
    code = "print('::add-mask::x'); print('::set-output name=plan::evil')"
    said: list[str] = []
    answers = tmp_path / "answers"
    confine.make_writable(answers)
    with confine.private_tmp() as private:
        view = confine.View(private, read=tuple(confine.harness_places()), write=(answers,))
        argv = confine.command([sys.executable, "-c", code], view, {}, confine.Limits.for_job(60),
                               bwrap=confine.bwrap())  # fmt: skip
        confine.supervise(argv, timeout=60, say=said.append)
    stop = said[0].removeprefix("::stop-commands::")
    assert len(stop) == 32 and said[1:3] == ["::add-mask::x", "::set-output name=plan::evil"]
    assert said[3] == f"::{stop}::"  # GitHub runs no command between the two


def test_its_answer_folder_is_handed_back_as_plain_data(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    (answers / "steps").mkdir(parents=True)
    secret = tmp_path / "runner.credentials"
    secret.write_text("token")
    (answers / "answer.json").write_text("{}")
    (answers / "steps" / "link.log").symlink_to(secret)  # upload-artifact would follow it
    (answers / "steps" / "dir-link").symlink_to(tmp_path)
    os.link(secret, answers / "hard.log")
    os.mkfifo(answers / "fifo")
    (answers / "suid").write_text("x")
    (answers / "suid").chmod(0o4755)
    (answers / "big.log").write_bytes(b"x" * 3000)
    (answers / "small.log").write_bytes(b"x" * 500)

    removed = confine.hand_back(answers, (4321, 4321), limit=2000)

    assert sorted(removed) == ["big.log", "fifo", "hard.log", "steps/dir-link", "steps/link.log"]
    kept = sorted(str(p.relative_to(answers)) for p in answers.rglob("*"))
    assert kept == ["answer.json", "small.log", "steps", "suid"]
    assert all(p.stat().st_uid == 4321 for p in [answers, *answers.rglob("*")])
    assert not (answers / "suid").stat().st_mode & (stat.S_ISUID | stat.S_ISGID)
    assert secret.read_text() == "token"


def test_the_sandbox_needs_bubblewrap_and_root_and_says_which_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    assert confine.unavailable() == (
        "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    )


def test_a_local_repository_it_is_shown_is_one_its_git_may_read(tmp_path: Path) -> None:
    # A package's history on the runner (repositories: file:///PATH): the runner's user
    # owns it, so git refuses it to the job's user ("dubious ownership") unless the
    # job's HOME trusts it; another repository it is shown stays refused.
    history, other = tmp_path / "history", tmp_path / "other"
    for repo in (history, other):
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                        "commit", "-q", "--allow-empty", "-m", "v1.0"], check=True)  # fmt: skip
    tmp_path.chmod(0o755)
    code = textwrap.dedent("""\
        import subprocess, sys
        for name, url in (("history", sys.argv[1]), ("other", sys.argv[2])):
            done = subprocess.run(["git", "clone", "-q", "--bare", url, f"/tmp/{name}"],
                                  capture_output=True, text=True)
            print(name, done.returncode, "dubious ownership" in done.stderr)
    """)
    status, said, _ = sandboxed(
        code, tmp_path, args=[history.as_uri(), other.as_uri()], read=[other],
        repositories=[str(history)],
    )  # fmt: skip
    assert status == 0, said
    assert said[-2:] == ["history 0 False", "other 128 True"]
