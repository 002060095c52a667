"""Every verdict rule, on synthetic results (nothing runs)."""

from __future__ import annotations

from support.reportdata import (
    CASE_A,
    CASE_B,
    case,
    combination,
    own_package,
    own_source,
    results,
    versions,
)

from repromatrix.matrix.pins import PinKind, parse_pin_option
from repromatrix.outcomes import COLLECTION_ID
from repromatrix.verdicts import held_pins, judge
from repromatrix.verdicts.knownissues import parse_registry

REGISTRY = parse_registry(
    [
        {
            "case": CASE_A,
            "when": {"transformers": ">=4.53,<4.56"},
            "link": "https://github.com/huggingface/transformers/issues/40000",
            "note": "reentrant checkpointing drops LoRA gradients",
        }
    ],
    "cases/known_issues.yaml",
)


def verdicts(judged) -> dict[str, str]:
    return {c.id: c.verdict for c in judged.combinations}


def status(judged, combination_id: str, case_id: str = CASE_A) -> str:
    return next(c for c in judged.find(combination_id).cases if c.id == case_id).status


# --------------------------------------------------------------------------- known issues


def test_failure_inside_a_known_issue_is_known_broken_and_exits_zero():
    judged = judge(
        results(combination("tf4.54", versions("4.54.0"), [case(CASE_A, "failed")])), REGISTRY
    )
    only = judged.find("tf4.54").cases[0]
    assert only.status == "known-broken"
    assert only.outcome == "failed"  # the raw outcome is kept
    assert only.known_issue["link"].endswith("/40000")
    assert verdicts(judged) == {"tf4.54": "KNOWN-BROKEN"}
    assert judged.summary.exit_code == 0


def test_pass_inside_a_known_issue_is_possibly_fixed():
    judged = judge(
        results(combination("tf4.54", versions("4.54.0"), [case(CASE_A, "passed")])), REGISTRY
    )
    assert status(judged, "tf4.54") == "possibly-fixed"
    assert verdicts(judged) == {"tf4.54": "FIXED"}
    assert [f.source for f in judged.fixed] == ["known-issue"]
    assert judged.summary.exit_code == 0


def test_failure_outside_the_range_is_an_unexpected_failure():
    judged = judge(
        results(combination("tf4.56", versions("4.56.2"), [case(CASE_A, "failed")])), REGISTRY
    )
    assert status(judged, "tf4.56") == "failed"
    assert verdicts(judged) == {"tf4.56": "FAILING"}
    assert judged.summary.exit_code == 1


def test_known_issue_covers_crashes_and_timeouts_too():
    judged = judge(
        results(
            combination(
                "tf4.54",
                versions("4.54.0"),
                [case(CASE_A, "crashed", "the interpreter died (killed by SIGSEGV)")],
            )
        ),
        REGISTRY,
    )
    assert status(judged, "tf4.54") == "known-broken"


def test_judging_again_without_the_registry_undoes_it():
    stored = results(combination("tf4.54", versions("4.54.0"), [case(CASE_A, "failed")]))
    judge(stored, REGISTRY)
    judge(stored)
    assert status(stored, "tf4.54") == "failed"
    assert stored.find("tf4.54").cases[0].known_issue is None
    assert verdicts(stored) == {"tf4.54": "FAILING"}


# ------------------------------------------------------------------ flaky, skipped, install


def test_flaky_is_never_a_regression():
    now = results(
        combination(
            "a", versions("4.53.0"), [case(CASE_A, "flaky", attempts=["failed", "passed"])]
        ),
        combination("b", versions("4.52.4"), [case(CASE_A, "passed")]),
    )
    before = results(combination("a", versions("4.53.0"), [case(CASE_A, "passed")]))
    judged = judge(now, baseline=before)
    assert status(judged, "a") == "flaky"
    assert verdicts(judged)["a"] == "PASS"
    assert judged.regressions == []
    assert judged.summary.exit_code == 0


