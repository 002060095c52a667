"""Which nightly regressions become bisects, over which range, and why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix.nightly.triage import INSTALL, triage
from repromatrix.outcomes import COLLECTION_ID
from repromatrix.results import CaseResult, CombinationResult, Results
from repromatrix.verdicts.knownissues import parse_registry

CASE = "test_whisper_lora.py::test_lora_gets_gradients"


def combo(
    cid: str,
    outcome: str | None = "passed",
    *,
    requested: dict[str, str] | None = None,
    resolved: dict[str, str] | None = None,
    status: str | None = None,
    device: str = "cuda",
) -> CombinationResult:
    requested = requested or {"torch": "system", "transformers": "latest", "peft": "0.17.1"}
    resolved = resolved or {"torch": "2.9.0+cu128", "transformers": "4.57.0", "peft": "0.17.1"}
    cases = [CaseResult(id=CASE, status=outcome, outcome=outcome)] if outcome else []
    return CombinationResult(
        id=cid,
        tier="nightly",
        requested=requested,
        resolved=resolved,
        status=status or ("passed" if outcome in ("passed", None) else "failed"),
        cases=cases,
        device=device,
    )


def tf_peft(transformers: str, peft: str) -> dict[str, str]:
    """A combination's resolved transformers and peft."""
    return {"transformers": transformers, "peft": peft}


def results(*combos: CombinationResult) -> Results:
    return Results(combinations=list(combos))


TONIGHT_RESOLVED = {"torch": "2.9.0+cu128", "transformers": "4.58.0", "peft": "0.17.1"}


def test_one_floating_pin_moved_to_a_newer_release_is_bisected() -> None:
    found = triage(
        results(combo("tf-latest", "failed", resolved=TONIGHT_RESOLVED)),
        results(combo("tf-latest", "passed")),
    )
    assert found.regressed
    assert [(r.combination, r.case, r.before, r.now) for r in found.regressions] == [
        ("tf-latest", CASE, "passed", "failed")
    ]
    [request] = found.bisects
    assert (request.package, request.good, request.bad, request.find) == (
        "transformers",
        "4.57.0",
        "4.58.0",
        "first-bad",
    )
    assert request.case == CASE
    # The others held at tonight's versions; the runner's own torch (requested
    # `system`, resolved 2.9.0+cu128) held as the runner's own, never from an index.
    assert request.pins == ("torch=system", "peft==0.17.1")
    assert request.workflow_inputs(issue=12) == {
        "package": "transformers",
        "good": "4.57.0",
        "bad": "4.58.0",
        "find": "first-bad",
        "case": CASE,
        "pins": "torch=system peft==0.17.1",
        "issue": "12",
        "cell": "",  # triage() was given no cells: nothing to carry
        "hunt": f"bisect:transformers:4.57.0:4.58.0:tf-latest:{CASE}",
    }


def test_no_baseline_nothing_is_new_nothing_dispatched() -> None:
    found = triage(results(combo("tf-latest", "failed", resolved=TONIGHT_RESOLVED)), None)
    assert not found.regressed and not found.bisects


def test_failing_last_night_too_is_not_new() -> None:
    found = triage(
        results(combo("tf-latest", "failed", resolved=TONIGHT_RESOLVED)),
        results(combo("tf-latest", "failed")),
    )
    assert not found.regressions and not found.bisects


def test_two_packages_moved_cannot_be_attributed() -> None:
    moved = {**TONIGHT_RESOLVED, "peft": "0.18.0"}
    found = triage(
        results(combo("tf-latest", "failed", resolved=moved)), results(combo("tf-latest"))
    )
    assert found.regressed and not found.bisects
    assert (
        "2 requested packages moved since last night: transformers, peft" in (found.not_bisected[0])
    )


def test_nothing_requested_moved() -> None:
    found = triage(results(combo("tf-latest", "crashed")), results(combo("tf-latest")))
    assert found.regressed and not found.bisects
    assert "no requested package moved" in found.not_bisected[0]


