"""docs/issue-repro.md's "One real exchange" is what the code does: its issue and command
plan the sweep it answers, its refusal is the parser's reply word for word, and its
answer is a bot comment the state reader accepts."""

from __future__ import annotations

import re
from pathlib import Path

from repromatrix.issue.command import Refusal, parse_comment
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.event import decide_comment
from repromatrix.issue.state import MARKER

DOC = Path(__file__).resolve().parents[2] / "docs" / "issue-repro.md"


def _section() -> str:
    text = DOC.read_text()
    return text.split("## One real exchange", 1)[1].split("\n## Reading a comment", 1)[0]


def _blocks() -> list[str]:
    return re.findall(r"(?ms)^````markdown\n(.*?)^````$", _section())


def test_the_readme_issue_and_command_plan_the_sweep_answered() -> None:
    issue, answer, _refusal = _blocks()
    payload = {
        "action": "created",
        "issue": {"number": 7, "body": issue},
        "comment": {
            "id": 1,
            "body": "/repromatrix sweep packaging 21.2..22.0",
            "author_association": "MEMBER",
            "user": {"login": "alice", "type": "User"},
        },
    }
    decided = decide_comment(payload, IssueSettings(), lambda _job, _repro: None)
    assert decided.job is not None
    job = decided.job
    assert (job.kind, job.package, job.start, job.end) == ("sweep", "packaging", "21.2", "22.0")
    assert decided.repro is not None and "LegacyVersion" in decided.repro.code
    assert answer.startswith(MARKER)
    assert "**packaging: 21.2–21.3 good · 22.0 bad (3 releases, 1 transition)**" in answer


def test_the_readme_refusal_is_the_parsers_reply() -> None:
    refusal = _blocks()[2]
    parsed = parse_comment("/repromatrix sweep packaging 22.0..21.2")
    assert isinstance(parsed, Refusal)
    assert refusal.strip() == parsed.reply().strip()
