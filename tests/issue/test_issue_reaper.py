"""The repro's processes end with ``repromatrix issue run``: a daemon that forks twice,
leaves the session and closes every descriptor (so nothing waits on a pipe of it) is
gone when ``run_plan`` returns, before the job's next step (the artifact upload, whose
runtime token such a daemon would read) starts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

DAEMON = """\
import os, sys, time
pidfile = sys.argv[1]
if os.fork():
    os.wait()
    sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
os.closerange(0, 1024)
with open(pidfile + ".tmp", "w") as out:
    out.write(str(os.getpid()))
os.rename(pidfile + ".tmp", pidfile)
while True:
    time.sleep(0.1)
"""

# The run job as the workflow has it, in a fresh interpreter (a subreaper is a process-wide
# setting): run_plan with one job that starts the daemon through procs, like a repro.
RUN = """\
import sys, time
from pathlib import Path
from repromatrix import procs
from repromatrix.issue import run
from repromatrix.issue.answer import Result
from repromatrix.issue.plan import Job, Plan

daemon, pidfile, out = sys.argv[1:4]

def run_job(job, folder, answers, cases):
    procs.run([sys.executable, daemon, pidfile], timeout=30)
    for _ in range(100):
        if Path(pidfile).exists():
            break
        time.sleep(0.05)
    return Result(issue=job.issue, kind="check", status="done", headline="ran")

run.run_job = run_job
job = Job(issue=1, kind="check", line="/repromatrix check", timeout=60)
run.run_plan(Plan(event="schedule", repository="o/r", jobs=[job]), Path(out), Path(out) / "a",
             Path(out), say=lambda line: None)
pid = int(Path(pidfile).read_text())
print("daemon", pid, "alive" if Path(f"/proc/{pid}").exists() else "gone", flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper is Linux's")
def test_a_double_forked_daemon_that_closes_its_fds_does_not_survive_the_run(
    tmp_path: Path,
) -> None:
    daemon = tmp_path / "daemon.py"
    daemon.write_text(DAEMON)
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(RUN))
    pidfile = tmp_path / "daemon.pid"
    done = subprocess.run(
        [sys.executable, str(script), str(daemon), str(pidfile), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    pid = int(pidfile.read_text())
    try:
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["daemon", str(pid), "gone"], done.stdout + done.stderr
    finally:
        deadline = time.monotonic() + 5
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
            time.sleep(0.1)