def test_a_git_pin_dev_version_or_a_new_system_torch_is_not_bisected() -> None:
    git = {
        "torch": "system",
        "transformers": "git+https://github.com/huggingface/transformers@main",
    }
    found = triage(
        results(
            combo(
                "tf-main",
                "failed",
                requested=git,
                resolved={"torch": "2.9.0+cu128", "transformers": "4.59.0.dev0"},
            )
        ),
        results(
            combo(
                "tf-main",
                requested=git,
                resolved={"torch": "2.9.0+cu128", "transformers": "4.58.0.dev0"},
            )
        ),
    )
    assert not found.bisects and "not between two releases" in found.not_bisected[0]
    found = triage(
        results(
            combo(
                "x",
                "failed",
                resolved={**TONIGHT_RESOLVED, "transformers": "4.57.0", "torch": "2.10.0+cu128"},
            )
        ),
        results(combo("x")),
    )
    assert not found.bisects and "system" in found.not_bisected[0]


def test_a_known_broken_failure_is_not_a_regression() -> None:
    registry = parse_registry(
        [{"case": CASE, "when": {"transformers": ">=4.58"}, "link": "https://x/issues/1"}],
        "cases/known_issues.yaml",
    )
    found = triage(
        results(combo("x", "failed", resolved=TONIGHT_RESOLVED)),
        results(combo("x")),
        registry=registry,
    )
    assert not found.regressed and not found.bisects


def test_a_flaky_case_is_not_a_regression() -> None:
    found = triage(results(combo("x", "flaky", resolved=TONIGHT_RESOLVED)), results(combo("x")))
    assert not found.regressed


def test_a_neighbour_that_passes_gives_the_range_when_last_night_cannot() -> None:
    """Two packages moved on the failing combination, but tonight's run has a
    combination identical except for transformers, and it passes."""
    requested = {"transformers": ">=4.50", "peft": "latest"}
    failing = combo("tf-new", "failed", requested=requested, resolved=tf_peft("4.58.0", "0.18.0"))
    neighbours = [
        combo("tf-old", requested=requested, resolved=tf_peft("4.56.2", "0.18.0")),
        combo("tf-mid", requested=requested, resolved=tf_peft("4.57.1", "0.18.0")),
        # Differs in two packages: not a neighbour.
        combo("far", requested=requested, resolved=tf_peft("4.57.5", "0.17.0")),
        # Passes on CPU: says nothing about the GPU failure.
        combo("cpu", requested=requested, resolved=tf_peft("4.57.9", "0.18.0"), device="cpu"),
    ]
    last_night = combo("tf-new", requested=requested, resolved=tf_peft("4.57.0", "0.17.1"))
    found = triage(results(failing, *neighbours), results(last_night))
    [request] = found.bisects
    assert (request.package, request.good, request.bad, request.find) == (
        "transformers",
        "4.57.1",  # the closest passing neighbour
        "4.58.0",
        "first-bad",
    )
    assert request.pins == ("peft==0.18.0",)
    assert "passes in tf-mid" in request.reason


def test_a_neighbour_on_the_newer_side_asks_when_it_was_fixed() -> None:
    requested = {"transformers": ">=4.50", "peft": "0.17.1"}
    new_combination = combo(
        "tf-old", "failed", requested=requested, resolved=tf_peft("4.52.4", "0.17.1")
    )
    newer = combo("tf-new", requested=requested, resolved=tf_peft("4.56.2", "0.17.1"))
    found = triage(results(new_combination, newer), results(combo("unrelated")))
    [request] = found.bisects
    assert (request.good, request.bad, request.find) == ("4.56.2", "4.52.4", "first-good")


