"""`repromatrix ci-matrix`: a tier as slices of jobs, each job
``{"combinations": [ids...], "runs-on": ...}`` with runs-on in the shape matrix.yaml
wrote (a scale-set name, a list of labels, ``{group, labels}``); several combinations
a job when the tier is large; different runners never share a job."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.errors import UserError
from repromatrix.matrix.load import load_matrix
from repromatrix.nightly import slices

REPO = Path(__file__).resolve().parents[2]
DEFAULT = ["self-hosted", "linux", "gpu"]

SHAPES = """
    schema: 1
    packages: [torch, peft, trl]
    defaults: {torch: "2.13.0"}
    tier_defaults:
      nightly: {device: cuda, torch: system, runner: arc-gpu-1x}
    tiers:
      nightly:
        - {id: one-a, peft: "0.17.1"}
        - {id: ddp, trl: "0.22.2", runner: [self-hosted, linux, gpu-2x]}
        - {id: one-b, peft: "0.17.0"}
        - {id: group, peft: "0.16.0", runner: {group: aws-g5-12xlarge-cache, labels: [gpu]}}
        - {id: one-c, peft: "0.15.2"}
        - {id: bare-group, peft: "0.15.1", runner: {group: gpu-runners}}
      plain:
        - {id: p1, peft: "0.17.1"}
        - {id: p2, peft: "0.17.0"}
