"""The seed bug whole in the main job: the smoke tier's unsloth_zoo pair, run as
README's first command runs it (the real matrix.yaml, the real known-issue registry).
unsloth 2025.11.2 + unsloth_zoo 2025.11.3 is red with the seed's error and known-broken
with its link; unsloth 2025.11.3 + unsloth_zoo 2025.11.4 is green."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e

RED = "seed-unsloth2025.11.2-zoo2025.11.3"
GREEN = "unsloth2025.11.3-zoo2025.11.4"
CASE = (
    "test_unsloth_zoo_checkpointing.py::"
    "test_whisper_lora_unsloth_checkpointing_matches_unchecked_run"
)
CONTROL = (
    "test_unsloth_zoo_checkpointing.py::"
    "test_control_error_returns_without_fix_gc_layer_caller_modules"
)


def test_the_seed_is_red_on_zoo_2025_11_3_and_green_on_2025_11_4(
    repo_root, tmp_path, shared_env_store
):
    results = tmp_path / "latest"
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "run", "--matrix", str(repo_root / "matrix.yaml"),
         "--tier", "smoke", "--combination", RED, "--combination", GREEN,
         "--results", str(results), "--env-dir", str(shared_env_store)],
        capture_output=True, text=True, timeout=1500, cwd=repo_root,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    judged = {
        c["id"]: c for c in json.loads((results / "results.json").read_text())["combinations"]
    }

    red = {c["id"]: c for c in judged[RED]["cases"]}
    assert judged[RED]["verdict"] == "KNOWN-BROKEN"
    assert red[CASE]["outcome"] == "failed"
    assert red[CASE]["status"] == "known-broken"
    assert "backward through the graph a second time" in red[CASE]["message"]
    assert red[CASE]["known_issue"]["link"] == "https://github.com/unslothai/unsloth/issues/3592"

    green = {c["id"]: c for c in judged[GREEN]["cases"]}
    assert judged[GREEN]["verdict"] == "PASS"
    assert green[CASE]["status"] == "passed"
    # The control: the same stack with the fix emptied fails again, so the case measures it.
    assert green[CONTROL]["status"] == "passed"
