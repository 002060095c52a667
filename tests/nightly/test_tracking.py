"""The tracking issue across nights (nightly/tracking.py, pure): what is new, still
failing since when, fixed, possibly fixed, and the hunts' answers; when it opens,
stays, closes and reopens. The issue body is the only memory between nights."""

from __future__ import annotations

from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.nightly import tracking
from repromatrix.nightly.hunt_comment import answers_in, comment_body
from repromatrix.results import CaseResult, CombinationResult, Results

CASE = "test_a.py::test_x"
OTHER = "test_a.py::test_y"
BOT = {"login": "github-actions[bot]", "type": "Bot"}
# What the run saw, under the status the verdicts gave it.
OUTCOME = {"known-broken": "failed", "possibly-fixed": "passed"}


def night(date: str, *cases: tuple[str, str], install_error: bool = False) -> tracking.Night:
    combo = CombinationResult(
        id="tf-latest",
        tier="nightly",
        requested={"transformers": "latest"},
        resolved={"transformers": "4.58.0"},
        status="install-error" if install_error else "passed",
        message="No solution found: transformers==9 is unavailable" if install_error else "",
        cases=[
            CaseResult(id=c, status=s, outcome=OUTCOME.get(s, s), message=f"{s}!") for c, s in cases
        ],
    )
    return tracking.Night(Results(combinations=[combo]), date=date, run=f"https://g/runs/{date}")


def carried(update: tracking.Update) -> tracking.TrackingState | None:
    """What the next night reads back: the state inside the rendered body."""
    return tracking.read_state(update.body)


def test_three_nights_pass_regression_fixed() -> None:
    first = tracking.follow(None, night("2026-11-01", (CASE, "passed")))
    assert not first.needs_issue and not first.new

    second = tracking.follow(carried(first), night("2026-11-02", (CASE, "failed")))
    assert [f.key for f in second.new] == [f"tf-latest {CASE}"]
    assert second.needs_issue
    assert "## Nightly of 2026-11-02: 1 new, 0 still failing, 0 fixed" in second.body

    third = tracking.follow(carried(second), night("2026-11-03", (CASE, "failed")))
    assert not third.new and [f.since for f in third.still] == ["2026-11-02"]
    assert "[2026-11-02](https://g/runs/2026-11-02)" in third.body  # since, linked

    fourth = tracking.follow(carried(third), night("2026-11-04", (CASE, "passed")))
    assert not fourth.needs_issue
    assert [f.key for f in fourth.fixed] == [f"tf-latest {CASE}"]
    assert "### Fixed since the last run" in fourth.body
    closing = fourth.closing_comment(night("2026-11-04"))
    assert "back to pass / known-broken" in closing and CASE in closing

    # Broken again: new once more, and the reopening comment names it.
    fifth = tracking.follow(carried(fourth), night("2026-11-05", (CASE, "crashed")))
    assert [f.since for f in fifth.new] == ["2026-11-05"]
    assert "crashed" in fifth.reopening_comment(night("2026-11-05"))


def test_without_an_issue_last_nights_results_say_what_is_not_new() -> None:
    baseline = night("2026-11-01", (CASE, "failed")).results
    update = tracking.follow(
        None, night("2026-11-02", (CASE, "failed"), (OTHER, "error")), baseline=baseline
    )
    assert [f.case for f in update.new] == [OTHER]
    assert [(f.case, f.since) for f in update.still] == [(CASE, "")]
    assert "before tracking" in update.body


def test_known_broken_and_flaky_are_not_failures_a_broken_install_is() -> None:
    calm = tracking.follow(None, night("d", (CASE, "known-broken"), (OTHER, "flaky")))
    assert not calm.needs_issue
    broken = tracking.follow(None, night("d", install_error=True))
    [failure] = broken.new
    assert failure.case == tracking.INSTALL and "No solution found" in failure.message


