"""bounds.yml under act: a repository whose REPROMATRIX_BOUNDS names the planted
universe's target (support/planted_bounds.py, a wheelhouse in the repository): the run
is red, and the post job opens the tracking issue with the table; a week later the
bounds asked about hold, and the issue is closed. Unset, it is one notice and green."""

from __future__ import annotations

import pytest
from support import planted_bounds as planted
from support.nights import Scenario

pytestmark = [pytest.mark.act, pytest.mark.e2e]

ARGS = "bf-app==1.0 --script probe.py --wheelhouse wheels"


def test_a_wrong_bound_opens_the_tracking_issue_and_holding_bounds_close_it(
    scenario: Scenario,
) -> None:
    planted.wheelhouse(scenario.repo / "wheels")
    planted.probe(scenario.repo / "probe.py")
    scenario.write(message="a project with declared ranges")
    gh = scenario.gh

    def week(args: str):
        variables = {"REPROMATRIX_SOURCE": ".", "REPROMATRIX_BOUNDS": args}
        return scenario_run(scenario, variables)

    first = week(ARGS)
    assert first.returncode != 0, first.tail()  # red: a declared bound is wrong
    assert "a declared bound is wrong" in first.log, first.tail()
    [issue] = gh.issues()
    assert issue["state"] == "open" and issue["labels"] == ["bounds"]
    assert "| `bf-a` | `>=1.0` | ⬇️ floor-too-low | `>=1.2` |" in issue["body"]
    assert "repromatrix check --script probe.py" in issue["body"]
    report = first.artifact("bounds")
    assert (report / "bf-app-1.0" / "bounds.json").is_file()

    # A week later the range asked about holds: the issue is closed with a comment.
    second = week(f"{ARGS} --only bf-d --pin bf-c==3.3")
    assert second.returncode == 0, second.tail()
    [closed] = gh.issues()
    assert closed["state"] == "closed"
    assert "holds again" in closed["comments"][-1]


def scenario_run(scenario: Scenario, variables: dict[str, str]):
    from support.act import act_run

    return act_run(
        scenario.repo,
        workflow="bounds.yml",
        variables=variables,
        gh=scenario.gh,
        work=scenario.work,
        env=scenario.env,
    )
