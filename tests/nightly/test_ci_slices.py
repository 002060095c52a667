"""Jobs cut into GitHub job matrices (slices) of at most 256 jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repromatrix.errors import UserError
from repromatrix.nightly.slices import GITHUB_MATRIX_LIMIT, slices

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("total", [0, 1, 255, 256, 257, 511, 512, 513, 700, 1024])
def test_every_id_once_in_order_no_slice_over_the_limit(total: int) -> None:
    ids = [f"c{i}" for i in range(total)]
    parts = slices(ids, count=4)
    assert len(parts) == 4
    assert [i for part in parts for i in part] == ids  # every id, once, in matrix order
    assert all(len(part) <= GITHUB_MATRIX_LIMIT for part in parts)
    used = [p for p in parts if p]
    assert parts[: len(used)] == used  # empty slices come last
    if used:
        assert max(map(len, used)) - min(map(len, used)) <= 1  # even
        assert len(used) == -(-total // GITHUB_MATRIX_LIMIT)  # as few as needed


def test_a_tier_too_large_for_the_slice_jobs_is_refused() -> None:
    with pytest.raises(UserError, match="needs 1025 jobs, more than 4 matrices of at most 256"):
        slices([f"c{i}" for i in range(1025)], count=4)


def test_small_sizes() -> None:
    assert slices(list("abcde"), count=3, size=2) == [["a", "b"], ["c", "d"], ["e"]]
    assert slices(list("abcd"), count=3, size=3) == [["a", "b"], ["c", "d"], []]


def test_the_command_prints_step_outputs(tmp_path: Path) -> None:
    lines = ["schema: 1", "packages: [peft]", "tiers:", "  nightly:"]
    lines += [f'    - {{id: n{i}, peft: "0.17.{i}"}}' for i in range(300)]
    lines += ["  smoke:", '    - {id: s, peft: "0.17.1"}']
    (tmp_path / "matrix.yaml").write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "ci-matrix", "--tier", "nightly"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    outputs = dict(line.split("=", 1) for line in done.stdout.splitlines())
    slice_names = [f"slice_{i}" for i in range(4)]
    assert sorted(outputs) == sorted(
        ["all", "configured", "jobs", "total", *slice_names]
        + [f"max_parallel_{i}" for i in range(4)]
    )
    assert outputs["total"] == "300"
    first, second = json.loads(outputs["slice_0"]), json.loads(outputs["slice_1"])
    assert (len(first), len(second)) == (150, 150)  # one combination a job while they fit
    assert first[0] == {"combinations": ["n0"], "runs-on": ["self-hosted", "linux", "gpu"]}
    assert second[-1]["combinations"] == ["n299"]
    assert json.loads(outputs["slice_2"]) == [] == json.loads(outputs["slice_3"])
    assert outputs["jobs"] == "300"
    assert (outputs["max_parallel_0"], outputs["max_parallel_2"]) == ("150", "1")