def test_cell_that_could_not_run_here_is_skipped_never_pass_or_failing():
    gpu = combination(
        "gpu",
        {"torch": "system", "unsloth": "latest"},
        status="skipped",
        resolved=False,
        message="requires a CUDA GPU; this host has none",
    )
    all_skipped = combination(
        "skips", versions("4.52.4"), [case(CASE_A, "skipped", "requires a CUDA GPU")]
    )
    judged = judge(results(gpu, all_skipped))
    assert verdicts(judged) == {"gpu": "SKIPPED", "skips": "SKIPPED"}
    assert "CUDA GPU" in judged.find("gpu").verdict_reason
    assert judged.summary.exit_code == 0


def test_install_error_fails_the_run_and_is_nobodys_neighbour():
    broken = combination(
        "tf-main",
        versions("4.53.0"),
        status="install-error",
        resolved=False,
        message="resolve: no solution",
    )
    failing = combination("tf4.53", versions("4.53.0"), [case(CASE_A, "failed")])
    judged = judge(results(broken, failing))
    assert verdicts(judged) == {"tf-main": "INSTALL-ERROR", "tf4.53": "FAILING"}
    assert judged.find("tf4.53").cases[0].transitions == []
    assert judged.summary.exit_code == 1


def test_everything_fine_exits_zero_with_counts():
    judged = judge(
        results(
            combination("a", versions("4.52.4"), [case(CASE_A, "passed"), case(CASE_B, "skipped")]),
            combination("b", versions("4.53.0"), [case(CASE_A, "failed")]),
        ),
        REGISTRY,
    )
    assert judged.summary.verdicts == {"PASS": 1, "KNOWN-BROKEN": 1}
    assert judged.summary.statuses == {"passed": 1, "skipped": 1, "known-broken": 1}
    assert judged.summary.exit_code == 0


# --------------------------------------------------------------------------- baseline run


def test_passed_in_the_baseline_run_and_fails_now_is_regressed_with_the_moved_pin():
    before = results(
        combination("nightly", versions("4.57.0"), [case(CASE_A, "passed")]), run_id="night1"
    )
    now = results(combination("nightly", versions("4.57.1"), [case(CASE_A, "failed")]))
    judged = judge(now, baseline=before, baseline_name="previous/results.json")
    only = judged.find("nightly").cases[0]
    assert only.change == "regressed"
    assert only.baseline_status == "passed"
    assert verdicts(judged) == {"nightly": "REGRESSED"}
    [change] = judged.regressions
    assert change.source == "baseline"
    assert change.transition.text == (
        "regressed between transformers 4.57.0 and 4.57.1 (torch 2.13.0, peft 0.17.1)"
    )
    assert change.transition.bisect == (
        "nox -s bisect -- --package transformers --good 4.57.0 --bad 4.57.1 "
        "--pin torch==2.13.0 --pin peft==0.17.1 --case "
        "'test_lora.py::test_lora_gets_gradients[reentrant]'"
    )
    assert change.repro == "nox -s nightly -- 'test_lora.py::test_lora_gets_gradients[reentrant]'"
    assert judged.summary.baseline == {
        "run": "night1",
        "started": "2026-11-22T10:00:00+00:00",
        "file": "previous/results.json",
    }
    assert judged.summary.exit_code == 1


def test_baseline_regression_with_two_packages_moved_names_both_and_no_bisect():
    before = results(combination("n", versions("4.57.0", peft="0.17.1"), [case(CASE_A, "passed")]))
    now = results(combination("n", versions("4.57.1", peft="0.18.0"), [case(CASE_A, "failed")]))
    judged = judge(now, baseline=before)
    [change] = judged.regressions
    assert change.transition is None
    assert "transformers 4.57.0 -> 4.57.1" in change.text
    assert "peft 0.17.1 -> 0.18.0" in change.text


def test_failed_in_the_baseline_and_passes_now_is_fixed():
    before = results(combination("n", versions("4.57.0"), [case(CASE_A, "failed")]))
    now = results(combination("n", versions("4.57.1"), [case(CASE_A, "passed")]))
    judged = judge(now, baseline=before)
    assert judged.find("n").cases[0].change == "fixed"
    assert verdicts(judged) == {"n": "FIXED"}
    assert [f.source for f in judged.fixed] == ["baseline"]
    assert judged.summary.exit_code == 0


