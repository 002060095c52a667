"""What the ``run`` job hands the ``post`` job: answers/<issue>/answer.json.

The run job executed code from the internet, so the post job trusts nothing in this
file beyond its shape: it is validated here (types, lengths), the issue and comment
to answer come from the plan (the parse job's artifact), and its text is only ever
rendered into a comment, never run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repromatrix.results import write_json_atomic

ANSWER_FILE = "answer.json"
MAX_MARKDOWN = 60_000


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    kind: Literal["sweep", "bisect", "check", "watch"]
    status: Literal["done", "refused", "timed-out", "failed"]
    headline: str = Field("", max_length=2000)  # one line: the verdict
    markdown: str = Field("", max_length=MAX_MARKDOWN)  # the report (sweep.md, bisect.md, ...)
    outcome: Literal["good", "bad", "skip"] | None = None  # check and watch
    versions: dict[str, str] = Field(default_factory=dict, max_length=50)  # followed packages
    seconds: float = 0.0


def answer_folder(root: Path, issue: int) -> Path:
    return root / str(issue)


def write_result(root: Path, result: Result) -> Path:
    folder = answer_folder(root, result.issue)
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / ANSWER_FILE, result.model_dump(mode="json"))
    return folder


def read_result(root: Path, issue: int) -> Result | str:
    """The answer for ``issue``, or why there is none (in words for the comment)."""
    path = answer_folder(root, issue) / ANSWER_FILE
    try:
        if path.is_symlink() or not path.is_file():
            return "the run left no answer"
        if path.stat().st_size > 4 * MAX_MARKDOWN:
            return "the run's answer is too large to read"
        result = Result.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValidationError):
        return "the run's answer could not be read"
    if result.issue != issue:
        return "the run's answer is for another issue"
    return result
