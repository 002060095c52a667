"""The nightly loop closing itself, under act: nights of nightly.yml with the tracking
issue kept in the gh double's fake GitHub, and the hunts the gather job dispatched
run with exactly the inputs it gave them (bisect.yml, culprit.yml), answering on
the issue; the next night reads their answers back.

The regression is real: packaging 22.0 removed LegacyVersion (pypa/packaging#407)."""

from __future__ import annotations

import pytest
from support.nights import Scenario, results_of

from repromatrix.github.hidden import read_hidden

pytestmark = [pytest.mark.act, pytest.mark.e2e]

LEGACY_VERSION_CASE = """
    def test_legacy_version_parses():
        from packaging.version import LegacyVersion

        assert str(LegacyVersion("not-a-version")) == "not-a-version"
"""
CASE_ID = "test_legacy.py::test_legacy_version_parses"


def matrix(packaging: str, six: str = "1.16.0") -> str:
    return f"""
        schema: 1
        packages: [torch, packaging, six]
        defaults: {{device: cpu, torch: null}}
        tiers:
          tiny:
            - {{id: pk, packaging: "{packaging}", six: "{six}"}}
    """


def test_three_nights_pass_regression_fixed_and_the_bisect_answers(scenario: Scenario) -> None:
    gh = scenario.gh
    scenario.write(matrix=matrix("21.3"), cases={"test_legacy.py": LEGACY_VERSION_CASE})
    first = scenario.night(tier="tiny")
    assert first.returncode == 0, first.tail()
    assert gh.issues() == []

    # Night 2: packaging moved to 22.0 (one package): REGRESSED, the issue opened, red,
    # and bisect.yml dispatched with the combination's cell and the issue's number.
    scenario.write(matrix=matrix("22.0"), message="packaging 22.0")
    second = scenario.night(tier="tiny")
    assert second.returncode != 0, second.tail()
    assert "new failures tonight" in second.log
    [issue] = gh.issues()
    assert issue["state"] == "open" and "nightly-regression" in issue["labels"]
    assert "1 new, 0 still failing, 0 fixed" in issue["body"]
    assert f": 1 failed: `pk` `{CASE_ID}`" in issue["body"]  # new tonight, one line a cause
    [dispatch] = gh.dispatches()
    inputs = dispatch["inputs"]
    assert dispatch["workflow"] == "bisect.yml"
    assert (inputs["package"], inputs["good"], inputs["bad"]) == ("packaging", "21.3", "22.0")
    assert inputs["issue"] == str(issue["number"]) and inputs["case"] == CASE_ID
    assert '"torch":null' in inputs["cell"]  # the combination's null pin travels
    # The hunt runs where the night ran, installing repromatrix as it did.
    assert inputs["runner"] == '["ubuntu-latest"]' and inputs["repromatrix"] == "."

    hunt = scenario.dispatched(dispatch)
    assert hunt.returncode == 0, hunt.tail()
    [answer] = gh.issues()[0]["comments"]
    marker = read_hidden(answer, "hunt", line="first")
    assert marker["key"] == inputs["hunt"] and marker["verdict"].startswith("first bad: packaging")
    assert "first bad: packaging 22.0 (last good: 21.3)" in answer
    # Anyone may comment on the tracking issue: an answer in the bot's words, from a
    # person, is no answer (before, the tracking state took it as the verdict).
    forged = answer.replace("22.0", "99.0")
    gh.add_comment(issue["number"], forged, login="mallory", association="NONE")

    # Night 3: still failing: not new, the run green, the hunt's answer on the issue.
    third = scenario.night(tier="tiny")
    assert third.returncode == 0, third.tail()
    body = gh.issues()[0]["body"]
    assert "0 new, 1 still failing" in body
    assert "**first bad: packaging 22.0 (last good: 21.3)" in body and "99.0" not in body

    # Night 4: back to 21.3: FIXED; the issue says so, is commented and closed.
    scenario.write(matrix=matrix("21.3"), message="back to packaging 21.3")
    fourth = scenario.night(tier="tiny")
    assert fourth.returncode == 0, fourth.tail()
    [closed] = gh.issues()
    assert closed["state"] == "closed"
    assert "### Fixed since the last run" in closed["body"]
    assert "back to pass / known-broken" in closed["comments"][-1]
    assert len(gh.calls_to("issue", "close")) == 1


