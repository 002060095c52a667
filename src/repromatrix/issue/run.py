"""The ``run`` job: a job of the plan (one issue's; the workflow runs one job per issue)
through the library (its hunt on the one road, offered/), its answer to
answers/<issue>/.

This is the one place code from the internet runs. The job has no token
(``permissions: {}``) and no secret. The workflow starts ``repromatrix issue run`` with
``env -i`` and the allowlist of its environment (``repromatrix issue env``: the locale,
paths, the GPUs, the package index settings and repromatrix's own, every URL without
its credentials); a token a runner sets anyway (act sets ACTIONS_RUNTIME_TOKEN in every
step), an API key or the step's file commands (GITHUB_ENV) never reach it.

``run_issue`` then runs each job confined (confine.py: its own user, PID namespace and
/proc, a read-only view with a private /tmp, limits) and supervises it from outside;
where this machine cannot confine, it refuses with one line, unless the repository's
settings allow it (``issue: confinement: optional``): the job then runs here, as
``run_plan`` runs it, the process a child subreaper that kills what the repro left
behind when the job ends. A run stops after the plan's minutes: what was done so far
is the answer.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.hunts.hunt import Voice
from repromatrix.issue import confine, offered
from repromatrix.issue.answer import (
    ANSWER_FILE,
    Result,
    answer_folder,
    bounded,
    read_answer,
    write_result,
)
from repromatrix.issue.plan import Job, Plan
from repromatrix.redact import redact_text, without_credentials

# What a repro may see of the run job's environment: where things are, the locale, the
# GPUs, the package index settings and how to reach the index (uv and the cells need
# them; the run job has no secret, so they carry none) and repromatrix's own settings.
# Nothing else.
_ALLOWED = frozenset(
    {
        *("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "CI"),
        *("TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"),
        *("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME"),
        *("HIP_VISIBLE_DEVICES", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"),
        *("PIP_NO_INDEX", "UV_CACHE_DIR", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS"),
        *("UV_DEFAULT_INDEX", "UV_INDEX", "UV_NO_INDEX", "UV_OFFLINE", "UV_PYTHON"),
        *("UV_PYTHON_DOWNLOADS", "UV_PYTHON_INSTALL_DIR", "UV_LINK_MODE", "UV_TORCH_BACKEND"),
        *("UV_HTTP_TIMEOUT", "UV_NATIVE_TLS", "PIP_DEFAULT_TIMEOUT", "PIP_CERT"),
        # How this machine reaches the index: its CA bundle and proxy (no credentials here).
        *("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"),
        *("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"),
        *("http_proxy", "https_proxy", "no_proxy", "all_proxy"),
    }
)
_ALLOWED_PREFIXES = ("LC_", "REPROMATRIX_")
# Even an allowed name goes when it says it holds a secret (REPROMATRIX_TOKEN, ...).
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASS$|CREDENTIAL|PRIVATE|_KEY|AUTH|^ACTIONS_|^GITHUB_", re.I
)


def repro_environment(environ: dict[str, str] | os._Environ) -> dict[str, str]:
    """The allowlisted part of ``environ``, every URL in it without its credentials (an
    index or a proxy the run job reaches with a password is not one for a repro)."""
    return {
        name: without_credentials(value)
        for name, value in environ.items()
        if (name in _ALLOWED or name.startswith(_ALLOWED_PREFIXES))
        and not _SECRET_NAME.search(name)
    }


def keep_only_allowed(environ: dict[str, str] | os._Environ = os.environ) -> list[str]:
    """Take from ``environ`` every variable the repro may not see, and the credentials
    out of the URLs of those it may; the names taken."""
    kept = repro_environment(environ)
    removed = sorted(name for name in environ if name not in kept)
    for name in removed:
        del environ[name]
    for name, value in kept.items():
        if environ[name] != value:
            environ[name] = value
    return removed


class OutOfTime(BaseException):
    """The run's minutes are spent (a BaseException: the library's own handlers save
    what they have and let it through, as for Ctrl-C)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expire(_signum: int, _frame: FrameType | None) -> None:
        procs.cancel_all()
        raise OutOfTime()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        procs.reset_cancelled()


def run_issue(
    plan: Plan,
    folder: Path,
    out: Path,
    cases: Path,
    issue: int | None = None,
    say: Callable[[str], None] = print,
) -> list[Result]:
    """The run job: the plan's jobs (``issue``'s), each confined (confine.py) with this
    process as its supervisor, answers into ``out``. Where this machine cannot confine,
    one line and no job runs (UserError), unless the repository allows it: they then
    run here, unconfined (``run_plan``)."""
    jobs = _jobs_of(plan, issue)
    why = confine.unavailable() if jobs else None
    if why is None:
        keep_only_allowed()
        return [_run_confined(job, folder, out, cases, say) for job in jobs]
    if any(job.confinement == "required" for job in jobs):
        line = (
            f"{why}; a repro runs only confined here "
            "(issue: confinement: optional, in matrix.yaml or .github/repromatrix.yml, "
            "runs it unconfined)"
        )
        for job in jobs:
            write_result(
                out, Result(issue=job.issue, kind=job.kind, status="failed", headline=line)
            )
        raise UserError(line)
    say(f"warning: {why}: the repro runs unconfined (issue: confinement: optional)")
    return run_plan(plan, folder, out, cases, say, issue)


def _jobs_of(plan: Plan, issue: int | None) -> list[Job]:
    jobs = [job for job in plan.jobs if issue is None or job.issue == issue]
    if issue is not None and not jobs:
        raise UserError(f"the plan has no job for issue {issue}")
    return jobs