def test_one_bisect_per_range_and_a_nightly_limit() -> None:
    tonight, baseline = [], []
    for i in range(4):
        tonight.append(combo(f"same{i}", "failed", resolved=TONIGHT_RESOLVED))
        baseline.append(combo(f"same{i}"))
    for i in range(8):
        resolved = {**TONIGHT_RESOLVED, "transformers": f"4.58.{i + 1}"}
        tonight.append(combo(f"other{i}", "failed", resolved=resolved))
        baseline.append(combo(f"other{i}"))
    found = triage(results(*tonight), results(*baseline), limit=5)
    assert len(found.regressions) == 12
    assert len(found.bisects) == 5
    assert len({b.key for b in found.bisects}) == 5
    assert sum("over the limit" in line for line in found.not_bisected) == 4


def test_a_combination_that_no_longer_installs_is_a_regression() -> None:
    found = triage(
        results(combo("x", None, status="install-error", resolved={})),
        results(combo("x")),
    )
    assert [(r.case, r.now) for r in found.regressions] == [(INSTALL, "install-error")]


def test_a_regressed_verdict_counts_without_a_baseline() -> None:
    """The verdicts call x REGRESSED (an older neighbour passes): the tracking issue
    is opened on a first night too, though nothing is dispatched."""
    older = combo("older", resolved={**TONIGHT_RESOLVED, "transformers": "4.57.0"})
    found = triage(results(older, combo("x", "failed", resolved=TONIGHT_RESOLVED)), None)
    assert found.regressed and found.flagged == ["x"]
    assert not found.bisects


def test_cases_that_no_longer_collect_are_a_regression_bisected_with_a_real_case() -> None:
    broken = combo("x", None, resolved=TONIGHT_RESOLVED, status="failed")
    broken.cases = [CaseResult(id=COLLECTION_ID, status="error", outcome="error")]
    found = triage(results(broken), results(combo("x")))
    assert [(r.case, r.before, r.now) for r in found.regressions] == [
        (COLLECTION_ID, "passed", "error")
    ]
    [request] = found.bisects
    assert (request.package, request.good, request.bad, request.case) == (
        "transformers",
        "4.57.0",
        "4.58.0",
        CASE,  # the case that passed last night: bisect needs one that can run
    )


def test_a_pin_that_moved_back_is_not_bisected() -> None:
    found = triage(
        results(combo("x", "failed", resolved={**TONIGHT_RESOLVED, "transformers": "4.56.2"})),
        results(combo("x")),
    )
    assert found.regressed and not found.bisects
    assert "transformers moved back (4.57.0 -> 4.56.2)" in found.not_bisected[0]


def test_several_packages_moved_become_a_culprit_hunt_between_the_two_locks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = {**TONIGHT_RESOLVED, "transformers": "4.57.0", "tokenizers": "0.21.1"}
    moved = {**TONIGHT_RESOLVED, "peft": "0.18.0", "tokenizers": "0.22.1", "rich": "15.0.0"}
    found = triage(
        results(combo("tf-latest", "failed", resolved=moved)),
        results(combo("tf-latest", resolved=before)),
    )
    assert not found.bisects
    [hunt] = found.culprits
    assert hunt.case == CASE and hunt.combination == "tf-latest"
    assert hunt.changed == (
        "peft 0.17.1 -> 0.18.0",
        "rich none -> 15.0.0",
        "tokenizers 0.21.1 -> 0.22.1",
        "transformers 4.57.0 -> 4.58.0",
    )
    assert hunt.pins == ("torch=system",)  # the runner's torch is held, not locked
    assert "torch==2.9.0+cu128" not in hunt.bad and "peft==0.18.0" in hunt.bad
    inputs = hunt.workflow_inputs(issue=7)
    assert inputs["good"].split() == list(hunt.good) and inputs["issue"] == "7"
    assert "culprit hunt over the 4 packages" in found.not_bisected[0]
    assert found.dump()["culprits"][0]["combination"] == "tf-latest"
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # this repository: its noxfile
    assert hunt.command("base", "tonight").startswith(
        "nox -s culprit -- --good-results base --bad-results tonight --combination tf-latest"
    )
