"""nightly.yml and nightly-combination.yml, run for real under act (tests/support/act.py):
setup, one job per combination, gather; what gh was asked and what the artifacts hold.

The cases are real and small: packaging's LegacyVersion, removed in packaging 22.0
(pypa/packaging#407), imports on 21.x and not from 22.0 — an upstream change that a
matrix pinning packaging sees as a regression, in a second of CPU."""

from __future__ import annotations

import pytest
from support.nights import Scenario, results_of

pytestmark = [pytest.mark.act, pytest.mark.e2e]

LEGACY_VERSION_CASE = """
    def test_legacy_version_parses():
        from packaging.version import LegacyVersion

        assert str(LegacyVersion("not-a-version")) == "not-a-version"
"""

GREEN_MATRIX = """
    schema: 1
    packages: [torch, packaging]
    defaults: {device: cpu, torch: null}
    tiers:
      tiny:
        - {id: pk21.3, packaging: "21.3"}
        - {id: pk21.2, packaging: "21.2"}
"""


def test_night_1_green_uploads_results_and_opens_no_issue(scenario: Scenario) -> None:
    scenario.write(matrix=GREEN_MATRIX, cases={"test_legacy.py": LEGACY_VERSION_CASE})

    run = scenario.night(tier="tiny")

    assert run.returncode == 0, run.tail()
    results = results_of(run)
    assert {c["id"]: c["verdict"] for c in results["combinations"]} == {
        "pk21.3": "PASS",
        "pk21.2": "PASS",
    }
    assert {c["id"]: c["resolved"]["packaging"] for c in results["combinations"]} == {
        "pk21.3": "21.3",
        "pk21.2": "21.2",
    }
    assert "combination-pk21.3" in run.artifact_names()
    assert "combination-pk21.2" in run.artifact_names()
    # no baseline: gh run list served nothing, so nothing was downloaded
    assert scenario.gh.calls_to("run", "list")
    assert not scenario.gh.calls_to("run", "download")
    assert "no baseline: no earlier completed nightly run (a first night)" in run.log
    assert not scenario.gh.calls_to("issue", "create")
    assert not scenario.gh.calls_to("workflow", "run")
    assert scenario.gh.issues() == []
    assert "## repromatrix: ✅ 2 PASS" in run.summary()
