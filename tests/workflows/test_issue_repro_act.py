"""issue-repro.yml, run for real under act with issue_comment and schedule payloads and
the gh test double as GitHub: what was replied, reacted and commented, and that the job
that runs the repro hands it no token.

The repros are real and small: packaging's LegacyVersion, removed in packaging 22.0
(pypa/packaging#407), and packaging.licenses, added in 24.2 — a cell of one pure-Python
package each, seconds of CPU."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support.act import REPO, ActRun, act_run
from support.gh_double import BOT_USER
from support.nights import Scenario
from support.pip import PIP

from repromatrix.issue.state import MARKER, Observed, State, read_state, render

pytestmark = [pytest.mark.act, pytest.mark.e2e]

ISSUE = 7
# Prints the names of its environment (the test asserts no token is among them), then
# fails where LegacyVersion is gone.
LEGACY_REPRO = """\
`LegacyVersion` is gone:

```python
# repromatrix
import os

print("ENVIRONMENT:", " ".join(sorted(os.environ)))
from packaging.version import LegacyVersion

print(LegacyVersion("not-a-version"))
```
"""
LICENSES_REPRO = """\
```python
# repromatrix: packaging
from packaging.licenses import canonicalize_license_expression

assert canonicalize_license_expression("mit") == "MIT"
```
"""
TOKEN_NAMES = re.compile(r"^(GH_TOKEN|GITHUB_TOKEN|ACTIONS_\w+|\w*SECRET\w*)$")


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runner's only package index, made once: repromatrix built from this checkout
    with its dependencies, and the packaging releases the scenarios sweep. Offline and
    fixed: the newest packaging is the one repromatrix itself installs, whatever PyPI
    publishes later, and no run pays for downloads or a build."""
    house = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run([*PIP, "wheel", "-w", str(house), str(REPO)], check=True)
    # Every cell has the harness's runner (environment.store.CELL_TOOLING): pytest and
    # pytest-xdist, with their dependencies; and pytest 8.3.5 too, which (unlike 9) takes
    # a packaging older than 24, so that a cell can hold packaging 21.
    tooling = ["pytest", "pytest-xdist", "pytest==8.3.5"]
    for requirement in tooling:
        subprocess.run([*PIP, "download", "-d", str(house), requirement], check=True)
    releases = ["packaging==21.2", "packaging==21.3", "packaging==22.0"]
    for release in releases:
        subprocess.run([*PIP, "download", "-d", str(house), release], check=True)  # + pyparsing
    return house


class Issues:
    """A scenario repository with issues, and the workflow run on one event."""

    def __init__(self, scenario: Scenario, house: Path, config: str | None = None) -> None:
        # The workflow's default source, `repromatrix`, found in the wheelhouse.
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
            "repository": {"full_name": "owner/repo"},
        }
        return self._run("issue_comment", payload)

    def night(self) -> ActRun:
        return self._run("schedule", {"repository": {"full_name": "owner/repo"}})

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


@pytest.fixture
def issues(scenario: Scenario, wheelhouse: Path) -> Issues:
    return Issues(scenario, wheelhouse)


def test_a_trusted_sweep_answers_in_the_bot_comment_and_the_repro_sees_no_token(
    issues: Issues,
) -> None:
    run = issues.comment("/repromatrix sweep packaging 21.2..22.0", issue_body=LEGACY_REPRO)

    assert run.returncode == 0, run.tail()
    assert issues.gh.reactions() == [(issues.asked, "eyes"), (issues.asked, "rocket")]
    answer = issues.bot_comment()
    print("BOT COMMENT:\n" + answer)
    assert "packaging: 21.2–21.3 good · 22.0 bad (3 releases, 1 transition)" in answer
    assert "ImportError: cannot import name 'LegacyVersion'" in answer
    assert "- environment: Python 3.11" in answer and "packaging 22.0" in answer
    assert "[run](" in answer and read_state(answer).answers[0].title.startswith("/repromatrix")
    answers = run.artifact("issue-answers")
    assert (answers / str(ISSUE) / "answer.json").is_file()
    assert list(answers.glob(f"{ISSUE}/*/reproduce-22.0.py"))
    logs = list(answers.glob(f"{ISSUE}/*/steps/*.run.log"))
    seen = [
        line.split(":", 1)[1].split()
        for log in logs
        for line in log.read_text().splitlines()
        if line.startswith("ENVIRONMENT:")
    ]
    assert len(seen) == 3 and all("PATH" in names for names in seen)
    leaked = {name for names in seen for name in names if TOKEN_NAMES.match(name)}
    assert not leaked, leaked


