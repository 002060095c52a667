"""What a night of the watch says (issue/flips.py): a flip confirmed in every run and
named to its release and commit, with a repro line per side that the command line
parses; a flip that does not hold said once as flaky; main ahead of a release said once,
then carried by the release's flip; closing proposed, or done where configured; a kept
case's registry mark. Every comment inert and within GitHub's limit."""

from __future__ import annotations

import shlex

import pytest

from repromatrix.cli.app import build_parser
from repromatrix.github.inert import problems
from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.issue.answer import Commit, Named, OnMain, Result
from repromatrix.issue.flips import FLIP_MARKER, night, repro_line
from repromatrix.issue.plan import Job
from repromatrix.issue.state import Kept, Observed, State

RUN = "https://github.com/o/r/actions/runs/9"
FIX = "3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39"
REPO = "https://github.com/huggingface/transformers"


def _job(**more) -> Job:
    return Job(
        issue=7, kind="watch", line="nightly watch", timeout=60, confirm=2,
        pins=["torch==2.13.0", "transformers=latest"], watched=["transformers"],
        repositories={"transformers": REPO}, **more,
    )  # fmt: skip


def _state(outcome: str = "bad", version: str = "5.2.0", **more) -> State:
    seen = Observed(outcome=outcome, versions={"transformers": version}, at="2026-11-20")
    return State(decisive=seen, watch=seen, **more)


def _result(outcome: str, version: str, runs: list[str], **more) -> Result:
    return Result(
        issue=7, kind="watch", status="done", outcome=outcome,
        versions={"transformers": version}, runs=runs, **more,
    )  # fmt: skip


def _named() -> Named:
    return Named(
        how="bisect", package="transformers", before="5.2.0", release="5.3.0", releases=4,
        commit=Commit(sha=FIX, subject="Fix checkpointing (#41234)", pr=41234), commits=9,
        old={"transformers": "5.2.0"}, new={"transformers": "5.3.0"}, cells=11,
    )  # fmt: skip


def _inert(comment: str) -> None:
    """Read as GitHub would: no mention, reference, image or HTML; links only ours."""
    assert len(comment) <= COMMENT_LIMIT
    body = comment.removeprefix(FLIP_MARKER)
    assert [kind for kind in problems(body) if kind != "link"] == [], problems(body)


def test_a_confirmed_flip_names_its_release_and_commit_with_a_repro_line_per_side() -> None:
    told = night(_state(), _job(), _result("good", "5.5.0", ["good"] * 3, named=_named()), "t", RUN)

    (comment,) = told.comments
    print(comment)
    head = comment.splitlines()[1]
    assert head.startswith(
        "repromatrix watch: now passes: fixed in transformers 5.3.0, commit "
        f"[3f1c2a9e8b7d]({REPO}/commit/{FIX}) ([#\u200b41234]({REPO}/pull/41234)), confirmed 3/3"
    ), head
    assert f"([run]({RUN}))" in head
    fails = "repromatrix check --script repro.py --pin torch==2.13.0 --pin transformers==5.2.0"
    passes = fails.replace("5.2.0", "5.3.0")
    assert f"- fails: `{fails}`" in comment and f"- passes: `{passes}`" in comment
    assert "a maintainer can close it" in comment
    assert told.state.decisive is not None and told.state.decisive.outcome == "good"
    assert told.close is False and told.mark is None
    _inert(comment)
    for line in (fails, passes):  # the command line takes both
        args = build_parser().parse_args(shlex.split(line)[1:])
        assert args.command == "check" and args.pin[-1].startswith("transformers==")


def test_a_flip_that_does_not_hold_is_flaky_said_once_and_measured_from_the_same_night() -> None:
    state = _state()
    flaky = _result("good", "5.5.0", ["good", "bad", "good"])
    first = night(state, _job(), flaky, "t1", RUN)
    (comment,) = first.comments
    assert "flaky, not a flip: passes in 2 of 3 runs with transformers 5.5.0" in comment
    assert "now passes" not in comment
    _inert(comment)
    assert first.state.decisive == state.decisive  # no flip: measured from the same night
    again = night(first.state, _job(), flaky, "t2", RUN)
    assert again.comments == []  # said once
    held = night(again.state, _job(), _result("good", "5.5.0", ["good"] * 3), "t3", RUN)
    assert held.comments[0].splitlines()[1].startswith("repromatrix watch: now passes")
    assert held.state.flaky is None


