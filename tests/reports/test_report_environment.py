"""The environment block (torch.utils.collect_env from inside a cell) and the run's
report hook."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from support.reportdata import CASE_A, case, combination, versions

from repromatrix import pipeline as workflow
from repromatrix.environment.request import Environment
from repromatrix.environment.uv import Interpreter
from repromatrix.errors import UserError
from repromatrix.execution.collect_env import HostProbe
from repromatrix.reports.environment import attach, headline, parse
from repromatrix.results import Results, write_json_atomic

MULTI_GPU = """PyTorch version: 2.9.0+cu128
Is debug build: False
CUDA used to build PyTorch: 12.8
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.5 LTS (x86_64)
Python version: 3.11.13 (main, Jun  4 2025) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 12.8.93
GPU models and configuration:
GPU 0: NVIDIA H100 80GB HBM3
GPU 1: NVIDIA H100 80GB HBM3

Nvidia driver version: 570.133.20
cuDNN version: Could not collect

CPU:
Architecture: x86_64
"""


def test_parse_reads_collect_envs_own_lines_including_multi_line_gpus():
    fields = parse(MULTI_GPU)
    assert fields["PyTorch version"] == "2.9.0+cu128"
    assert fields["GPU models and configuration"] == (
        "GPU 0: NVIDIA H100 80GB HBM3; GPU 1: NVIDIA H100 80GB HBM3"
    )
    assert fields["Nvidia driver version"] == "570.133.20"
    assert "Architecture" not in fields  # the CPU section is left as text
    shown = dict(headline({"fields": fields}))
    assert shown["GPU"].startswith("GPU 0: NVIDIA H100")
    assert shown["CUDA (build)"] == "12.8"
    assert "cuDNN" not in shown  # "Could not collect" says nothing


# Recorded: torch 2.13.0+cpu on a host whose CUDA toolkit (nvcc 13.0) is installed.
CPU_BUILD = """Collecting environment information...
PyTorch version: 2.13.0+cpu
Is debug build: False
CUDA used to build PyTorch: Could not collect
ROCM used to build PyTorch: N/A

OS: Debian GNU/Linux 12 (bookworm) (x86_64)
GCC version: (Debian 12.2.0-14+deb12u1) 12.2.0
Python version: 3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0] (64-bit runtime)
Is CUDA available: False
CUDA runtime version: 13.0.88
CUDA_MODULE_LOADING set to: N/A
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
cuDNN version: Could not collect

CPU:
Architecture:                            x86_64
"""


def test_a_cpu_build_of_torch_claims_no_cuda_runtime():
    shown = dict(headline({"fields": parse(CPU_BUILD)}))
    assert shown["torch"] == "2.13.0+cpu (CPU build)"
    assert not {"CUDA runtime", "CUDA (build)", "CUDA available", "cuDNN"} & set(shown)
    assert "13.0.88" not in " ".join(shown.values())
    # A CUDA build keeps its CUDA lines.
    cuda = dict(headline({"fields": parse(MULTI_GPU)}))
    assert cuda["torch"] == "2.9.0+cu128" and cuda["CUDA runtime"] == "12.8.93"


def _fake_cell(tmp_path: Path, output: str, status: int = 0) -> Environment:
    """A cell whose 'python' is a script printing ``output`` and counting its calls."""
    root = tmp_path / "cell"
    (root / "venv" / "bin").mkdir(parents=True)
    python = root / "venv" / "bin" / "python"
    (tmp_path / "output.txt").write_text(output)
    python.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{tmp_path / "calls.txt"}"\n'
        f'cat "{tmp_path / "output.txt"}"\n'
        f"exit {status}\n"
    )
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return Environment(
        root=root,
        identity="0" * 16,
        python=python,
        resolved={"torch": "2.13.0+cpu"},
        system={},
        reused=True,
        seconds=0.0,
        interpreter=Interpreter(sys.executable, "3.11.7", "CPython"),
    )


def test_probe_runs_collect_env_once_redacted_and_without_machine_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_ProbeCanary0123456789abcdef")
    cell = _fake_cell(
        tmp_path,
        MULTI_GPU + f"\nsite: {tmp_path}/cell/venv/lib\ntoken hf_ProbeCanary0123456789abcdef\n",
    )
    probe = HostProbe(tmp_path / "results", save=write_json_atomic)
    probe.collect(cell, "first")
    probe.collect(cell, "second")  # once per run
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls == ["-m torch.utils.collect_env"]
    stored = json.loads((tmp_path / "results" / "host" / "collect_env.json").read_text())
    assert stored["combination"] == "first"
    assert stored["fields"]["PyTorch version"] == "2.9.0+cu128"
    assert "hf_ProbeCanary" not in stored["text"]
    assert str(tmp_path) not in stored["text"] and "<env>/venv/lib" in stored["text"]

    results = Results()
    results.run.host = {"platform": "Linux"}
    attach(results, tmp_path / "results")
    assert results.run.host["collect_env"]["fields"]["OS"] == "Ubuntu 22.04.5 LTS (x86_64)"
    assert results.run.host["platform"] == "Linux"  # the harness's own facts stay


def test_probe_failure_is_recorded_and_the_next_cell_tries_again(tmp_path):
    broken = _fake_cell(tmp_path, "No module named torch", status=1)
    probe = HostProbe(tmp_path / "results", save=write_json_atomic)
    probe.collect(broken, "no-torch")
    stored = json.loads((tmp_path / "results" / "host" / "collect_env.json").read_text())
    assert stored["error"].startswith("exit status 1")
    (tmp_path / "output.txt").write_text(MULTI_GPU)
    (broken.python).write_text(broken.python.read_text().replace("exit 1", "exit 0"))
    probe.collect(broken, "with-torch")
    stored = json.loads((tmp_path / "results" / "host" / "collect_env.json").read_text())
    assert stored["combination"] == "with-torch" and "text" in stored


# --------------------------------------------------------------------------- the run's hook


GPU_ONLY = """\
schema: 1
packages: [torch, unsloth]
defaults: {device: cuda, torch: system}
tiers:
  nightly:
    - id: gpu-unsloth
      unsloth: latest
