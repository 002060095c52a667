"""Recipes the cases share: checkpointing modes, fresh-interpreter scripts, the unsloth
recipe runner. A plain module (cases import it; conftest.py keeps only pytest's hooks and
fixtures), so a case file reads like any Python file.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CASES = Path(__file__).parent

# A case must never reach a model hub: everything is built here or saved to a temp dir.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# Why unsloth cannot start in this cell, once a case has found out (one import is enough).
UNSLOTH_UNUSABLE: dict[str, str] = {}


# --------------------------------------------------------------------------- fresh interpreters

# What unsloth says when it has neither an accelerator nor a CPU backend (releases before
# 2026.10.9 on a CPU-only host): the case cannot run here, which is a skip, not a failure.
NO_ACCELERATOR = "cannot find any torch accelerator"


@dataclass
class ScriptResult:
    """What a scripts/*.py run reported (its last stdout line is one JSON object)."""

    returncode: int
    report: dict = field(default_factory=dict)
    output: str = ""

    @property
    def stage(self) -> str:
        return self.report.get("stage", "crashed")


def run_script(name: str, *args: str, timeout: float = 240.0) -> ScriptResult:
    """Run cases/scripts/<name> with this cell's interpreter, offline, in its own process
    (unsloth patches transformers when imported: it must not leak into other cases)."""
    env = {**os.environ, **OFFLINE, "PYTHONPATH": str(CASES), "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, str(CASES / "scripts" / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=CASES,
    )
    output = done.stdout + done.stderr
    report: dict = {}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{") and line.endswith("}"):
            try:
                report = json.loads(line)
                break
            except json.JSONDecodeError:
                continue
    return ScriptResult(done.returncode, report, output)


def skip_if_unsloth_cannot_start(result: ScriptResult) -> None:
    """An import-time "no accelerator" from unsloth becomes this case's (and every later
    unsloth case's) skip reason, in unsloth's words."""
    if result.stage != "import":
        return
    message = result.report.get("error", "")
    if NO_ACCELERATOR in message:
        version = installed("unsloth")
        reason = f"unsloth {version} cannot start on this host: {message.strip()}"
        UNSLOTH_UNUSABLE["reason"] = reason
        pytest.skip(reason)


def unsloth_recipe(script: str, checkpoint: Path, workdir: Path) -> dict:
    """Run an unsloth recipe of cases/scripts to its end and return its report; a host
    or release that cannot run it makes the case skip with the reason, a recipe that
    stops early fails it with the error and traceback."""
    result = run_script(script, str(checkpoint), str(workdir))
    skip_if_unsloth_cannot_start(result)
    if result.stage == "unsupported":
        pytest.skip(result.report["reason"])
    assert result.stage == "done", (
        f"failed at {result.stage}: {result.report.get('error_type')}: "
        f"{result.report.get('error')}\n{result.report.get('traceback') or result.output[-3000:]}"
    )
    return result.report


# How a user turns gradient checkpointing on: the library's default, or an explicit
# use_reentrant (gradient_checkpointing_kwargs). OFF: the run without checkpointing.
OFF = "off"
CHECKPOINTING = [
    pytest.param(None, id="default"),
    pytest.param({"use_reentrant": True}, id="reentrant"),
    pytest.param({"use_reentrant": False}, id="non-reentrant"),
]
TRAINER_CHECKPOINTING = [CHECKPOINTING[0], CHECKPOINTING[2]]