def test_an_untrusted_author_is_told_and_nothing_runs(issues: Issues) -> None:
    run = issues.comment(
        "/repromatrix check --pin packaging==21.3", association="NONE", issue_body=LEGACY_REPRO
    )

    assert run.returncode == 0, run.tail()
    (reply,) = issues.replies()
    assert "@alice is not among the authors trusted to run code here" in reply
    assert "A maintainer can start it by commenting the same command." in reply
    assert issues.gh.reactions() == [(issues.asked, "confused")]
    assert "issue-answers" not in run.artifact_names()


def test_an_unparsable_command_gets_what_is_wrong_and_the_syntax(issues: Issues) -> None:
    run = issues.comment("/repromatrix sweep packaging 22.0..21.2", issue_body=LEGACY_REPRO)

    assert run.returncode == 0, run.tail()
    (reply,) = issues.replies()
    print("REFUSAL:\n" + reply)
    assert "the range '22.0..21.2' is reversed; write the older version first: 21.2..22.0" in reply
    assert "/repromatrix sweep PACKAGE FROM..TO" in reply
    assert issues.gh.reactions() == [(issues.asked, "confused")]


def test_a_comment_without_a_repro_block_is_refused(issues: Issues) -> None:
    run = issues.comment("/repromatrix check --pin packaging==21.3", issue_body="It fails.")

    assert run.returncode == 0, run.tail()
    (reply,) = issues.replies()
    assert "no repro: neither the comment nor the issue has a ```python block" in reply
    assert issues.gh.reactions() == [(issues.asked, "confused")]


def test_a_watched_issue_that_flips_is_said_once(scenario: Scenario, wheelhouse: Path) -> None:
    issues = Issues(scenario, wheelhouse, config="issue:\n  watch_limit: 1\n")
    gh = issues.gh
    gh.add_issue(ISSUE, title="canonicalize_license_expression missing", body=LICENSES_REPRO,
                 labels=("repro",))  # fmt: skip
    gh.add_issue(8, title="watched last night", body=LICENSES_REPRO, labels=("repro",))
    failing = Observed(outcome="bad", versions={"packaging": "24.1"}, at="2026-11-23")
    last_week = State(last_watched="2026-11-17T03:41:00+00:00", watch=failing, decisive=failing)
    yesterday = State(last_watched="2026-11-24T03:41:00+00:00", watch=failing, decisive=failing)
    gh.add_comment(ISSUE, render(last_week), login=BOT_USER["login"])
    gh.add_comment(8, render(yesterday), login=BOT_USER["login"])

    run = issues.night()

    assert run.returncode == 0, run.tail()
    flips = [b for b in issues.replies() if "repromatrix watch:" in b]
    assert len(flips) == 1
    assert re.search(r"now passes with packaging \d+\.\d+(\.\d+)? \(fails with 24\.1\)", flips[0])
    state = read_state(issues.bot_comment())
    assert state.decisive is not None and state.decisive.outcome == "good"
    assert state.last_watched > "2026-11-24"
    assert "- issue-repro/ack" not in run.log and "[issue-repro/ack" not in run.log  # no comment
    other = [c["body"] for c in gh.comments(8)]
    assert other == [render(yesterday)]  # the limit: issue 8 waits for a later night
