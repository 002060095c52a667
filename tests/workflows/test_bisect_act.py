"""A regression hunt end to end under act: night 1 passes, night 2 moves one package's
exact pin and regresses, the gather job dispatches bisect.yml, and bisect.yml, run with
exactly the inputs it was dispatched with, comments the first bad release on the issue.

The regression is real: packaging 22.0 removed LegacyVersion (pypa/packaging#407)."""

from __future__ import annotations

import pytest
from support.nights import LEGACY_VERSION_CASE, Scenario, packaging_matrix, results_of
from support.nights import LEGACY_VERSION_CASE_ID as CASE_ID

pytestmark = [pytest.mark.act, pytest.mark.e2e]


def test_a_regression_is_bisected_and_the_first_bad_release_commented(
    scenario: Scenario,
) -> None:
    scenario.write(
        matrix=packaging_matrix({"pk": "21.3"}), cases={"test_legacy.py": LEGACY_VERSION_CASE}
    )
    first = scenario.night(tier="tiny")
    assert first.returncode == 0, first.tail()
    scenario.write(matrix=packaging_matrix({"pk": "22.0"}), message="packaging 22.0")

    second = scenario.night(tier="tiny")

    assert second.returncode != 0, second.tail()  # something regressed: the run is red
    [combination] = results_of(second)["combinations"]
    assert combination["verdict"] == "REGRESSED", combination
    [issue] = scenario.gh.issues()
    assert "pk" in issue["body"]
    assert CASE_ID in issue["body"]
    [dispatch] = scenario.gh.dispatches()
    assert dispatch["workflow"] == "bisect.yml"
    assert dispatch["ref"] == "main"
    inputs = dispatch["inputs"]
    assert (inputs["package"], inputs["good"], inputs["bad"]) == ("packaging", "21.3", "22.0")
    assert (inputs["case"], inputs["find"], inputs["issue"]) == (CASE_ID, "first-bad", "1")

    bisect = scenario.dispatched(dispatch)

    assert bisect.returncode == 0, bisect.tail()
    assert "bisect-packaging-21.3-22.0" in bisect.artifact_names()
    [comment] = scenario.gh.calls_to("issue", "comment")
    assert comment["argv"][2] == "1"
    assert "Bisect of packaging 21.3..22.0" in comment["body"]
    assert "22.0" in comment["body"].split("first bad", 1)[-1][:200], comment["body"]
    assert scenario.gh.issues()[0]["comments"] == [comment["body"]]
