"""The issue bot's act scenarios, shared by their test files (tests/workflows/): the
runner's offline wheelhouse, a scenario repository with issues run on one event, and
the checks every comment the bot posts must pass (inert, under GitHub's limit)."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from repromatrix.github.inert import problems
from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.issue.flips import FLIP_MARKER
from repromatrix.issue.repro import code_digest, find_repro
from repromatrix.issue.state import MARKER, Approval, Observed, State, render
from support.act import REPO, ActRun, act_run
from support.gh_double import BOT_USER
from support.history import AHEAD, PACKAGE, RELEASES, other_wheels, release_wheels
from support.nights import Scenario
from support.pip import PIP

ISSUE = 7
# The event's repository as GitHub sends it (act would make the default branch master).
REPOSITORY = {"full_name": "owner/repo", "default_branch": "main"}
# What a repro must never find in its environment: a token of any kind.
TOKEN_NAMES = re.compile(r"^(GH_TOKEN|GITHUB_TOKEN|ACTIONS_\w+|\w*SECRET\w*)$")


def make_wheelhouse(house: Path) -> Path:
    """The runner's only package index: repromatrix built from this checkout with its
    dependencies, the packaging releases the scenarios sweep, and the tiny packages of
    the watch's follow-up (support/history.py: tinyfix 1.0-1.3, tinyother 1.0-1.1,
    tinyahead 1.0). Offline and fixed: the newest packaging is the one repromatrix
    itself installs, whatever PyPI publishes later, and no run pays for downloads or a
    build (but a commit's, from a local repository, with hatchling from here)."""
    house.chmod(0o755)  # the repro's own user (the sandbox's) reads the runner's index
    subprocess.run([*PIP, "wheel", "-w", str(house), str(REPO)], check=True)
    # The workflow's default source is `.` (this checkout): pip builds it with hatchling.
    subprocess.run([*PIP, "download", "-d", str(house), "hatchling>=1.21"], check=True)
    # Every cell has the harness's runner (environment.store.CELL_TOOLING): pytest and
    # pytest-xdist, with their dependencies; and pytest 8.3.5 too, which (unlike 9) takes
    # a packaging older than 24, so that a cell can hold packaging 21.
    tooling = ["pytest", "pytest-xdist", "pytest==8.3.5"]
    for requirement in tooling:
        subprocess.run([*PIP, "download", "-d", str(house), requirement], check=True)
    releases = ["packaging==21.2", "packaging==21.3", "packaging==22.0"]
    for release in releases:
        subprocess.run([*PIP, "download", "-d", str(house), release], check=True)  # + pyparsing
    release_wheels(house, RELEASES, PACKAGE)
    release_wheels(house, ("1.0",), AHEAD)
    other_wheels(house, ("1.0", "1.1"))
    return house


class Issues:
    """A scenario repository with issues, and the workflow run on one event."""

    def __init__(self, scenario: Scenario, house: Path, config: str | None = None) -> None:
        # The workflow's default source, `.` (repromatrix's own repository), its
        # dependencies from the lock in .github/repromatrix (uv's cache).
        self.variables: dict[str, str] = {}
        self.scenario = scenario
        self.gh = scenario.gh
        if config is not None:
            path = scenario.repo / ".github" / "repromatrix.yml"
            path.write_text(config)
        scenario.write(message="issue scenario")  # commits (act runs what is committed)
        self.env = {**scenario.env, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house)}

    def comment(self, body: str, *, association: str = "OWNER", issue_body: str = "") -> ActRun:
        if not any(i["number"] == ISSUE for i in self.gh.issues()):
            self.gh.add_issue(ISSUE, title="LegacyVersion is gone", body=issue_body)
        comment = self.gh.add_comment(ISSUE, body, login="alice", association=association)
        self.asked = comment
        payload = {
            "action": "created",
            "issue": {"number": ISSUE, "title": "LegacyVersion is gone", "body": issue_body},
            "comment": {
                "id": comment,
                "body": body,
                "author_association": association,
                "user": {"login": "alice", "type": "User"},
            },
            "repository": REPOSITORY,
        }
        return self._run("issue_comment", payload)

    def label(self, sender: str, *, issue_body: str) -> ActRun:
        """``sender`` adds the watch's label to the issue (an issues: labeled event)."""
        if not any(i["number"] == ISSUE for i in self.gh.issues()):
            self.gh.add_issue(ISSUE, title="hostile", body=issue_body, labels=("repro",))
        payload = {
            "action": "labeled",
            "label": {"name": "repro"},
            "sender": {"login": sender, "type": "User"},
            "issue": {"number": ISSUE, "body": issue_body, "user": {"login": "mallory"}},
            "repository": REPOSITORY,
        }
        return self._run("issues", payload)

    def night(self) -> ActRun:
        return self._run("schedule", {"repository": REPOSITORY})

    def _run(self, event: str, payload: dict[str, Any]) -> ActRun:
        path = self.scenario.work / f"{event}-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(payload))
        started = time.monotonic()
        run = act_run(
            self.scenario.repo,
            workflow="issue-repro.yml",
            event=event,
            event_path=path,
            variables=self.variables,
            gh=self.gh,
            work=self.scenario.work,
            env=self.env,
            timeout=400,
        )
        print(f"act {event}: {time.monotonic() - started:.0f} s")
        return run

    def replies(self) -> list[str]:
        return [c["body"] for c in self.gh.comments(ISSUE) if c["user"] == BOT_USER]

    def bot_comment(self) -> str:
        (found,) = [b for b in self.replies() if b.startswith(MARKER)]
        return found


def watched(
    issues: Issues, body: str, decisive: Observed, *, issue: int = ISSUE, **state: Any
) -> State:
    """An issue with the watch's label whose repro a maintainer approved, watched last
    week with ``decisive`` its last decisive night: its bot comment, as the post job
    left it."""
    repro = find_repro(body, "issue")
    assert repro is not None
    approved = Approval(sha256=code_digest(repro.code), by="maintainer", at="2026-11-16")
    remembered = State(last_watched="2026-11-17T03:41:00+00:00", watch=decisive,
                       decisive=decisive, approved=approved, **state)  # fmt: skip
    issues.gh.add_issue(issue, title=f"watched issue {issue}", body=body, labels=("repro",))
    issues.gh.add_comment(issue, render(remembered), login=BOT_USER["login"])
    return remembered


# The one link a comment of the bot's may hold: the workflow run's.
RUN_LINK = re.compile(r"\]\((https?://[^\s)]+/actions/runs/\d+)\)")


def posted(issues: Issues, issue: int = ISSUE) -> list[str]:
    """Every comment the bot made on ``issue``, each checked as GitHub would render it:
    inert (github.inert.problems: no mention, reference, HTML, image, nor a link but the
    run's) once the bot's own marker lines are set aside, and under GitHub's limit."""
    bodies = [c["body"] for c in issues.gh.comments(issue) if c["user"] == BOT_USER]
    for body in bodies:
        assert len(body) <= COMMENT_LIMIT, len(body)
        shown = body
        if shown.startswith(MARKER):  # the bot comment: its markers hold its state
            shown = shown.split("\n", 1)[1].rstrip().rsplit("\n", 1)[0]
        shown = shown.removeprefix(FLIP_MARKER)
        links = set(RUN_LINK.findall(shown))
        assert problems(shown, links=links) == [], body
    return bodies


def flips(issues: Issues, issue: int = ISSUE) -> list[str]:
    """What the watch said on ``issue`` in comments of its own (flips, flaky, main)."""
    return [b for b in posted(issues, issue) if b.startswith(FLIP_MARKER)]