"""


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr("repromatrix.execution.host.gpus", lambda: ())
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_run_ends_with_verdicts_and_every_report(tmp_path, write_matrix, no_gpu):
    matrix = write_matrix(GPU_ONLY)
    (matrix.parent / "cases").mkdir()
    said: list[str] = []
    options = workflow.RunOptions(matrix=matrix, tier="nightly", results=tmp_path / "latest")
    judged, code = workflow.run(options, say=said.append)
    assert code == 0  # a cell that cannot run here is skipped, not a failure
    assert judged.find("gpu-unsloth").verdict == "SKIPPED"
    written = {p.name for p in (tmp_path / "latest").iterdir()}
    assert {"results.json", "junit.xml", "summary.md", "index.html"} <= written
    stored = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert stored["combinations"][0]["verdict"] == "SKIPPED"
    assert stored["summary"]["verdicts"] == {"SKIPPED": 1}
    assert any(line.startswith("verdicts: 1 SKIPPED (exit status 0)") for line in said)


def test_run_reads_registry_and_baseline_before_running(tmp_path, write_matrix, no_gpu):
    matrix = write_matrix(GPU_ONLY)
    (matrix.parent / "cases").mkdir()
    (matrix.parent / "cases" / "known_issues.yaml").write_text("- {case: x, link: nope}\n")
    options = workflow.RunOptions(matrix=matrix, tier="nightly", results=tmp_path / "latest")
    with pytest.raises(UserError, match=r"known_issues.yaml: \[0\]\.link: 'nope'"):
        workflow.run(options)
    assert not (tmp_path / "latest").exists()  # failed before claiming anything

    (matrix.parent / "cases" / "known_issues.yaml").unlink()
    options.baseline = tmp_path / "missing"
    with pytest.raises(UserError, match="no such results file"):
        workflow.run(options)
    assert not (tmp_path / "latest").exists()


def test_exit_status_counts_the_combinations_run_now(tmp_path, write_matrix, no_gpu):
    """nox -s <id> updates one combination; a failing one stored earlier does not
    decide its exit status (the summary still shows everything)."""
    matrix = write_matrix(GPU_ONLY)
    (matrix.parent / "cases").mkdir()
    stale = combination("stale", versions("4.53.0"), [case(CASE_A, "failed")])
    write_json_atomic(tmp_path / "latest" / "combinations" / "stale.json", stale.model_dump())
    options = workflow.RunOptions(
        matrix=matrix, tier="nightly", results=tmp_path / "latest", mode="update"
    )
    judged, code = workflow.run(options, say=lambda _: None)
    assert {c.id: c.verdict for c in judged.combinations} == {
        "gpu-unsloth": "SKIPPED",
        "stale": "FAILING",
    }
    assert judged.summary.exit_code == 1  # the folder as a whole
    assert code == 0  # what this run ran


def test_run_compares_with_a_baseline_inside_the_folder_it_replaces(tmp_path, write_matrix, no_gpu):
    """--baseline reports/latest with a fresh run into reports/latest: the old results
    are read before the run moves them to latest.previous."""
    matrix = write_matrix(GPU_ONLY)
    (matrix.parent / "cases").mkdir()
    options = workflow.RunOptions(matrix=matrix, tier="nightly", results=tmp_path / "latest")
    first, _ = workflow.run(options, say=lambda _: None)
    options.baseline = tmp_path / "latest"
    second, _ = workflow.run(options, say=lambda _: None)
    assert second.summary.baseline["run"] == first.run.id


# --------------------------------------------------------------------------- a real cell


TORCH_ONLY = """\
schema: 1
packages: [torch]
defaults: {device: cpu, torch: "2.13.0"}
tiers:
  smoke:
    - id: torch-only
"""
CASES = """\
import torch


def test_tensor_sums():
    assert torch.ones(3).sum().item() == 3


def test_planted_failure():
    raise RuntimeError("Trying to backward through the graph a second time")
"""


@pytest.mark.e2e
def test_real_run_records_collect_env_and_renders_every_report(
    tmp_path, write_matrix, shared_env_store, monkeypatch
):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    matrix = write_matrix(TORCH_ONLY)
    (matrix.parent / "cases").mkdir()
    (matrix.parent / "cases" / "test_one.py").write_text(CASES)
    options = workflow.RunOptions(
        matrix=matrix, results=tmp_path / "latest", env_dir=shared_env_store, reruns=1
    )
    judged, code = workflow.run(options, say=lambda _: None)
    assert code == 1
    assert judged.find("torch-only").verdict == "FAILING"
    collected = judged.run.host["collect_env"]
    assert collected["combination"] == "torch-only"
    assert collected["fields"]["PyTorch version"].startswith("2.13.0")
    assert "Python version" in collected["fields"]
    assert str(shared_env_store) not in collected["text"]

    summary = (tmp_path / "latest" / "summary.md").read_text()
    assert "**torch** 2.13.0" in summary
    # No noxfile beside this matrix: the repro line is the command itself.
    assert (
        "Repro: `repromatrix run --update --combination torch-only -- "
        "test_one.py::test_planted_failure`" in summary
    )
    assert "Attempts (fresh interpreters): failed, failed" in summary
    stored = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert stored["run"]["host"]["collect_env"]["fields"] == collected["fields"]
    assert stored["combinations"][0]["cases"][1]["status"] == "failed"
