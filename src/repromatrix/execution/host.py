"""Facts about the machine a run happens on: whether it has a GPU, and what to
record about it (the rest of the environment block comes from
torch.utils.collect_env, run inside a cell: see reports.environment)."""

from __future__ import annotations

import functools
import os
import platform
import shutil
from pathlib import Path

from repromatrix import procs

NO_GPU_REASON = "requires a CUDA GPU; this host has none"


@functools.lru_cache(maxsize=1)
def gpus() -> tuple[str, ...]:
    """The host's NVIDIA GPUs as nvidia-smi lists them (empty without one).

    REPROMATRIX_DEVICE=cpu forces a CPU-only view (to test the skip path on a GPU
    host); CUDA_VISIBLE_DEVICES="" hides every GPU, as it does for CUDA itself.
    """
    if os.environ.get("REPROMATRIX_DEVICE", "").lower() == "cpu":
        return ()
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return ()
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    done = procs.run([smi, "-L"], timeout=30)
    if done.returncode != 0:
        return ()
    return tuple(line.strip() for line in done.stdout.splitlines() if line.startswith("GPU "))


def has_device(device: str) -> bool:
    return device == "cpu" or (device == "cuda" and bool(gpus()))


def describe() -> dict[str, object]:
    """What a report says about the host without any cell (no torch needed)."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "gpus": list(gpus()),
        "ci": bool(os.environ.get("CI")),
    }


def git_commit(folder: Path) -> str | None:
    """The commit the cases come from (with '+dirty' when they were edited)."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        head = procs.run([git, "rev-parse", "HEAD"], cwd=folder, timeout=10)
        if head.returncode != 0 or head.timed_out:
            return None
        dirty = procs.run([git, "status", "--porcelain", "--", "."], cwd=folder, timeout=10)
    except OSError:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
