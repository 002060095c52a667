"""``repromatrix issue run`` as the run job starts it (``env -i`` with the allowlist), its
job confined: hostile repros that failed before (one kills its parent, then reads the
environment; one prints 100 MB), the refusal where the machine cannot confine, and
the environment the job starts from. Offline: a tiny wheel is the repro's package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from support.confinement import processes_with
from support.wheels import version_wheel

from repromatrix.issue.plan import Job, Plan, write_plan

ISSUE = 3
SECRET = "upload-step-runtime-token-4242"


def _plan(tmp_path: Path, code: str, **job: object) -> Path:
    plan = tmp_path / "plan"
    settings = {"kind": "check", "line": "/repromatrix check", "pins": ["probe-pkg==1.0"]}
    chosen = Job(issue=ISSUE, comment=1, timeout=120, **{**settings, **job})  # type: ignore[arg-type]
    write_plan(Plan(event="issue_comment", repository="o/r", jobs=[chosen]), plan, {ISSUE: code})
    return plan


def _house(tmp_path: Path) -> Path:
    house = tmp_path / "house"
    house.mkdir()
    version_wheel(house, "probe-pkg", "1.0")
    return house


def _issue_run(tmp_path: Path, plan: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """The workflow's step: env -i, the allowlisted variables, repromatrix issue run."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(_house(tmp_path)),
        **extra,
    }
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", "issue", "run", "--plan", str(plan),
         "--issue", str(ISSUE), "--out", str(tmp_path / "answers"), "--cases", str(plan / "cases")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _answer(tmp_path: Path) -> dict[str, object]:
    return json.loads((tmp_path / "answers" / str(ISSUE) / "answer.json").read_text())


# Leaves a daemon (a session of its own) that scans every /proc/<pid>/environ it can see
# for the next step's token and notes what it finds in the answer folder, then SIGKILLs
# its parent, `repromatrix issue run`'s job, so that no reaper of its runs. Before the
# sandbox, the daemon lived on into the upload step and read its environment.
KILLS_ITS_PARENT = """\
# repromatrix: probe-pkg
import os, subprocess, sys, time
answers = os.path.join({out!r}, "3")
if os.fork() == 0:
    os.setsid()
    beacon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                               "-".join(["beacon", {unique!r}])])
    while True:
        for pid in os.listdir("/proc"):
            try:
                if {secret!r}.encode() in open(f"/proc/{{pid}}/environ", "rb").read():
                    open(os.path.join(answers, "stolen"), "a").write(pid + "\\n")
            except OSError:
                pass
        open(os.path.join(answers, "alive"), "a").write("x")
        time.sleep(0.05)
time.sleep(1)
os.kill(os.getppid(), 9)
time.sleep(30)
"""


def test_a_repro_that_kills_its_parent_then_reads_the_environment_leaves_nothing(
    confinable: None, tmp_path: Path
) -> None:
    unique = f"{os.getpid()}-{time.monotonic_ns()}"
    code = KILLS_ITS_PARENT.format(out=str(tmp_path / "answers"), unique=unique, secret=SECRET)
    # The token in the supervisor's own environment too (as if the step forgot env -i).
    done = _issue_run(tmp_path, _plan(tmp_path, code), REPROMATRIX_SECRET_NOTE=SECRET)

    assert done.returncode == 1, done.stdout + done.stderr
    answer = _answer(tmp_path)
    assert (answer["status"], answer["headline"]) == (
        "failed", "the run ended without an answer (killed by SIGKILL)"
    )  # fmt: skip
    # The next step starts, its token in its environment: nothing of the repro is left.
    upload_step = subprocess.Popen(
        ["sleep", "3"], env={"PATH": os.environ["PATH"], "ACTIONS_RUNTIME_TOKEN": SECRET}
    )
    alive = tmp_path / "answers" / str(ISSUE) / "alive"
    ticks = alive.stat().st_size
    time.sleep(1)
    upload_step.kill()
    upload_step.wait()
    assert alive.stat().st_size == ticks, "the repro's daemon outlived the run"
    assert not processes_with(f"beacon-{unique}")
    assert not (tmp_path / "answers" / str(ISSUE) / "stolen").exists()


# Prints 100 MB (50 on each stream), then the line a reason is taken from.
PRINTS_100_MB = """\
# repromatrix: probe-pkg
import sys
chunk = "x" * 1023 + "\\n"
for _ in range(50 * 1024):
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
print("the verdict line, after 100 MB")
sys.exit(1)
"""