# Past the job's own limit (its timer answers with what was done), before the sandbox
# is ended from outside.
SANDBOX_GRACE = 300


def _run_confined(
    job: Job, folder: Path, out: Path, cases: Path, say: Callable[[str], None]
) -> Result:
    """One job in its sandbox: ``repromatrix issue run --sandboxed`` for this issue, its
    answer folder the one place it writes; that folder made plain data after."""
    answers = answer_folder(out, job.issue).resolve()
    owner = confine.owner_of(out)
    confine.make_writable(answers)
    env = repro_environment(os.environ)
    inner = [sys.executable, "-u", "-m", "repromatrix", "issue", "run", "--sandboxed"]
    inner += ["--plan", str(folder.resolve()), "--issue", str(job.issue)]
    inner += ["--out", str(out.resolve()), "--cases", str(cases.resolve())]
    read = (*confine.harness_places(), folder.resolve(), cases.resolve(), *confine.paths_in(env))
    local = confine.paths_in(job.repositories)  # a package's local repository (file://)
    read += tuple(local)
    seconds = job.seconds() + SANDBOX_GRACE
    with confine.private_tmp() as tmp:
        confine.trust_repositories(tmp, local)
        view = confine.View(tmp, read=tuple(read), write=(answers,))
        argv = confine.command(
            inner, view, env, confine.Limits.for_job(seconds), bwrap=confine.bwrap()
        )
        code = confine.supervise(argv, timeout=seconds, say=say)
    removed = confine.hand_back(answers, owner)  # before anything of it is read
    if removed:
        listed = ", ".join(removed[:10])
        say(f"#{job.issue}: not uploaded (no plain file, or over the size limit): {listed}")
    result = _sandbox_answer(job, answers, code)
    if (answers / ANSWER_FILE).is_dir():  # the job's to make; the answer's place
        shutil.rmtree(answers / ANSWER_FILE)
    write_result(out, result)
    os.lchown(answers / ANSWER_FILE, *owner)
    return result


def _sandbox_answer(job: Job, answers: Path, code: int | None) -> Result:
    """What the sandbox answered; failed when it was ended or its harness died (then
    whatever its folder holds is not the harness's answer)."""
    failed = {"issue": job.issue, "kind": job.kind, "status": "failed"}
    if code is None:
        minutes = round((job.seconds() + SANDBOX_GRACE) / 60)
        return Result(**failed, headline=f"the run was ended after {minutes} minutes")
    if code not in (0, 1):
        name = procs.signal_name(128 - code) if code > 128 else None
        how = f"killed by {name}" if name else f"exit status {code}"
        return Result(**failed, headline=f"the run ended without an answer ({how})")
    found = read_answer(answers, job.issue)
    return Result(**failed, headline=found) if isinstance(found, str) else found


def run_plan(
    plan: Plan,
    folder: Path,
    out: Path,
    cases: Path,
    say: Callable[[str], None] = print,
    issue: int | None = None,
) -> list[Result]:
    """Run the plan's jobs (read from ``folder``; only ``issue``'s when given), answers
    into ``out``, here: in the sandbox (``--sandboxed``), or unconfined where the
    repository allows it. This process is a child subreaper that kills every process a
    job left behind when it ends."""
    jobs = _jobs_of(plan, issue)
    removed = keep_only_allowed()
    if removed:
        say(f"{len(removed)} variables of the environment are not on the repro's allowlist")
    with procs.child_subreaper() as adopts:
        if jobs and not adopts:
            say("warning: not a child subreaper (Linux only): a repro's daemon may outlive it")
        return [_run_one(job, folder, out, cases, say) for job in jobs]


def _run_one(job: Job, folder: Path, out: Path, cases: Path, say: Callable[[str], None]) -> Result:
    """One job; every process it started and left behind is killed when it ends."""
    say(f"#{job.issue}: {job.line}")
    before = set(procs.descendants())  # a library caller's own children stay
    try:
        result = run_job(job, folder, answer_folder(out, job.issue), cases)
    except Exception as err:  # a fault of repromatrix, not of the command: said on the issue
        line = f"{type(err).__name__}: {redact_text(str(err))}"[:500]
        result = Result(issue=job.issue, kind=job.kind, status="failed", headline=line)
    finally:
        killed = procs.kill_descendants(keep=before)
        if killed:
            say(f"#{job.issue}: killed {killed} process(es) the repro left behind")
    write_result(out, result)
    say(f"#{job.issue}: {result.status}: {result.headline}")
    return result


def run_job(job: Job, folder: Path, out: Path, cases: Path) -> Result:
    started = time.monotonic()
    base = {"issue": job.issue, "kind": job.kind}
    try:
        with deadline(job.seconds()):
            # The hunt of the job's kind on the one road (offered/: hunt_table's rows);
            # what the repro printed goes into its answer, not into this job's log.
            quiet = Voice(note=lambda _line: None)
            result = offered.answer(job, offered.Place(folder, cases, out), quiet)
    except UserError as err:
        result = Result(**base, status="refused", headline=str(err))
    except OutOfTime:
        said = _partial(out)
        minutes = round(job.timeout / 60)
        headline = f"stopped after {minutes} minutes (the repository's limit)"
        result = Result(**base, status="timed-out", headline=headline, markdown=said)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _partial(out: Path) -> str:
    """What an interrupted sweep or bisect wrote so far."""
    for name in ("sweep.md", "bisect.md"):
        for path in out.rglob(name):
            return bounded(path.read_text(encoding="utf-8"))
    return ""