def test_a_hunts_answer_comes_back_from_its_comment() -> None:
    hunt = tracking.Dispatch(
        key=f"bisect:transformers:4.57.0:4.58.0:tf-latest:{CASE}",
        workflow="bisect.yml",
        what="transformers 4.57.0..4.58.0 (first-bad)",
        combination="tf-latest",
        case=CASE,
        dispatched="2026-11-02",
    )
    second = tracking.follow(None, night("2026-11-02", (CASE, "failed")), hunts=[hunt])
    assert "waiting for its answer" in second.body
    report = (
        "### Bisect of transformers: first-bad\n\n"
        "**first bad: transformers 4.58.0 (last good: 4.57.0), 3 steps, 1m02s**\n"
    )
    body = comment_body(
        report, title="Bisect of x", run_url="https://g/runs/1", artifact="a", hunt=hunt.key
    )
    comment = {"body": body, "html_url": "https://g/issues/7#issuecomment-1", "user": BOT}
    # Anyone may comment; a forged answer (the bot's marker, another author) is not one.
    forged = {**comment, "user": {"login": "mallory", "type": "User"}, "html_url": "x"}
    unrelated = {"body": "**a person's bold words**", "user": BOT}
    answers = answers_in([unrelated, comment, forged], ["github-actions[bot]"])
    third = tracking.follow(carried(second), night("2026-11-03", (CASE, "failed")), answers=answers)
    [kept] = third.state.hunts
    assert kept.answer.startswith("first bad: transformers 4.58.0")
    assert "**first bad: transformers 4.58.0" in third.body
    assert "issuecomment-1" in third.body
    # Once the failure is fixed its hunts leave the issue with it.
    fourth = tracking.follow(carried(third), night("2026-11-04", (CASE, "passed")))
    assert fourth.state.hunts == []


def test_possibly_fixed_names_the_exact_registry_edit() -> None:
    tonight = night("d", (CASE, "possibly-fixed"))
    [combo] = tonight.results.combinations
    combo.cases[0].known_issue = {
        "case": CASE,
        "when": {"transformers": ">=4.46.3,<5.0.0"},
        "link": "https://github.com/huggingface/transformers/issues/1",
    }
    update = tracking.follow(None, tonight)
    assert update.needs_issue and not update.failing and not update.new
    [found] = update.possibly_fixed
    assert found.edit.splitlines()[-2:] == [
        '-  when: {transformers: ">=4.46.3,<5.0.0"}',
        '+  when: {transformers: ">=4.46.3,<4.58.0"}',
    ]
    assert "cases/known_issues.yaml" in update.body and "```diff" in update.body


def test_the_body_stays_under_githubs_limit_and_its_state_readable() -> None:
    cases = [(f"test_a.py::test_{i}[{'-->' * 3}]", "failed") for i in range(300)]
    update = tracking.follow(None, night("d", *cases), summary="x" * 200_000)
    assert len(update.body) <= COMMENT_LIMIT
    state = carried(update)
    assert state is not None and len(state.failures) == 300  # "-->" in ids kept the JSON whole


def test_an_unreadable_state_is_no_state() -> None:
    assert tracking.read_state("<!-- repromatrix:tracking {not json} -->") is None
    assert tracking.read_state('<!-- repromatrix:tracking {"schema": 99} -->') is None
    assert tracking.read_state("a body a person wrote") is None


def test_the_issue_names_the_source_tonight_built_the_users_package_from() -> None:
    tonight = night("2026-11-27", (CASE, "failed"))
    combo = tonight.results.combinations[0]
    combo.requested["mylib"], combo.resolved["mylib"] = ".", "0.1.0"
    combo.environment.sources = {
        "mylib": {"path": ".", "digest": "sha256:" + "d" * 64, "commit": "f" * 40, "dirty": True}
    }
    body = tracking.follow(None, tonight).body
    assert "Your source: `mylib . fffffff + edits, sha256:dddddddddddd`" in body.splitlines()[2:5]
    assert "Your source" not in tracking.follow(None, night("2026-11-27", (CASE, "failed"))).body