def test_failing_in_the_baseline_too_is_failing_not_regressed_whatever_the_neighbours():
    before = results(combination("b", versions("4.53.0"), [case(CASE_A, "failed")]))
    now = results(
        combination("a", versions("4.52.4"), [case(CASE_A, "passed")]),
        combination("b", versions("4.53.0"), [case(CASE_A, "failed")]),
    )
    judged = judge(now, baseline=before)
    failing = judged.find("b").cases[0]
    assert failing.change == "still-failing"
    assert failing.transitions[0].direction == "regressed"  # still reported, for bisecting
    assert verdicts(judged)["b"] == "FAILING"
    assert "baseline run too" in judged.find("b").verdict_reason


def test_new_failure_without_any_baseline_is_failing():
    judged = judge(results(combination("x", versions("4.53.0"), [case(CASE_A, "error")])))
    assert verdicts(judged) == {"x": "FAILING"}
    assert judged.find("x").cases[0].change is None
    assert judged.summary.exit_code == 1


def test_whole_combination_failing_to_collect_regresses_against_the_baseline():
    before = results(combination("n", versions("4.57.0"), [case(CASE_A, "passed")]))
    now = results(
        combination(
            "n", versions("4.57.1"), [case(COLLECTION_ID, "error", "no case ran: ImportError")]
        )
    )
    judged = judge(now, baseline=before)
    assert verdicts(judged) == {"n": "REGRESSED"}
    [change] = judged.regressions
    assert change.repro == "nox -s n"  # no case id for the pseudo case
    # bisect needs a real case: the first one that passed in the baseline run
    assert change.transition.bisect.endswith(
        "--case 'test_lora.py::test_lora_gets_gradients[reentrant]'"
    )


# --------------------------------------------------------------------------- neighbours


def test_neighbour_regression_names_the_transition_and_the_bisect_command():
    judged = judge(
        results(
            combination("tf4.52", versions("4.52.4"), [case(CASE_A, "passed")]),
            combination("tf4.53", versions("4.53.0"), [case(CASE_A, "failed")]),
        )
    )
    assert verdicts(judged) == {"tf4.52": "PASS", "tf4.53": "REGRESSED"}
    step = judged.find("tf4.53").cases[0].transitions[0]
    assert (
        step.text == "regressed between transformers 4.52.4 and 4.53.0 (torch 2.13.0, peft 0.17.1)"
    )
    assert step.bisect == (
        "nox -s bisect -- --package transformers --good 4.52.4 --bad 4.53.0 "
        "--pin torch==2.13.0 --pin peft==0.17.1 "
        "--case 'test_lora.py::test_lora_gets_gradients[reentrant]'"
    )
    assert (step.good_combination, step.bad_combination, step.source) == (
        "tf4.52",
        "tf4.53",
        "neighbour",
    )
    [change] = judged.regressions
    assert change.source == "neighbour" and "passes in tf4.52" in change.text


def test_nearest_passing_neighbour_and_the_first_failing_version_bound_the_transition():
    stored = results(
        *(
            combination(f"tf{v}", versions(v), [case(CASE_A, outcome)])
            for v, outcome in [
                ("4.50.3", "passed"),
                ("4.51.3", "passed"),
                ("4.52.4", "failed"),
                ("4.53.0", "failed"),
            ]
        )
    )
    judged = judge(stored)
    step = judged.find("tf4.53.0").cases[0].transitions[0]
    # nearest good is 4.51.3 (not 4.50.3); the failure starts at 4.52.4, not 4.53.0
    assert (step.good, step.bad) == ("4.51.3", "4.52.4")
    assert step.bad_combination == "tf4.52.4"