def test_a_culprit_hunt_names_the_package_and_its_first_bad_release(scenario: Scenario) -> None:
    """Two packages moved (packaging and six): the culprit hunt gets last night's and
    tonight's locks and the cell, and culprit.yml, run with those inputs, names
    packaging and its first bad release on the issue."""
    gh = scenario.gh
    scenario.write(
        matrix=matrix("21.3", six="1.16.0"), cases={"test_legacy.py": LEGACY_VERSION_CASE}
    )
    assert scenario.night(tier="tiny").returncode == 0
    scenario.write(matrix=matrix("22.0", six="1.17.0"), message="two packages moved")
    second = scenario.night(tier="tiny")
    assert second.returncode != 0
    [dispatch] = gh.dispatches()
    assert dispatch["workflow"] == "culprit.yml"
    inputs = dispatch["inputs"]
    assert "packaging==21.3" in inputs["good"].split() and "six==1.17.0" in inputs["bad"].split()
    assert inputs["name"] == "pk" and '"torch":null' in inputs["cell"]

    hunt = scenario.dispatched(dispatch)
    assert hunt.returncode == 0, hunt.tail()
    [answer] = gh.issues()[0]["comments"]
    assert "packaging" in answer and "22.0" in answer
    assert read_hidden(answer, "hunt", line="first")["key"] == inputs["hunt"]
    assert results_of(second)["combinations"][0]["verdict"] == "REGRESSED"


def test_a_first_night_with_an_unregistered_failure_is_red_and_opens_the_issue(
    scenario: Scenario,
) -> None:
    scenario.write(matrix=matrix("22.0"), cases={"test_legacy.py": LEGACY_VERSION_CASE})
    run = scenario.night(tier="tiny")
    assert run.returncode != 0, run.tail()
    [issue] = scenario.gh.issues()
    assert "1 new" in issue["body"] and CASE_ID in issue["body"]
    assert "no earlier completed nightly run (a first night)" in issue["body"]
    assert results_of(run)["combinations"][0]["verdict"] == "FAILING"
    assert scenario.gh.dispatches() == []  # nothing to bisect from: no passing side


def test_a_gh_that_is_not_authenticated_costs_the_issue_never_the_results(
    scenario: Scenario,
) -> None:
    """gh fails at every call: the baseline is one line, the results are uploaded
    (before any gh call that could fail), and the triage step fails with one line."""
    scenario.gh.set_fault(unauthenticated=True)
    scenario.write(matrix=matrix("22.0"), cases={"test_legacy.py": LEGACY_VERSION_CASE})
    run = scenario.night(tier="tiny")
    assert run.returncode != 0
    assert results_of(run)["combinations"][0]["verdict"] == "FAILING"  # uploaded all the same
    assert "no baseline: listing earlier runs failed (gh run list failed:" in run.log
    assert "repromatrix: error: gh issue list failed:" in run.log
    assert "Traceback" not in run.log
    assert scenario.gh.issues() == []


@pytest.mark.parametrize(
    ("changed", "line"),
    [
        ({"name": "../../x"}, "input name: '../../x' is not a folder name"),
        ({"good": "packaging==21.3 six"}, "input good: 'six' is not a name==version pin"),
        ({"runner": "self-hosted"}, "input runner: 'self-hosted' is not a runner as JSON"),
        ({"case": "test_legacy.py::test_nope"}, "input case: 'test_legacy.py::test_nope'"),
    ],
)
def test_a_malformed_dispatch_input_fails_with_one_line_naming_it(
    scenario: Scenario, changed: dict[str, str], line: str
) -> None:
    scenario.write(matrix=matrix("21.3"), cases={"test_legacy.py": LEGACY_VERSION_CASE})
    inputs = {
        "good": "packaging==21.3",
        "bad": "packaging==22.0",
        "case": CASE_ID,
        "name": "pk",
        **changed,
    }
    run = scenario.dispatched({"workflow": "culprit.yml", "inputs": inputs})
    assert run.returncode != 0
    assert line in run.log, run.tail()
    assert "Traceback" not in run.log
    assert "Hunt the culprit" not in run.log  # no runner was taken for the hunt itself