def test_main_ahead_of_a_release_is_said_once_then_the_release_carries_it() -> None:
    ahead = OnMain(package="transformers", commit=Commit(sha="a" * 40), outcome="good",
                   since=Commit(sha=FIX, subject="Fix checkpointing (#41234)", pr=41234),
                   runs=["good"] * 3)  # fmt: skip
    job = _job(main=["transformers"])
    one = night(_state(), job, _result("bad", "5.2.0", ["bad"], main=[ahead]), "t1", RUN)
    (said,) = one.comments
    assert said.splitlines()[1].startswith(
        f"repromatrix watch: passes on transformers main since commit [3f1c2a9e8b7d]({REPO}/"
        f"commit/{FIX}) ([#\u200b41234]({REPO}/pull/41234)); not in a release yet"
    )
    assert "- the commit: Fix checkpointing (#\u200b41234)" in said and "5.2.0 fails" in said
    _inert(said)
    assert one.state.ahead == {"transformers": FIX}
    still = OnMain(
        package="transformers", commit=Commit(sha="b" * 40), outcome="good", runs=["good"]
    )
    two = night(one.state, job, _result("bad", "5.2.0", ["bad"], main=[still]), "t2", RUN)
    assert two.comments == []  # said once
    three = night(
        two.state,
        job,
        _result("good", "5.3.0", ["good"] * 3, named=_named(), main=[still]),
        "t3",
        RUN,
    )
    (flip,) = three.comments
    assert (
        "transformers main: passed since commit 3f1c2a9e8b7d (said before); transformers "
        "5.3.0 carries it now" in flip
    )
    assert three.state.ahead == {}


def test_closing_is_done_only_where_configured_and_a_kept_case_gets_its_mark() -> None:
    kept = Kept(case="issues/test_issue_7.py::test_issue_7", sha256="0" * 64)
    result = _result("good", "5.5.0", ["good"] * 3, named=_named())
    told = night(_state(kept=kept), _job(close=True), result, "t", RUN)
    assert told.close is True
    assert "the watch closes the issue" in told.comments[0]
    assert told.mark is not None and told.mark.case == kept.case
    assert told.mark.fixed_in == "transformers 5.3.0, commit 3f1c2a9e8b7d (#41234)"
    prerelease = _result("good", "5.5.0rc1", ["good"] * 3)
    assert night(_state(), _job(close=True), prerelease, "t", RUN).close is False


def test_a_regression_says_broken_in_and_proposes_nothing() -> None:
    moved = {"old": {"transformers": "5.3.0"}, "new": {"transformers": "5.4.0"}}
    named = _named().model_copy(update={**moved, "before": "5.3.0", "release": "5.4.0"})
    told = night(
        _state("good", "5.3.0"), _job(), _result("bad", "5.6.0", ["bad"] * 3, named=named), "t", RUN
    )
    (comment,) = told.comments
    assert "repromatrix watch: fails again: broken in transformers 5.4.0, commit" in comment
    assert "- passes: `" in comment and "- fails: `" in comment
    assert "close" not in comment and told.close is False


@pytest.mark.parametrize(
    "subject",
    [
        "@alice see ![x](https://evil.example/x.png) <img src=x> #12 [a](https://evil.example)",
        "``` then a fence\n# heading",
    ],
)
def test_whatever_a_run_job_names_the_comment_stays_inert(subject: str) -> None:
    named = _named()
    named.commit = Commit(sha=FIX, subject=subject)
    named.note = subject
    told = night(_state(), _job(), _result("good", "5.5.0", ["good"] * 3, named=named), "t", RUN)
    for comment in told.comments:
        _inert(comment)
        assert "@alice" not in comment and "https://evil.example" not in comment.replace("`", "")


def test_the_repro_line_holds_the_jobs_pins_and_the_sides_versions() -> None:
    line = repro_line(_job(), {"transformers": "5.3.0", "peft": "0.17.1"})
    assert line == (
        "repromatrix check --script repro.py --pin torch==2.13.0 --pin transformers==5.3.0 "
        "--pin peft==0.17.1"
    )
