"""The nightly watch: least recently watched first, at most the limit, and a flip said
once, in the words of the issue: "now passes with transformers 5.3.0 (fails with 5.2.0)"."""

from __future__ import annotations

from pathlib import Path

import yaml

from repromatrix.issue.config import IssueSettings
from repromatrix.issue.state import Observed, State
from repromatrix.issue.watch import candidates, flip, tonight, watch_job

BODY = "```python\n# repromatrix: transformers peft==0.17.1\nimport transformers\n```\n"


def _issues(*numbers: int) -> list[dict]:
    return [{"number": n, "body": BODY} for n in numbers]


def test_never_watched_first_then_the_oldest_and_no_more_than_the_limit() -> None:
    states = {
        1: State(last_watched="2026-11-24T03:41:00+00:00"),
        2: State(last_watched="2026-11-22T03:41:00+00:00"),
        3: State(),
        4: State(last_watched="2026-11-23T03:41:00+00:00"),
        5: State(),
    }
    found, notes = candidates(_issues(1, 2, 3, 4, 5), states)
    assert not notes
    assert [c.issue for c in tonight(found, 3)] == [3, 5, 2]
    assert [c.issue for c in tonight(found, 10)] == [3, 5, 2, 4, 1]
    assert tonight(found, 0) == []


def test_rotation_reaches_every_issue() -> None:
    # Five issues, two a night: after three nights each was watched at least once.
    states = {n: State() for n in range(1, 6)}
    watched: list[int] = []
    for night in range(3):
        found, _ = candidates(_issues(*states), states)
        for candidate in tonight(found, 2):
            watched.append(candidate.issue)
            states[candidate.issue] = State(last_watched=f"2026-11-{20 + night}T03:41:00+00:00")
    assert set(watched) == {1, 2, 3, 4, 5}


def test_issues_that_cannot_be_watched_say_why_and_take_no_turn() -> None:
    issues = [
        {"number": 1, "body": "no block"},
        {"number": 2, "body": "```python\n# repromatrix\nprint(1)\n```\n"},
        {"number": 3, "body": "```python\n# repromatrix\ndef (\n```\n"},
        {"title": "no number"},
        *_issues(4),
    ]
    found, notes = candidates(issues, {})
    assert [c.issue for c in found] == [4]
    assert notes[0].startswith("#1: not watched: no ```python block")
    assert "#2: not watched: its repro names no package" in notes[1]
    assert "#3: not watched: the repro block of the issue does not parse" in notes[2]
    assert notes[3] == "skipped an issue without a number"


def test_a_watch_floats_the_named_packages_and_holds_the_pinned() -> None:
    (candidate,), _ = candidates(_issues(9), {})
    job = watch_job(candidate, IssueSettings(pins=["torch==2.13.0"], minutes=5))
    assert job.kind == "watch" and job.comment is None and job.timeout == 300
    assert job.pins == ["torch==2.13.0", "transformers=latest", "peft==0.17.1"]
    assert job.watched == ["transformers", "peft"]


def _seen(outcome: str, **versions: str) -> Observed:
    return Observed(outcome=outcome, versions=versions)


def test_flips_are_named_with_the_versions_that_moved() -> None:
    bad = _seen("bad", transformers="5.2.0", peft="0.17.1")
    good = _seen("good", transformers="5.3.0", peft="0.17.1")
    assert flip(bad, good) == "now passes with transformers 5.3.0 (fails with 5.2.0)"
    again = _seen("bad", transformers="5.4.0", peft="0.17.1")
    assert flip(good, again) == "fails again with transformers 5.4.0 (passes with 5.3.0)"


def test_no_flip_without_a_change_of_outcome_or_on_an_untestable_night() -> None:
    bad = _seen("bad", transformers="5.2.0")
    assert flip(None, bad) is None  # the first night sets the baseline
    assert flip(bad, _seen("bad", transformers="5.3.0")) is None
    assert flip(bad, _seen("skip", transformers="5.3.0")) is None
    same = flip(bad, _seen("good", transformers="5.2.0"))  # nothing moved: all are named
    assert same == "now passes with transformers 5.2.0 (fails with 5.2.0)"


def test_the_settings_docs_show_are_settings() -> None:
    # docs/issue-repro.md's "Settings" block, read as the parse job reads the file.
    doc = (Path(__file__).resolve().parents[2] / "docs" / "issue-repro.md").read_text()
    section = doc[doc.index("## Settings") :]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    settings = IssueSettings(**yaml.safe_load(block)["issue"])
    assert settings.confirm == 2 and settings.watch.main == ["transformers"]
    assert settings.repositories == {"transformers": "https://github.com/huggingface/transformers"}
    job = watch_job(candidates(_issues(1), {})[0][0], settings)
    assert job.main == ["transformers"] and job.confirm == 2
