"""Kept issue repros in the nightly (nightly/kept.py): their FIXED and REGRESSED reach
the issue each came from as well as the tracking issue, once per transition, inert."""

from __future__ import annotations

from pathlib import Path

from repromatrix.github.inert import problems
from repromatrix.nightly import kept, tracking
from repromatrix.nightly.follow import FollowOptions, follow_nightly
from repromatrix.results import CaseResult, CombinationResult, Results

KEPT = "issues/test_issue_7.py::test_issue_7"
PLAIN = "test_a.py::test_x"
OUTCOME = {"known-broken": "failed", "possibly-fixed": "passed"}
RUN = "https://github.com/owner/repo/actions/runs/5"


def results(date: str, *cases: tuple[str, str]) -> Results:
    combo = CombinationResult(
        id="pk-latest", tier="nightly", requested={"packaging": "latest"},
        resolved={"packaging": "24.2"}, status="passed",
        cases=[CaseResult(id=c, status=s, outcome=OUTCOME.get(s, s), message="@alice <b>x</b>")
               for c, s in cases],
    )  # fmt: skip
    found = Results(combinations=[combo])
    found.run.started = f"{date}T03:00:00+00:00"
    return found


def follow(before: tracking.Update | None, tonight: Results) -> tracking.Update:
    state = tracking.read_state(before.body) if before else None
    return tracking.follow(state, tracking.Night(tonight, date="d", run=RUN))


def test_a_kept_case_is_said_on_its_issue_when_it_regresses_and_when_it_is_fixed() -> None:
    assert kept.kept_issue(KEPT) == 7 and kept.kept_issue(PLAIN) is None
    assert kept.kept_issue("issues/test_issue_7.py::test_issue_8") is None

    first = follow(None, results("2026-11-25", (KEPT, "passed"), (PLAIN, "passed")))
    broke = follow(first, results("2026-11-26", (KEPT, "failed"), (PLAIN, "failed")))
    (told,) = kept.transitions(broke, None, "2026-11-26", RUN)
    assert told.issue == 7 and "- REGRESSED: `issues/test_issue_7.py::test_issue_7`" in told.body
    assert "test_a.py" not in told.body  # a plain case is the tracking issue's alone
    assert problems(told.body.removeprefix(kept.MARKER), links={RUN}) == []  # inert
    still = follow(broke, results("2026-11-27", (KEPT, "failed")))
    assert kept.transitions(still, None, "2026-11-27", RUN) == []  # said once
    fixed = follow(still, results("2026-11-28", (KEPT, "passed")))
    (told,) = kept.transitions(fixed, None, "2026-11-28", RUN)
    assert "- FIXED: `issues/test_issue_7.py::test_issue_7` passes again" in told.body


def _possibly(date: str) -> Results:
    found = results(date, (KEPT, "possibly-fixed"))
    entry = {"case": KEPT, "when": {"packaging": ">=22.0"}, "link": "https://x/issues/7"}
    found.combinations[0].cases[0].known_issue = entry
    return found


def test_a_known_broken_kept_case_passing_in_its_range_is_said_once() -> None:
    last_night = results("2026-11-26", (KEPT, "known-broken"))
    update = follow(None, _possibly("2026-11-27"))
    (told,) = kept.transitions(update, last_night, "2026-11-27", RUN)
    assert "possibly fixed (the registry entry may be out of date)" in told.body
    assert kept.transitions(update, _possibly("2026-11-26"), "2026-11-27", RUN) == []


class GitHub:
    """The nightly's client, as far as following a night needs it."""

    def __init__(self) -> None:
        self.posted: list[tuple[int, str]] = []

    def issues(self, label: str) -> list[dict]:
        return []

    def create_issue(self, *, title: str, label: str, body: Path) -> int:
        return 1

    def post(self, number: int, body: Path) -> None:
        self.posted.append((number, body.read_text()))


def test_the_nightly_posts_a_kept_cases_regression_on_its_issue(tmp_path: Path) -> None:
    client, summary = GitHub(), tmp_path / "summary.md"
    summary.write_text("")
    options = FollowOptions(tonight=results("2026-11-27", (KEPT, "failed")), folder=tmp_path,
                            baseline=results("2026-11-26", (KEPT, "passed")), summary=summary,
                            run=RUN)  # fmt: skip
    said: list[str] = []
    followed = follow_nightly(options, client, said.append)  # type: ignore[arg-type]
    assert followed.issue == 1 and followed.gh_error == ""
    ((issue, body),) = client.posted
    assert issue == 7 and "REGRESSED" in body and "told #7: its kept case changed tonight" in said


def test_a_kept_case_s_comment_too_long_for_github_is_cut_by_the_inert_renderer() -> None:
    # 40 parametrised variants of the kept case with ids of 3,000 characters: over
    # GitHub's limit as written, so the one renderer cuts it and says so.
    variants = [f"{KEPT}[{'x' * 3000}{n}]" for n in range(40)]
    first = follow(None, results("2026-11-25", *((c, "passed") for c in variants)))
    broke = follow(first, results("2026-11-26", *((c, "failed") for c in variants)))
    (told,) = kept.transitions(broke, None, "2026-11-26", RUN)
    assert len(told.body) <= kept.COMMENT_LIMIT and told.body.startswith(kept.MARKER + "\n")
    assert told.body.rstrip().endswith("_… cut (the tracking issue lists everything)._")
    assert problems(told.body.removeprefix(kept.MARKER), links={RUN}) == []
