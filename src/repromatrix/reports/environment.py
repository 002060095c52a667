"""The environment block: what ``python -m torch.utils.collect_env`` says, from inside a cell.

torch lives only in the cells, so the harness cannot import it: during a run the
first cell that builds runs torch's own collector once, and its output (redacted,
this machine's folders shortened) goes into results.json as ``run.host.collect_env``.
Nothing here re-gathers what collect_env gathers; the short lines a report shows
(OS, Python, torch build, CUDA, GPU, driver) are read out of its text.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from repromatrix import procs
from repromatrix.environment import Environment
from repromatrix.redact import machine_places, redact_text, shorten_paths
from repromatrix.results import Results, write_json_atomic

COLLECT_TIMEOUT = 180.0
PROBE_FILE = Path("host") / "collect_env.json"

# collect_env's own labels, in the order a report shows them.
HEADLINE_KEYS = (
    ("OS", "OS"),
    ("Python", "Python version"),
    ("torch", "PyTorch version"),
    ("CUDA (build)", "CUDA used to build PyTorch"),
    ("CUDA available", "Is CUDA available"),
    ("CUDA runtime", "CUDA runtime version"),
    ("GPU", "GPU models and configuration"),
    ("driver", "Nvidia driver version"),
    ("cuDNN", "cuDNN version"),
)
NOTHING_FOUND = ("Could not collect", "N/A", "None")
# Lines about the machine's CUDA toolkit, not about torch: collect_env prints the
# system's nvcc version as "CUDA runtime version" even beside a CPU-only torch.
CUDA_ONLY_LABELS = ("CUDA (build)", "CUDA available", "CUDA runtime", "cuDNN")
_LINE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 _()/.-]*?):\s?(?P<value>.*)$")


def collect(env: Environment, combination_id: str) -> dict[str, Any]:
    """Run torch.utils.collect_env with the cell's interpreter."""
    done = procs.run(
        [str(env.python), "-m", "torch.utils.collect_env"],
        env=env.subprocess_env(),
        timeout=COLLECT_TIMEOUT,
        cwd=env.root,
    )
    places = machine_places(env=env.root)
    clean = lambda text: shorten_paths(redact_text(text), places)  # noqa: E731
    if done.timed_out or done.returncode != 0 or not done.stdout.strip():
        why = "timed out" if done.timed_out else f"exit status {done.returncode}"
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        return {"combination": combination_id, "error": clean(f"{why}: {tail}")[:1000]}
    text = clean(done.stdout.strip())
    return {"combination": combination_id, "text": text, "fields": parse(text)}


def parse(text: str) -> dict[str, str]:
    """'Key: value' lines of collect_env's header (up to its CPU section); a key whose
    value starts on the next lines (GPU models on a multi-GPU host) gets those lines."""
    fields: dict[str, str] = {}
    pending: str | None = None
    for line in text.splitlines():
        if line.strip() in ("CPU:", "Versions of relevant libraries:"):
            break
        if not line.strip():
            pending = None
            continue
        if pending is not None and line.startswith("GPU "):
            fields[pending] = "; ".join(filter(None, [fields[pending], line.strip()]))
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        key, value = match.group("key").strip(), match.group("value").strip()
        fields[key] = value
        pending = key if not value else None
    return fields


def headline(collected: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, value) pairs for a report's one-line environment summary. A torch
    built without CUDA is said to be a CPU build, and no CUDA line is shown for it."""
    fields = (collected or {}).get("fields") or {}
    cpu_build = bool(fields.get("PyTorch version")) and is_cpu_build(fields)
    pairs = []
    for label, key in HEADLINE_KEYS:
        value = fields.get(key)
        if not value or value in NOTHING_FOUND:
            continue
        if cpu_build and label in CUDA_ONLY_LABELS:
            continue
        if cpu_build and label == "torch":
            value += " (CPU build)"
        pairs.append((label, value))
    return pairs


def is_cpu_build(fields: dict[str, str]) -> bool:
    """torch.version.cuda and torch.version.hip are None: collect_env says so as
    'Could not collect' / 'N/A' / 'None' for both build lines."""
    built_with = [
        fields.get("CUDA used to build PyTorch"),
        fields.get("ROCM used to build PyTorch"),
    ]
    return all(value in (None, "", *NOTHING_FOUND) for value in built_with)


class HostProbe:
    """Collects the environment once per run, with the first cell that built.

    Safe to call from several threads (a parallel scheduler): one collects, the
    others go on. A failure (no torch in that cell) leaves the next cell to try.
    """

    def __init__(self, results_dir: Path) -> None:
        self.path = Path(results_dir) / PROBE_FILE
        self._lock = threading.Lock()
        self._done = False

    def collect(self, env: Environment, combination_id: str) -> None:
        if self._done or not self._lock.acquire(blocking=False):
            return
        try:
            if self._done:
                return
            found = collect(env, combination_id)
            write_json_atomic(self.path, found)
            self._done = "text" in found
        finally:
            self._lock.release()


def attach(results: Results, results_dir: Path) -> None:
    """Put what the probe stored into ``run.host.collect_env``."""
    path = Path(results_dir) / PROBE_FILE
    if not path.exists():
        return
    try:
        found = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return  # a report without an environment block beats no report
    results.run.host = {**results.run.host, "collect_env": found}
