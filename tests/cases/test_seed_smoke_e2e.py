"""The seed bug whole in the main job: the smoke tier's unsloth_zoo pair, run as
README's first command runs it (the real matrix.yaml, the real known-issue registry).
unsloth 2025.11.2 + unsloth_zoo 2025.11.3 is red with the seed's error and known-broken
with its link; unsloth 2025.11.3 + unsloth_zoo 2025.11.4 is green.

Then the nightly's hunt on the same two runs, as if the seed combination had moved
from the green pair to the red one overnight with the bug not registered: triage
hands culprit.yml the two locks and the combination's cell (torchvision, xformers and
torchao null: without them the rebuilt locks pull a torchvision built for another
torch and every mix fails alike), and the culprit command culprit.yml runs with
exactly those inputs names unsloth_zoo 2025.11.4 -> 2025.11.3."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.utils import canonicalize_name

from repromatrix.matrix import load_matrix
from repromatrix.matrix.cell import cell_settings

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

    _the_nightly_hunt_names_unsloth_zoo(repo_root, tmp_path, results, shared_env_store)


def _night(results: Path, combination: str, folder: Path) -> Path:
    """``combination``'s result alone, as the nightly's ``seed`` combination."""
    data = json.loads((results / "results.json").read_text())
    [combo] = [c for c in data["combinations"] if c["id"] == combination]
    combo["id"] = "seed"
    combo["cases"] = [c for c in combo["cases"] if c["id"] == CASE]
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({**data, "combinations": [combo]}))
    return folder


def _the_nightly_hunt_names_unsloth_zoo(
    repo_root: Path, tmp_path: Path, results: Path, env_store: Path
) -> None:
    project = tmp_path / "project"
    (project / "cases").mkdir(parents=True)
    # The seed combination as the nightly's matrix declares it (the red pair tonight),
    # with the real cases and no registry: the failure is a regression to hunt.
    real = load_matrix(repo_root / "matrix.yaml")
    settings = cell_settings(real.find(RED))
    entry = {"id": "seed", **{k: v for k, v in settings.items() if k not in ("id", "pins")}}
    entry.update(settings["pins"])
    (project / "matrix.yaml").write_text(
        yaml.safe_dump(
            {"schema": 1, "packages": list(real.packages), "tiers": {"nightly-cpu": [entry]}}
        )
    )
    shutil.copytree(
        repo_root / "cases",
        project / "cases",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "known_issues.yaml"),
    )
    (project / "cases" / "known_issues.yaml").write_text("[]\n")
    good = _night(results, GREEN, tmp_path / "last-night")
    bad = _night(results, RED, tmp_path / "tonight")

    gh_log = tmp_path / "gh.jsonl"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(gh_log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    (bin_dir / "gh").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(repo_root / "src"),
        "REPROMATRIX_ENV_DIR": str(env_store),
    }
    triaged = subprocess.run(
        [sys.executable, "-m", "repromatrix", "triage", "--results", str(bad),
         "--baseline", str(good), "--dispatch"],
        capture_output=True, text=True, timeout=300, cwd=project, env=env,
    )  # fmt: skip
    assert triaged.returncode == 0, triaged.stdout + triaged.stderr
    [dispatch] = [json.loads(line) for line in gh_log.read_text().splitlines()]
    assert dispatch[:3] == ["workflow", "run", "culprit.yml"]
    inputs = dict(dispatch[i + 1].split("=", 1) for i, a in enumerate(dispatch) if a == "-f")
    cell = json.loads(inputs["cell"])
    assert {p: cell["pins"][p] for p in ("torchvision", "xformers", "torchao")} == {
        "torchvision": None,
        "xformers": None,
        "torchao": None,
    }

    # culprit.yml's "Hunt the culprit" step, with exactly those inputs.
    locks = tmp_path / "locks"
    locks.mkdir()
    (locks / "good.txt").write_text("\n".join(inputs["good"].split()) + "\n")
    (locks / "bad.txt").write_text("\n".join(inputs["bad"].split()) + "\n")
    args = ["--good-lock", str(locks / "good.txt"), "--bad-lock", str(locks / "bad.txt"),
            "--name", inputs["name"], "--case", inputs["case"],
            "--cell", inputs["cell"]]  # fmt: skip
    for pin in shlex.split(inputs["pins"]):
        args += ["--pin", pin]
    hunted = subprocess.run(
        [sys.executable, "-m", "repromatrix", "culprit", *args],
        capture_output=True, text=True, timeout=1500, cwd=project, env=env,
    )  # fmt: skip
    assert hunted.returncode == 0, hunted.stdout[-3000:] + hunted.stderr[-3000:]
    record = json.loads((project / "reports" / "culprit" / "seed" / "culprit.json").read_text())
    culprits = {canonicalize_name(c["package"]): (c["good"], c["bad"]) for c in record["culprits"]}
    assert culprits.pop("unsloth-zoo", None) == ("2025.11.4", "2025.11.3"), record["verdict"]
    assert set(culprits) <= {"unsloth"}, record["verdict"]  # with or without unsloth beside it
    assert "torchvision::nms" not in json.dumps(record)
