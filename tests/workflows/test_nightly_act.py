"""nightly.yml and nightly-combination.yml, run for real under act (tests/support/act.py):
setup, one job per combination, gather; what gh was asked and what the artifacts hold.

The cases are real and small: packaging's LegacyVersion, removed in packaging 22.0
(pypa/packaging#407), imports on 21.x and not from 22.0 — an upstream change that a
matrix pinning packaging sees as a regression, in a second of CPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from support.nights import LEGACY_VERSION_CASE, Scenario, packaging_matrix, results_of

pytestmark = [pytest.mark.act, pytest.mark.e2e]

GREEN_MATRIX = packaging_matrix({"pk21.3": "21.3", "pk21.2": "21.2"})


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


def test_a_matrix_error_fails_setup_with_one_line_naming_file_and_key(scenario: Scenario) -> None:
    scenario.write(
        matrix=packaging_matrix({"pk21.3": "4.5x"}),
        cases={"test_legacy.py": LEGACY_VERSION_CASE},
    )

    run = scenario.night(tier="tiny")

    assert run.returncode != 0, run.tail()
    assert re.search(
        r"^\[nightly/setup\]\s+\| repromatrix: error: "
        r"matrix\.yaml: tiers\.tiny\[0\]\.packaging: '4\.5x' "
        r"is not a version or specifier$",
        run.log,
        re.M,
    ), run.tail()
    assert "Traceback" not in run.log
    assert "Failure - Main Combinations of the tier" in run.log
    assert run.artifact_names() == []  # no combination job ran
    assert scenario.gh.calls() == []


def test_the_nightly_tier_on_a_cpu_host_is_skipped_with_its_reason(
    scenario: Scenario, repo_root: Path
) -> None:
    # The real nightly tier's shape: its tier_defaults (a CUDA device, the runner's torch).
    tier_defaults = yaml.safe_load((repo_root / "matrix.yaml").read_text())["tier_defaults"]
    assert tier_defaults["nightly"]["device"] == "cuda"
    matrix = {
        "schema": 1,
        "packages": ["torch", "packaging"],
        "defaults": {"device": "cpu", "torch": None},
        "tier_defaults": {"nightly": tier_defaults["nightly"]},
        "tiers": {
            "nightly": [
                {"id": "pk21.3", "packaging": "21.3"},
                {"id": "pk21.2", "packaging": "21.2"},
            ]
        },
    }
    scenario.write(
        matrix=yaml.safe_dump(matrix, sort_keys=False),
        cases={"test_legacy.py": LEGACY_VERSION_CASE},
    )

    run = scenario.night(tier="nightly")

    assert run.returncode == 0, run.tail()
    combinations = results_of(run)["combinations"]
    assert {c["id"] for c in combinations} == {"pk21.3", "pk21.2"}
    for combination in combinations:
        assert combination["verdict"] == "SKIPPED", combination
        assert "cuda" in combination["message"].lower(), combination
    assert not scenario.gh.calls_to("issue", "create")
    assert not scenario.gh.calls_to("workflow", "run")


NIGHT_1_PASSES = packaging_matrix({"pk": "21.3"})


def test_a_combination_that_no_longer_installs_is_an_install_error_and_opens_the_issue(
    scenario: Scenario,
) -> None:
    scenario.write(matrix=NIGHT_1_PASSES, cases={"test_legacy.py": LEGACY_VERSION_CASE})
    first = scenario.night(tier="tiny")
    assert first.returncode == 0, first.tail()
    # Night 2: the same combination asks for a release no index has.
    scenario.write(matrix=NIGHT_1_PASSES.replace('"21.3"', '"99.0"'))

    second = scenario.night(tier="tiny")

    assert second.returncode != 0, second.tail()
    [combination] = results_of(second)["combinations"]
    assert combination["verdict"] == "INSTALL-ERROR", combination
    assert "packaging==99.0" in combination["message"], combination
    assert scenario.gh.calls_to("run", "download")  # night 1's results were the baseline
    [created] = scenario.gh.calls_to("issue", "create")
    assert "pk" in created["body"]
    assert "INSTALL-ERROR" in created["body"]
    [issue] = scenario.gh.issues()
    assert issue["state"] == "open"
    assert "nightly-regression" in issue["labels"]
