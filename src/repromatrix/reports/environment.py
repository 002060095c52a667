"""The environment block: what ``python -m torch.utils.collect_env`` said inside a cell
(execution/collect_env.py runs it once per run and stores it), put into results.json as
``run.host.collect_env``, and the short lines a report shows (OS, Python, torch build,
CUDA, GPU, driver) read out of its text. Nothing here runs anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repromatrix.execution.collect_env import PROBE_FILE, parse
from repromatrix.results import Results

__all__ = ["attach", "headline", "is_cpu_build", "parse"]

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
