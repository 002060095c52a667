"""The nightly at scale, under act: a tier spread over several jobs of several
combinations each (cells_per_job), on runners of different shapes, with one job
killed mid-way (the OOM killer, played by a case that SIGKILLs the harness). The
merged results list every combination, the lost ones say so, the run is red and the
tracking issue names the job."""

from __future__ import annotations

import re

import pytest
from support.nights import Scenario, results_of

pytestmark = [pytest.mark.act, pytest.mark.e2e]

CASES = {
    "test_legacy.py": """
        def test_legacy_version_parses():
            from packaging.version import LegacyVersion

            assert str(LegacyVersion("not-a-version")) == "not-a-version"
    """,
    # The OOM killer, played: in packaging 20.8's combination the job's harness dies
    # mid-way, as a job killed for its memory does; everything after it in that job is
    # never run.
    "test_oom.py": """
        import os
        import signal
        from importlib.metadata import version


        def test_the_job_survives():
            if version("packaging") == "20.8":
                os.kill(os.getppid(), signal.SIGKILL)
    """,
}

# Three combinations a job: (pk21.3 pk21.2 pk21.0) and (pk20.9 pk20.8 pk20.7) on the
# tier's runner, (pk20.4 pk20.3) on a runner group of their own (act maps its "gpu"
# label to this machine, as a group's runner would take the job).
MATRIX = """
    schema: 1
    packages: [torch, packaging]
    defaults: {device: cpu, torch: null}
    tier_defaults:
      spread: {cells_per_job: 3, max_parallel: 2}
    tiers:
      spread:
        - axes: {packaging: ["21.3", "21.2", "21.0", "20.9", "20.8", "20.7"]}
          id: "pk{packaging}"
        - axes: {packaging: ["20.4", "20.3"]}
          id: "pk{packaging}"
          runner: {group: gpu-2x-group, labels: [gpu]}
"""
ALL = ["pk21.3", "pk21.2", "pk21.0", "pk20.9", "pk20.8", "pk20.7", "pk20.4", "pk20.3"]
KILLED_JOB = "slice_0 / pk20.9 pk20.8 pk20.7"


def test_a_job_killed_mid_way_is_named_and_its_combinations_are_lost(scenario: Scenario) -> None:
    scenario.write(matrix=MATRIX, cases=CASES)

    run = scenario.night(tier="spread")

    assert run.returncode != 0, run.tail()  # the run is red
    # Three jobs of several combinations each, one artifact each (named by the first).
    assert run.artifact_names() == [
        "combination-pk20.4",
        "combination-pk20.9",  # the killed job's: what it finished before the kill
        "combination-pk21.3",
        "nightly-results",
    ]
    for job in ("pk21.3 pk21.2 pk21.0", "pk20.9 pk20.8 pk20.7", "pk20.4 pk20.3"):
        assert re.search(rf"(Success|Failure) - Main Run {re.escape(job)}", run.log), job
    # The killed one says so (a failed job on GitHub; act would stop the run at it).
    assert "repromatrix run ended with exit 137: its unfinished combinations are LOST" in run.log
    results = results_of(run)
    # Every combination of the tier, in matrix order; the lost ones say so.
    assert [c["id"] for c in results["combinations"]] == ALL
    verdicts = {c["id"]: c["verdict"] for c in results["combinations"]}
    assert verdicts == {
        **dict.fromkeys(ALL, "PASS"),
        "pk20.8": "LOST",  # killed mid-case
        "pk20.7": "LOST",  # never started: its job was gone
    }
    for combination in results["combinations"]:
        if combination["verdict"] == "LOST":
            assert f"`{KILLED_JOB}` (3 combinations)" in combination["message"], combination
            assert combination["status"] == "lost"
    assert results["summary"]["exit_code"] == 1
    assert "merged 8 combinations" in run.log
    assert "2 of the tier's combinations came back from no job (LOST)" in run.log
    assert "a job reported nothing: its combinations are LOST" in run.log
    # The group's job ran where its runner was (act took its "gpu" label).
    assert verdicts["pk20.4"] == verdicts["pk20.3"] == "PASS"

    # The tracking issue names the lost job.
    [created] = scenario.gh.calls_to("issue", "create")
    assert KILLED_JOB in created["body"]
    # New tonight, grouped by cause: one cause (the lost job), both combinations under it.
    assert "### New tonight: 2 failures, 1 cause\n" in created["body"]
    assert "2 lost: `pk20.8` `<lost>`, `pk20.7` `<lost>`" in created["body"]
    assert "📭 2 LOST" in run.summary()
