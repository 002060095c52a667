"""A real matrix run: two torch 2.13.0 CPU cells with two transformers releases, a
real case in each, through the command line; then reuse and a pin change."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e

MATRIX = """\
packages: [torch, transformers]
defaults: {{torch: "2.13.0"}}
tiers:
  smoke:
    - {{id: tf-a, transformers: "{a}"}}
    - {{id: tf-b, transformers: "{b}"}}
"""


def run_cli(repo_root, matrix, results, env_dir, *extra):
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", "run", "--matrix", str(matrix),
         "--cases", str(repo_root / "cases"), "--results", str(results),
         "--env-dir", str(env_dir), *extra, "test_double_backward.py"],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip


def combination(results, combo_id):
    return json.loads((results / "combinations" / f"{combo_id}.json").read_text())


def test_two_transformers_cells_run_reuse_and_rebuild_only_what_changed(repo_root, tmp_path):
    matrix = tmp_path / "matrix.yaml"
    results = tmp_path / "results"
    envs = tmp_path / "envs"  # its own store: "built" and "reused" must mean this test
    matrix.write_text(MATRIX.format(a="4.52.4", b="4.56.2"))

    first = run_cli(repo_root, matrix, results, envs)
    assert first.returncode == 0, first.stdout + first.stderr
    merged = json.loads((results / "results.json").read_text())
    assert merged["schema"] == 1
    assert [c["id"] for c in merged["combinations"]] == ["tf-a", "tf-b"]
    for combo, version in (("tf-a", "4.52.4"), ("tf-b", "4.56.2")):
        result = combination(results, combo)
        assert result["status"] == "passed"
        assert result["requested"] == {"torch": "2.13.0", "transformers": version}
        assert result["resolved"]["transformers"] == version
        assert result["resolved"]["torch"].startswith("2.13.0")  # the CPU wheel, +cpu
        cases = {c["id"]: c["status"] for c in result["cases"]}
        assert cases["test_double_backward.py::test_second_backward_on_one_forward_raises"] == (
            "passed"
        )

    second = run_cli(repo_root, matrix, results, envs)
    assert second.returncode == 0, second.stdout + second.stderr
    assert combination(results, "tf-a")["environment"]["reused"] is True
    assert combination(results, "tf-b")["environment"]["reused"] is True
    # The first run's results were moved aside, not lost.
    assert (results.with_name("results.previous") / "results.json").exists()

    matrix.write_text(MATRIX.format(a="4.52.4", b="4.56.1"))
    third = run_cli(repo_root, matrix, results, envs)
    assert third.returncode == 0, third.stdout + third.stderr
    assert combination(results, "tf-a")["environment"]["reused"] is True
    changed = combination(results, "tf-b")
    assert changed["environment"]["reused"] is False
    assert changed["resolved"]["transformers"] == "4.56.1"

    text = (results / "results.json").read_text()
    for machine_path in (str(tmp_path), str(envs), str(repo_root)):
        assert machine_path not in text
