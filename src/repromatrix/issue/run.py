"""The ``run`` job: a job of the plan (one issue's; the workflow runs one job per issue)
through the library (its hunt on the one road, offered/), its answer to
answers/<issue>/.

This is the one place code from the internet runs. The job has no token
(``permissions: {}``) and no secret, and before anything is built this process keeps
only an allowlist of its environment (``repro_environment``): the locale, paths, the
GPUs, the package index settings and repromatrix's own; a token a runner sets anyway
(act sets ACTIONS_RUNTIME_TOKEN in every step), an API key or the step's file commands
(GITHUB_ENV) are not handed to the repro. The process is a child subreaper: every
process the repro leaves behind (a daemon that forked twice and closed its
descriptors) is adopted here and killed when its job ends, before the job's next
step. A run stops after the plan's minutes: what was done so far is the answer.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.hunts.hunt import Voice
from repromatrix.issue import offered
from repromatrix.issue.answer import Result, answer_folder, bounded, write_result
from repromatrix.issue.plan import Job, Plan
from repromatrix.redact import redact_text

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
    """The allowlisted part of ``environ``."""
    return {
        name: value
        for name, value in environ.items()
        if (name in _ALLOWED or name.startswith(_ALLOWED_PREFIXES))
        and not _SECRET_NAME.search(name)
    }


def keep_only_allowed(environ: dict[str, str] | os._Environ = os.environ) -> list[str]:
    """Take from ``environ`` every variable the repro may not see; their names."""
    kept = repro_environment(environ)
    removed = sorted(name for name in environ if name not in kept)
    for name in removed:
        del environ[name]
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


def run_plan(
    plan: Plan,
    folder: Path,
    out: Path,
    cases: Path,
    say: Callable[[str], None] = print,
    issue: int | None = None,
) -> list[Result]:
    """Run the plan's jobs (read from ``folder``; only ``issue``'s when given), answers
    into ``out``; no process of a repro outlives its job."""
    jobs = [job for job in plan.jobs if issue is None or job.issue == issue]
    if issue is not None and not jobs:
        raise UserError(f"the plan has no job for issue {issue}")
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
        with deadline(job.timeout + 60):
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