def test_neighbour_must_differ_in_exactly_one_package():
    judged = judge(
        results(
            combination("a", versions("4.52.4", peft="0.15.2"), [case(CASE_A, "passed")]),
            combination("b", versions("4.53.0", peft="0.17.1"), [case(CASE_A, "failed")]),
        )
    )
    assert judged.find("b").cases[0].transitions == []
    assert verdicts(judged)["b"] == "FAILING"


def test_neighbours_need_the_same_python():
    judged = judge(
        results(
            combination("a", versions("4.52.4"), [case(CASE_A, "passed")], python="3.10.14"),
            combination("b", versions("4.53.0"), [case(CASE_A, "failed")]),
        )
    )
    assert verdicts(judged)["b"] == "FAILING"


def test_a_newer_passing_neighbour_means_fixed_upstream_not_regressed():
    judged = judge(
        results(
            combination("old", versions("4.52.4"), [case(CASE_A, "failed")]),
            combination("new", versions("4.53.0"), [case(CASE_A, "passed")]),
        )
    )
    step = judged.find("old").cases[0].transitions[0]
    assert step.direction == "fixed"
    assert step.text == "fixed between transformers 4.52.4 and 4.53.0 (torch 2.13.0, peft 0.17.1)"
    assert "--good 4.53.0 --bad 4.52.4 --find first-good" in step.bisect
    assert verdicts(judged)["old"] == "FAILING"


def test_a_flaky_or_known_broken_neighbour_is_no_good_end():
    judged = judge(
        results(
            combination(
                "a", versions("4.52.4"), [case(CASE_A, "flaky", attempts=["failed", "passed"])]
            ),
            combination("b", versions("4.53.0"), [case(CASE_A, "failed")]),
        )
    )
    assert verdicts(judged)["b"] == "FAILING"


def test_known_broken_cases_get_transitions_but_are_not_regressions():
    judged = judge(
        results(
            combination("tf4.52", versions("4.52.4"), [case(CASE_A, "passed")]),
            combination("tf4.53", versions("4.53.0"), [case(CASE_A, "failed")]),
        ),
        REGISTRY,
    )
    known = judged.find("tf4.53").cases[0]
    assert known.status == "known-broken"
    assert known.transitions[0].good == "4.52.4"
    assert verdicts(judged)["tf4.53"] == "KNOWN-BROKEN"
    assert judged.regressions == []


def test_one_regressed_case_outranks_other_failures_in_the_verdict():
    judged = judge(
        results(
            combination(
                "tf4.52", versions("4.52.4"), [case(CASE_A, "passed"), case(CASE_B, "failed")]
            ),
            combination(
                "tf4.53", versions("4.53.0"), [case(CASE_A, "failed"), case(CASE_B, "failed")]
            ),
        )
    )
    assert verdicts(judged) == {"tf4.52": "FAILING", "tf4.53": "REGRESSED"}
    assert judged.find("tf4.53").verdict_reason.startswith(CASE_A)


def test_a_baseline_regression_is_not_labelled_with_a_newer_neighbours_fix():
    before = results(combination("old", versions("4.52.4"), [case(CASE_A, "passed")]))
    now = results(
        combination("old", versions("4.52.4"), [case(CASE_A, "failed")]),
        combination("new", versions("4.53.0"), [case(CASE_A, "passed")]),
    )
    judged = judge(now, baseline=before)
    [change] = judged.regressions
    assert change.source == "baseline"
    assert change.transition is None  # the only transition is a 'fixed' one
    assert "same versions as then" in change.text
    assert judged.find("old").cases[0].transitions[0].direction == "fixed"  # still recorded


# --------------------------------------------------------------------------- held pins


def _gpu(combination_id: str, resolved: str, outcome: str, **requested: str):
    """A GPU-tier combination: torch from the runner's CUDA image, unsloth kept out."""
    stored = combination(
        combination_id,
        {"torch": "system", "transformers": "latest", "peft": "0.17.1", "unsloth": "null"},
        [case(CASE_A, outcome)],
    )
    stored.requested.update(requested)
    stored.resolved = {
        "torch": "2.11.0+cu128",
        "transformers": resolved,
        "peft": "0.17.1",
        "numpy": "2.4.6",
    }
    return stored


