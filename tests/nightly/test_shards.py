"""`repromatrix run --tier T --shard I/N`: N deterministic parts that together hold
each combination of the tier once, for schedulers other than GitHub's (Kubernetes
indexed Jobs count from 0, `--shard 1/N` counts from 1: both cover the tier)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repromatrix.errors import UserError
from repromatrix.matrix.shards import Shard

REPO = Path(__file__).resolve().parents[2]


@given(st.integers(0, 120), st.integers(1, 12))
def test_the_parts_hold_each_item_once_in_order_and_even(total: int, count: int) -> None:
    items = list(range(total))
    parts = [Shard(i, count).take(items) for i in range(1, count + 1)]
    assert [x for part in parts for x in part] == items
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    # Zero-based: 0..N-1 names the same parts (0 is N).
    zero = [Shard.parse(f"{i}/{count}").take(items) for i in range(count)]
    assert sorted(x for part in zero for x in part) == items
    assert Shard.parse(f"0/{count}") == Shard.parse(f"{count}/{count}")


@pytest.mark.parametrize("text", ["", "1", "a/b", "3/2", "1/0", "-1/3", "1/2/3"])
def test_a_shard_that_is_not_i_of_n_is_one_line(text: str) -> None:
    with pytest.raises(UserError, match=r"^--shard: "):
        Shard.parse(text)


def _project(folder: Path) -> Path:
    """A tier of seven GPU combinations: on this CPU host each is SKIPPED at once, so a
    run shows which combinations its shard held without building anything."""
    (folder / "cases").mkdir(parents=True)
    (folder / "cases" / "test_x.py").write_text("def test_x():\n    pass\n")
    lines = ["schema: 1", "packages: [torch, peft]", "tiers:", "  gpu:"]
    lines += [f'    - {{id: g{i}, device: cuda, peft: "0.1{i}.0"}}' for i in range(7)]
    lines += ["  other:", '    - {id: o, peft: "0.17.1"}']
    (folder / "matrix.yaml").write_text("\n".join(lines) + "\n")
    return folder


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env.update(PYTHONPATH=str(REPO / "src"), REPROMATRIX_DEVICE="cpu")
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", "run", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("first", [0, 1])
def test_every_shard_run_together_runs_each_combination_once(tmp_path: Path, first: int) -> None:
    project = _project(tmp_path / "p")
    ran: list[list[str]] = []
    for index in range(first, first + 3):
        done = _run(project, "--tier", "gpu", "--shard", f"{index}/3", "--results", f"shard{index}")
        assert done.returncode == 0, done.stderr
        results = json.loads((project / f"shard{index}" / "results.json").read_text())
        ran.append([c["id"] for c in results["combinations"]])
        assert {c["verdict"] for c in results["combinations"]} == {"SKIPPED"}
    assert sorted(c for part in ran for c in part) == [f"g{i}" for i in range(7)]
    assert sorted(map(len, ran)) == [2, 2, 3]
    # Deterministic: the same part again holds the same combinations.
    again = _run(project, "--tier", "gpu", "--shard", f"{first}/3", "--results", "again")
    assert again.returncode == 0, again.stderr
    repeated = json.loads((project / "again" / "results.json").read_text())
    assert [c["id"] for c in repeated["combinations"]] == ran[0]


def test_the_shards_merge_back_into_the_tier(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    for index in (1, 2):
        done = _run(project, "--tier", "gpu", "--shard", f"{index}/2", "--results", f"s{index}")
        assert done.returncode == 0, done.stderr
    merging = ["merge", "--tier", "gpu", "--shards", "2", "--into", "all", "s1", "s2"]
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", *merging],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    merged = json.loads((project / "all" / "results.json").read_text())
    assert [c["id"] for c in merged["combinations"]] == [f"g{i}" for i in range(7)]


def test_a_bad_shard_is_refused_before_anything_runs(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    done = _run(project, "--tier", "gpu", "--shard", "4/3")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "repromatrix: error: --shard: '4/3': I must be 1..N (or 0..N-1) and N at least 1"
    )
    assert not (project / "reports").exists()
