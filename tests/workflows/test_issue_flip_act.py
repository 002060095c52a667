"""The nightly watch's follow-up under act (issue-repro.yml's schedule): a flip
confirmed by reruns and named to its release and commit in the same run, a flaky repro
said as flaky, the culprit of two packages that moved, and main passing ahead of a
release, each asserted on the comment the post job made (inert, under GitHub's limit).

The packages are tiny and local (support/history.py): tinyfix's releases 1.0 (broken)
to 1.3 as wheels in the runner's wheelhouse, and its history as a git repository on
this machine (``repositories:`` in the issue config, a file:// URL the sandbox is shown
read-only) where the commit bisect builds each commit with hatchling from the
wheelhouse. The hunts run in the run job (no token, confined, the approved repro
only); the post job says what the run's artifact holds."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.history import (
    AHEAD,
    FIX_PR,
    OTHER,
    PACKAGE,
    History,
    history,
    repro,
)
from support.issue_act import ISSUE, TOKEN_NAMES, Issues, flips, watched
from support.nights import Scenario

from repromatrix.issue.state import Observed, read_state

pytestmark = [
    pytest.mark.act,
    pytest.mark.e2e,
    pytest.mark.usefixtures("confinable"),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

# Said by every run of the repro: the names of its environment (no token among them).
SEES = 'import os\n\nprint("ENVIRONMENT:", " ".join(sorted(os.environ)))\n'
LAST_WEEK = "2026-11-17T03:41:00+00:00"
# What a flip's reference looks like in an inert comment (github.markdown.escaped).
PR = f"(#\u200b{FIX_PR})"
# A repro that passes with the fixed releases on its first and third runs only: the
# night's check and its second rerun share the job's private /tmp, where it counts.
FLAKY = """\
```python
# repromatrix: tinyfix
import pathlib

import tinyfix

count = pathlib.Path("/tmp/flaky-runs")
runs = int(count.read_text()) if count.exists() else 0
count.write_text(str(runs + 1))
assert tinyfix.answer() == 42 and runs != 1, f"answer() is {tinyfix.answer()}, run {runs}"
```
"""


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, History]:
    """tinyfix's history (fixed before 1.1) and tinyahead's (fixed on main only)."""
    root = tmp_path_factory.mktemp("histories")
    root.chmod(0o755)  # the sandbox's user reads the repositories
    return {PACKAGE: history(root), AHEAD: history(root, AHEAD, ("1.0",))}


def _config(*, repositories: dict[str, str] | None = None, main: str | None = None) -> str:
    lines = ["issue:", "  confirm: 2"]
    if repositories:
        lines.append("  repositories:")
        lines += [f"    {name}: {url}" for name, url in repositories.items()]
    if main:
        lines.append(f"  watch:\n    main: [{main}]")
    return "\n".join(lines) + "\n"


def _block(code: str) -> str:
    return f"It breaks:\n\n```python\n{code}```\n"


def _bad(**versions: str) -> Observed:
    return Observed(outcome="bad", versions=versions, at=LAST_WEEK)


def test_a_flip_three_releases_later_is_named_to_its_release_and_commit_confirmed(
    scenario: Scenario, wheelhouse: Path, histories: dict[str, History]
) -> None:
    fix = histories[PACKAGE]
    issues = Issues(scenario, wheelhouse, config=_config(repositories={PACKAGE: fix.url}))
    watched(issues, _block(repro().replace("\n", "\n" + SEES, 1)), _bad(tinyfix="1.0"))

    run = issues.night()

    assert run.returncode == 0, run.tail()
    (said,) = flips(issues)
    print("FLIP:\n" + said)
    head = said.splitlines()[1]
    assert head.startswith(
        f"repromatrix watch: now passes: fixed in tinyfix 1.1, commit {fix.fix[:12]} {PR}, "
        "confirmed 3/3 ([run]("
    ), head
    assert re.search(r"\(\[run\]\(\S+/actions/runs/\d+\)\)$", head)
    sides = [line for line in said.splitlines() if line.startswith(("- fails:", "- passes:"))]
    assert sides == [
        "- fails: `repromatrix check --script repro.py --pin tinyfix==1.0`",
        "- passes: `repromatrix check --script repro.py --pin tinyfix==1.1`",
    ]
    assert "a bisect of tinyfix's 4 releases" in said and "commits between the two releases" in said
    assert "the commit: Fix the answer" in said and "a maintainer can close it" in said
    assert re.search(r"; \d+ cells, the reruns included\n", said)
    state = read_state(issues.bot_comment())
    assert state is not None and state.decisive is not None
    assert (state.decisive.outcome, state.decisive.versions) == ("good", {PACKAGE: "1.3"})
    # The hunts ran in the run job: their reports are its artifact's, and no run of the
    # repro (tonight's, the reruns, each hunt's cells) found a token in its environment.
    answers = run.artifact(f"issue-answers-{ISSUE}")
    assert list(answers.glob(f"{ISSUE}/named/*/bisect.json")), sorted(answers.rglob("*"))
    assert list(answers.glob(f"{ISSUE}/commits/*/bisect.json"))
    seen = [
        line.split(":", 1)[1].split()
        for log in answers.rglob("*.run.log")
        for line in log.read_text().splitlines()
        if line.startswith("ENVIRONMENT:")
    ]
    assert len(seen) >= 9 and all("PATH" in names for names in seen), len(seen)  # 9 cells
    assert not {name for names in seen for name in names if TOKEN_NAMES.match(name)}


def test_a_flaky_repro_is_said_once_as_flaky_not_as_a_flip(
    scenario: Scenario, wheelhouse: Path
) -> None:
    issues = Issues(scenario, wheelhouse, config=_config())
    watched(issues, FLAKY, _bad(tinyfix="1.0"))

    run = issues.night()

    assert run.returncode == 0, run.tail()
    (said,) = flips(issues)
    print("FLAKY:\n" + said)
    assert "repromatrix watch: flaky, not a flip: passes in 2 of 3 runs with tinyfix 1.3" in said
    assert "now passes" not in said and "fixed in" not in said
    state = read_state(issues.bot_comment())
    assert state is not None and state.flaky is not None and state.decisive is not None
    assert (state.decisive.outcome, state.decisive.versions) == ("bad", {PACKAGE: "1.0"})
    assert not list(run.artifact(f"issue-answers-{ISSUE}").glob("**/named"))  # no hunt
    first = state.last_watched

    again = issues.night()  # as flaky again (a fresh /tmp: good, bad, good)

    assert again.returncode == 0, again.tail()
    assert flips(issues) == [said]  # said once
    state = read_state(issues.bot_comment())
    assert state is not None and state.decisive is not None and state.flaky is not None
    assert state.decisive.outcome == "bad" and state.last_watched > first


def test_two_packages_moved_and_the_culprit_hunt_names_the_one(
    scenario: Scenario, wheelhouse: Path
) -> None:
    issues = Issues(scenario, wheelhouse, config=_config())
    watched(issues, _block(repro(PACKAGE, OTHER)), _bad(tinyfix="1.0", tinyother="1.0"))

    run = issues.night()

    assert run.returncode == 0, run.tail()
    (said,) = flips(issues)
    print("CULPRIT:\n" + said)
    assert "repromatrix watch: now passes: fixed in tinyfix 1.1, confirmed 3/3" in said
    assert "fixed in tinyother" not in said
    assert "a culprit hunt (ddmin, then a bisect of" in said
    assert "no repository known for tinyfix" in said  # no commit bisect: said why
    assert (
        "- fails: `repromatrix check --script repro.py --pin tinyfix==1.0 --pin tinyother==1.1`"
        in said
    )
    assert (
        "- passes: `repromatrix check --script repro.py --pin tinyfix==1.1 --pin tinyother==1.1`"
        in said
    )


def test_main_passing_ahead_of_a_release_is_said_once(
    scenario: Scenario, wheelhouse: Path, histories: dict[str, History]
) -> None:
    ahead = histories[AHEAD]
    config = _config(repositories={AHEAD: ahead.url}, main=AHEAD)
    issues = Issues(scenario, wheelhouse, config=config)
    watched(issues, _block(repro(AHEAD)), _bad(tinyahead="1.0"))

    first = issues.night()

    assert first.returncode == 0, first.tail()
    (said,) = flips(issues)
    print("MAIN AHEAD:\n" + said)
    assert (
        f"repromatrix watch: passes on tinyahead main since commit {ahead.fix[:12]} {PR}; "
        "not in a release yet (tinyahead 1.0 fails), confirmed 3/3 ([run]("
    ) in said
    state = read_state(issues.bot_comment())
    assert state is not None and state.ahead == {AHEAD: ahead.fix}

    second = issues.night()

    assert second.returncode == 0, second.tail()
    assert flips(issues) == [said]  # nothing new: main still passes, the release still fails
    state = read_state(issues.bot_comment())
    assert state is not None and state.ahead == {AHEAD: ahead.fix}
    assert state.last_watched > "2026-11-27"