def test_held_pins_keep_system_and_null_as_requested_and_the_rest_exact():
    gpu = _gpu("gpu", "4.57.0", "passed")
    assert held_pins(gpu, "transformers") == ["torch=system", "peft==0.17.1", "unsloth=null"]
    # the moving package is never held; a local build stays exact
    local = combination("cpu", versions("4.57.0", torch="2.13.0"))
    local.resolved["torch"] = "2.13.0+cpu"
    assert held_pins(local, "peft") == ["torch==2.13.0+cpu", "transformers==4.57.0"]
    # every held pin is one the bisect's --pin accepts, meaning the same thing
    parsed = {p.package: (p.kind, p.spec) for p in map(parse_pin_option, held_pins(gpu, "peft"))}
    assert parsed == {
        "torch": (PinKind.SYSTEM, "system"),
        "transformers": (PinKind.EXACT, "4.57.0"),
        "unsloth": (PinKind.ABSENT, ""),
    }
    assert parse_pin_option("torch==2.13.0+cpu").spec == "2.13.0+cpu"


def test_held_pins_without_a_resolved_version_hold_the_request():
    stored = combination("c", {"torch": "2.13.0", "transformers": ">=4.50", "peft": "0.17.1"})
    stored.resolved = {"torch": "2.13.0+cpu"}  # transformers and peft missing
    assert held_pins(stored, "torch") == ["transformers>=4.50", "peft==0.17.1"]
    stored.requested["peft"] = "latest"
    assert held_pins(stored, "transformers") == ["torch==2.13.0+cpu", "peft=latest"]


def test_held_pins_hold_a_git_pin_at_its_url_not_its_dev_version():
    stored = _gpu(
        "main", "4.59.0.dev0", "passed", transformers="git+https://github.com/huggingface/t@main"
    )
    assert held_pins(stored, "peft") == [
        "torch=system",
        "transformers@git+https://github.com/huggingface/t@main",
        "unsloth=null",
    ]


def test_a_gpu_transition_bisects_with_the_runners_own_torch():
    judged = judge(results(_gpu("tf4.57", "4.57.0", "passed"), _gpu("tf4.58", "4.58.0", "failed")))
    step = judged.find("tf4.58").cases[0].transitions[0]
    assert step.pins == ["torch=system", "peft==0.17.1", "unsloth=null"]
    assert step.held == {"torch": "2.11.0+cu128", "peft": "0.17.1"}  # the text shows versions
    assert "--pin torch=system --pin peft==0.17.1 --pin unsloth=null --case" in step.bisect
    assert "cu128" not in step.bisect
    assert step.case == CASE_A


# --------------------------------------------------------------------------- own source

COMMIT_A, COMMIT_B = "abc1234" + "0" * 33, "def5678" + "0" * 33


def test_a_regression_whose_only_change_is_the_users_source_says_so():
    before = results(own_package("mine", "passed", own_source(COMMIT_A, False, "a")))
    now = results(own_package("mine", "failed", own_source(COMMIT_B, True, "b")))
    [change] = judge(now, baseline=before).regressions
    assert change.text.endswith("; your source changed: abc1234 -> def5678 + edits")
    assert "same versions as then" not in change.text and change.transition is None


def test_the_same_tree_is_still_same_versions_and_two_moves_blame_neither():
    same = own_source(COMMIT_A, False, "a")
    before = results(own_package("mine", "passed", same))
    [change] = judge(results(own_package("mine", "failed", same)), baseline=before).regressions
    assert "same versions as then" in change.text

    moved = own_package("mine", "failed", own_source(COMMIT_A, True, "c"))
    moved.resolved["torch"] = "2.13.1"  # torch moved too: no single step is the cause
    [change] = judge(results(moved), baseline=before).regressions
    assert change.transition is None
    assert change.text.endswith(
        "since then: torch 2.13.0 -> 2.13.1; your source changed: abc1234 -> abc1234 + edits"
    )