def test_a_repro_that_prints_100_mb_is_recorded_in_bounded_files(
    confinable: None, tmp_path: Path
) -> None:
    done = _issue_run(tmp_path, _plan(tmp_path, PRINTS_100_MB))

    assert done.returncode == 0, done.stdout + done.stderr
    answer = _answer(tmp_path)
    assert answer["status"] == "done" and answer["outcome"] == "bad"
    assert "the verdict line, after 100 MB" in str(answer["headline"])
    (log,) = (tmp_path / "answers" / str(ISSUE) / "steps").glob("*.run.log")
    assert log.stat().st_size < 5 * 1024 * 1024  # 2 MiB a stream kept, not 100 MB
    assert "bytes of output cut" in log.read_text()


def test_the_bounded_output_holds_only_a_chunk_and_a_tail_in_memory(tmp_path: Path) -> None:
    """The harness's peak memory while a child prints 100 MB: a bounded run (what a
    script's probe is) adds a few MB; the whole output would be over 200 MB."""
    driver = textwrap.dedent("""\
        import resource, sys
        from repromatrix import procs
        from repromatrix.execution.runner import SCRIPT_OUTPUT_LIMIT
        talk = "import sys\\nfor _ in range(50 * 1024): sys.stdout.write('x' * 1023 + '\\\\n'); " \\
               "sys.stderr.write('y' * 1023 + '\\\\n')\\nprint('last')"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        done = procs.run([sys.executable, "-c", talk], timeout=120,
                         output_limit=SCRIPT_OUTPUT_LIMIT)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        kept = len(done.stdout) + len(done.stderr)
        print((after - before) // 1024, kept, done.stdout.splitlines()[-1])
    """)
    ran = subprocess.run(
        [sys.executable, "-c", driver], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    grown_mb, kept, last = ran.stdout.split()
    assert int(grown_mb) < 20 and int(kept) < 5 * 1024 * 1024 and last == "last"


def test_where_it_cannot_confine_the_run_job_refuses_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "issue", "run", "--plan",
         str(_plan(tmp_path, "# repromatrix: probe-pkg\n")), "--issue", str(ISSUE),
         "--out", str(tmp_path / "answers")],
        env={"PATH": str(tmp_path)},  # no bwrap there
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    line = (
        "bubblewrap (bwrap) is not installed: apt-get install bubblewrap; a repro runs only "
        "confined here (issue: confinement: optional, in matrix.yaml or "
        ".github/repromatrix.yml, runs it unconfined)"
    )
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"repromatrix: error: {line}"
    ]
    assert _answer(tmp_path)["headline"] == line  # the issue is told too


def test_a_repository_that_opts_out_runs_it_unconfined_and_says_so(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "# repromatrix: probe-pkg\nimport probe_pkg\n", confinement="optional")
    done = _issue_run(tmp_path, plan, PATH=f"{Path(sys.executable).parent}")  # no bwrap
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "warning: bubblewrap (bwrap) is not installed: apt-get install bubblewrap: "
        "the repro runs unconfined (issue: confinement: optional)" in done.stdout
    )
    assert _answer(tmp_path)["outcome"] == "good"


def test_the_run_jobs_environment_is_the_allowlist_with_no_credential_in_a_url(
    tmp_path: Path,
) -> None:
    environ = {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "UV_INDEX_URL": "https://__token__:pypi-s3cr3t@pypi.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://alice:pw1@a.example/simple https://bob@b.example/simple",
        "UV_INDEX": "private=https://u:p%40ss@c.example/simple other=https://d.example/simple",
        "HTTPS_PROXY": "http://proxy-user:proxy-pass@proxy.example:3128",
        "PIP_FIND_LINKS": "file:///wheels",
        "GH_TOKEN": "ghp_not_for_the_repro",
        "ACTIONS_RUNTIME_TOKEN": "runtime",
        "WANDB_API_KEY": "wandb",
    }
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "issue", "env"],
        env=environ, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    given = dict(item.split("=", 1) for item in done.stdout.split("\0") if item)
    assert given == {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "UV_INDEX_URL": "https://pypi.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://a.example/simple https://b.example/simple",
        "UV_INDEX": "private=https://c.example/simple other=https://d.example/simple",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "PIP_FIND_LINKS": "file:///wheels",
    }