"""


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", "ci-matrix", *args],
        cwd=folder,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )


def _ci_matrix(folder: Path, *args: str) -> dict[str, str]:
    done = _run(folder, *args)
    assert done.returncode == 0, done.stderr
    # Every line is a step output for $GITHUB_OUTPUT: name=value, nothing else.
    lines = done.stdout.splitlines()
    assert all("=" in line and line.split("=", 1)[0].isidentifier() for line in lines), lines
    return dict(line.split("=", 1) for line in lines)


def _jobs(outputs: dict[str, str]) -> list[dict]:
    names = sorted((k for k in outputs if k.startswith("slice_")), key=lambda k: int(k[6:]))
    found = []
    for name in names:
        part = json.loads(outputs[name])
        assert isinstance(part, list)
        found += part
    return found


def _write(folder: Path, text: str) -> Path:
    (folder / "matrix.yaml").write_text(textwrap.dedent(text))
    return folder / "matrix.yaml"


def test_each_job_gets_runs_on_in_the_shape_written(tmp_path: Path) -> None:
    _write(tmp_path, SHAPES)
    jobs = _jobs(_ci_matrix(tmp_path, "--tier", "nightly"))
    for job in jobs:
        assert set(job) == {"combinations", "runs-on"}
    runs_on = {c: job["runs-on"] for job in jobs for c in job["combinations"]}
    assert runs_on == {
        "one-a": "arc-gpu-1x",  # the tier's runner: one scale-set name, a string
        "one-b": "arc-gpu-1x",
        "one-c": "arc-gpu-1x",
        "ddp": ["self-hosted", "linux", "gpu-2x"],  # the 2-GPU combination's labels
        "group": {"group": "aws-g5-12xlarge-cache", "labels": ["gpu"]},
        "bare-group": {"group": "gpu-runners"},
    }


def test_a_tier_without_runner_gets_the_default_or_the_runner_option(tmp_path: Path) -> None:
    _write(tmp_path, SHAPES)
    jobs = _jobs(_ci_matrix(tmp_path, "--tier", "plain"))
    assert [job["runs-on"] for job in jobs] == [DEFAULT, DEFAULT]
    jobs = _jobs(_ci_matrix(tmp_path, "--tier", "plain", "--runner", '"arc-cpu"'))
    assert [job["runs-on"] for job in jobs] == ["arc-cpu", "arc-cpu"]
    # The option never replaces a runner matrix.yaml names.
    jobs = _jobs(_ci_matrix(tmp_path, "--tier", "nightly", "--runner", '["x"]'))
    assert {json.dumps(job["runs-on"]) for job in jobs} == {
        '"arc-gpu-1x"',
        '["self-hosted", "linux", "gpu-2x"]',
        '{"group": "aws-g5-12xlarge-cache", "labels": ["gpu"]}',
        '{"group": "gpu-runners"}',
    }


def test_different_runners_never_share_a_job(tmp_path: Path) -> None:
    text = SHAPES.replace("runner: arc-gpu-1x}", "runner: arc-gpu-1x, cells_per_job: 10}")
    _write(tmp_path, text)
    jobs = _jobs(_ci_matrix(tmp_path, "--tier", "nightly"))
    assert sorted(job["combinations"] for job in jobs) == [
        ["bare-group"],
        ["ddp"],
        ["group"],
        ["one-a", "one-b", "one-c"],  # the same runner: one job, in matrix order
    ]
    # In the order of their first combination (matrix order).
    assert [job["combinations"][0] for job in jobs] == ["one-a", "ddp", "group", "bare-group"]


def test_combinations_of_different_torch_pins_do_not_share_a_job() -> None:
    matrix = _matrix_of(
        """
        schema: 1
        packages: [torch, peft]
        tier_defaults: {t: {cells_per_job: 8}}
        tiers:
          t:
            - {id: a, torch: "2.13.0", peft: "0.17.1"}
            - {id: b, torch: "2.12.1", peft: "0.17.1"}
            - {id: c, torch: "2.13.0", peft: "0.17.0"}
        """
    )
    parts = slices.plan(matrix.tier("t"), settings=matrix.settings_of("t"))
    assert [job.combinations for job in parts[0]] == [("a", "c"), ("b",)]


def _matrix_of(text: str, folder: Path | None = None):
    import tempfile

    where = Path(folder or tempfile.mkdtemp())
    return load_matrix(_write(where, text))


def _big_tier(folder: Path, count: int, extra: str = "") -> Path:
    lines = [
        "schema: 1",
        "packages: [torch, peft]",
        "tier_defaults:",
        f"  big: {{device: cuda, torch: system{extra}}}",
        "tiers:",
        "  big:",
        "    - axes:",
        f"        peft: [{', '.join(f'{chr(34)}0.{i}.0{chr(34)}' for i in range(count))}]",
        '      id: "c{peft}"',
    ]
    (folder / "matrix.yaml").write_text("\n".join(lines) + "\n")
    return folder / "matrix.yaml"


def test_a_tier_of_2000_combinations_fits_the_workflows_four_slices(tmp_path: Path) -> None:
    _big_tier(tmp_path, 2000)
    clock = time.monotonic()
    outputs = _ci_matrix(tmp_path, "--tier", "big", "--slices", "4")
    seconds = time.monotonic() - clock
    jobs = _jobs(outputs)
    ids = [c for job in jobs for c in job["combinations"]]
    assert ids == [f"c0.{i}.0" for i in range(2000)]  # every combination once, in order
    assert outputs["total"] == "2000"
    assert int(outputs["jobs"]) == len(jobs) == 1000  # two a job: the fewest that fit
    assert {len(job["combinations"]) for job in jobs} == {2}
    for i in range(4):
        assert len(json.loads(outputs[f"slice_{i}"])) == 250  # even, under 256
    # $GITHUB_OUTPUT takes it: well under GitHub's 1 MB of outputs a job.
    assert sum(len(v) for v in outputs.values()) < 1_000_000
    assert seconds < 60, seconds  # generous: it takes about a second


def test_cells_per_job_sets_the_job_size_and_a_too_small_one_is_one_line(tmp_path: Path) -> None:
    _big_tier(tmp_path, 10, extra=", cells_per_job: 3")
    jobs = _jobs(_ci_matrix(tmp_path, "--tier", "big"))
    assert [len(job["combinations"]) for job in jobs] == [3, 3, 2, 2]  # even, at most 3

    _big_tier(tmp_path, 600, extra=", cells_per_job: 1")
    done = _run(tmp_path, "--tier", "big", "--slices", "2")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "repromatrix: error: the tier needs 600 jobs, more than 2 matrices of at most 256 "
        "jobs each can run: add slice jobs to the workflow (and --slices) or raise cells_per_job"
    ]
    assert done.stdout == ""  # nothing half-written into $GITHUB_OUTPUT


def test_max_parallel_is_shared_between_the_slices_in_use(tmp_path: Path) -> None:
    _big_tier(tmp_path, 700, extra=", max_parallel: 8")
    outputs = _ci_matrix(tmp_path, "--tier", "big")
    used = [i for i in range(4) if json.loads(outputs[f"slice_{i}"])]
    assert used == [0, 1, 2]
    limits = [int(outputs[f"max_parallel_{i}"]) for i in range(4)]
    assert sum(limits[i] for i in used) == 8  # the tier's jobs at once, all slices together
    assert limits == [3, 3, 2, 1]

    _big_tier(tmp_path, 5, extra=", max_parallel: 8")
    outputs = _ci_matrix(tmp_path, "--tier", "big")
    assert outputs["max_parallel_0"] == "5"  # never more than the slice's jobs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("runner: []", "tier_defaults.big.runner: an empty list of runner labels"),
        ("runner: {gruop: x}", "tier_defaults.big.runner: 'gruop': a runner group has only"),
        ("runner: 3", "tier_defaults.big.runner: 3 is not a runner: a name (an ARC scale set)"),
        ("cells_per_job: 0", "tier_defaults.big.cells_per_job: Input should be greater than 0"),
        ("max_parallel: true", "tier_defaults.big.max_parallel: True is not a whole number"),
    ],
)
def test_bad_runner_and_tier_settings_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    _big_tier(tmp_path, 3, extra=f", {text}")
    done = _run(tmp_path, "--tier", "big")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"repromatrix: error: matrix.yaml: {message}"), line


def test_a_tier_setting_on_a_combination_says_where_it_belongs(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"tiers\.t\[0\]\.cells_per_job: a tier setting .*"
                       r"set it under tier_defaults\.t"):  # fmt: skip
        _matrix_of(
            """
            schema: 1
            packages: [torch]
            tiers:
              t:
                - {id: a, torch: "2.13.0", cells_per_job: 2}
            """,
            tmp_path,
        )


def test_a_runner_option_that_is_not_a_runner_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path, SHAPES)
    done = _run(tmp_path, "--tier", "plain", "--runner", "[1]")
    assert done.returncode == 2
    assert done.stderr.startswith("repromatrix: error: --runner: '[1]': 1 is not a runner label")


# Any tier: runners drawn from a few shapes, torch pins from two, sizes and settings at
# random; the plan holds each combination once, in matrix order within a runner, never
# mixes runners or torch pins in a job, and keeps every slice within its size.
RUNNERS = [None, '"arc-a"', '["self-hosted","gpu-2x"]', '{"group":"g","labels":["gpu"]}']


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(RUNNERS), st.sampled_from(["2.13.0", "2.12.1"])),
             min_size=0, max_size=300),
    st.integers(1, 4),
    st.integers(1, 40),
    st.one_of(st.none(), st.integers(1, 7)),
)  # fmt: skip
def test_any_plan_holds_each_combination_once(cells, count, size, per_job) -> None:
    from repromatrix.matrix.model import Combination, TierSettings
    from repromatrix.matrix.pins import parse_pin

    combos = [
        Combination(id=f"c{i}", tier="t", pins=(parse_pin("torch", torch),), runner=runner)
        for i, (runner, torch) in enumerate(cells)
    ]
    try:
        parts = slices.plan(
            combos, count=count, size=size, settings=TierSettings(cells_per_job=per_job)
        )
    except UserError as err:
        assert "add slice jobs" in str(err)
        return
    assert len(parts) == count
    jobs = [job for part in parts for job in part]
    assert sorted(c for job in jobs for c in job.combinations) == sorted(c.id for c in combos)
    by_id = {c.id: c for c in combos}
    for part in parts:
        assert len(part) <= size
    for job in jobs:
        members = [by_id[c] for c in job.combinations]
        assert len({(m.runner, m.pins) for m in members}) == 1  # one runner, one torch
        expected = json.loads(members[0].runner) if members[0].runner else DEFAULT
        assert job.runs_on == expected
        assert [int(c[1:]) for c in job.combinations] == sorted(
            int(c[1:]) for c in job.combinations
        )
        if per_job:
            assert len(job.combinations) <= per_job


def test_the_cut_does_not_depend_on_the_default_runner(tmp_path: Path) -> None:
    # merge --tier cuts the tier again to name a lost job, without the default runner
    # the workflow passed ci-matrix: the jobs must be the same either way.
    _write(tmp_path, SHAPES.replace("runner: arc-gpu-1x}", "cells_per_job: 4}"))
    text = (
        (tmp_path / "matrix.yaml")
        .read_text()
        .replace(
            '- {id: one-b, peft: "0.17.0"}', '- {id: one-b, peft: "0.17.0", runner: arc-gpu-1x}'
        )
    )
    (tmp_path / "matrix.yaml").write_text(text)
    given = _jobs(_ci_matrix(tmp_path, "--tier", "nightly", "--runner", '"arc-gpu-1x"'))
    default = _jobs(_ci_matrix(tmp_path, "--tier", "nightly"))
    assert [j["combinations"] for j in given] == [j["combinations"] for j in default]


def test_configured_says_whether_every_job_has_a_runner_somebody_named(tmp_path: Path) -> None:
    # nightly.yml runs nothing (and says so, green) unless `configured` is true: a
    # repository with no GPU runner yet must not queue jobs that no runner picks up.
    _write(tmp_path, SHAPES)
    named_in_matrix = _ci_matrix(tmp_path, "--tier", "nightly")
    assert named_in_matrix["configured"] == "true"
    nobody_named = _ci_matrix(tmp_path, "--tier", "plain")
    assert nobody_named["configured"] == "false"
    # The jobs are still listed with the default labels (a dispatch may name them).
    assert {json.dumps(j["runs-on"]) for j in _jobs(nobody_named)} == {json.dumps(DEFAULT)}
    by_input = _ci_matrix(tmp_path, "--tier", "plain", "--runner", '["self-hosted", "gpu"]')
    assert by_input["configured"] == "true"
    assert {json.dumps(j["runs-on"]) for j in _jobs(by_input)} == {'["self-hosted", "gpu"]'}
    # An empty --runner (nightly.yml with neither input nor variable) is no runner.
    assert _ci_matrix(tmp_path, "--tier", "plain", "--runner", "")["configured"] == "false"
