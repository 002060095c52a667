"""What a ``run`` job hands the ``post`` job: answers/<issue>/answer.json, uploaded as
the artifact ``issue-answers-<issue>`` (one run job per issue), which post downloads
into answers/issue-answers-<issue>/.

The run job executed code from the internet, so the post job trusts nothing in this
file beyond its shape: it is validated here (types, lengths; the followed packages'
versions are package names and PEP 440 versions, as the flip comment says them), an
issue's answer is read only from its own artifact's folder, the issue and comment to
answer come from the plan (the parse job's artifact, checked against its digest), and
its text is made inert and rendered into a comment, never run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repromatrix.github.markdown import code_span
from repromatrix.issue.plan import JobKind
from repromatrix.redact import redact_text
from repromatrix.results import write_json_atomic

ANSWER_FILE = "answer.json"
MAX_MARKDOWN = 60_000
_PACKAGE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
_SHA = r"^[0-9a-f]{7,40}$"  # a git commit, as the flip comment names it
Outcome = Literal["good", "bad", "skip"]


def _checked_versions(value: dict[str, str]) -> dict[str, str]:
    """Package names and PEP 440 versions only: the flip comment says them."""
    for name, version in value.items():
        if not _PACKAGE.match(name) or len(version) > 60:
            raise ValueError(f"{name[:40]!r}: not a package name and version")
        try:
            Version(version)
        except InvalidVersion:
            raise ValueError(f"{name}: {version[:40]!r} is not a version") from None
    return value


def _checked_version(value: str | None) -> str | None:
    if value is not None:
        _checked_versions({"release": value})
    return value


class Commit(BaseModel):
    """A commit a hunt named: its sha, its subject's first line, the PR it names."""

    model_config = ConfigDict(extra="forbid")

    sha: str = Field(pattern=_SHA)
    subject: str = Field("", max_length=300)
    pr: int | None = Field(None, ge=1, le=10**9)


class Named(BaseModel):
    """Where a confirmed flip changed (issue/follow.py, in the run job): the hunt that
    found it, the package, the last release with the old outcome and the first with the
    new, the commit between them; the two sides' versions (what each repro line
    installs); what could not be named, and why."""

    model_config = ConfigDict(extra="forbid")

    how: Literal["bisect", "culprit", "none"]
    package: str | None = Field(None, pattern=_PACKAGE.pattern)
    before: str | None = None  # the last release with the old outcome
    release: str | None = None  # the first release with the new outcome
    releases: int = Field(0, ge=0)  # the releases searched
    commit: Commit | None = None
    commits: int = Field(0, ge=0)  # the commits searched
    old: dict[str, str] = Field(default_factory=dict, max_length=50)  # the old side's versions
    new: dict[str, str] = Field(default_factory=dict, max_length=50)
    note: str = Field("", max_length=500)  # what was not found, in words
    cells: int = Field(0, ge=0)  # the probes the hunts made

    _versions = field_validator("old", "new")(_checked_versions)
    _release = field_validator("before", "release")(_checked_version)


class OnMain(BaseModel):
    """A package's main branch tonight: its commit and the outcome there; where main
    passes ahead of the releases, the first commit it passes at (``since``)."""

    model_config = ConfigDict(extra="forbid")

    package: str = Field(pattern=_PACKAGE.pattern)
    commit: Commit | None = None  # main's head (None: the repository was not reachable)
    outcome: Outcome | None = None
    since: Commit | None = None
    runs: list[Outcome] = Field(default_factory=list, max_length=11)
    note: str = Field("", max_length=500)


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    kind: JobKind
    status: Literal["done", "refused", "timed-out", "failed"]
    headline: str = Field("", max_length=2000)  # one line: the verdict
    markdown: str = Field("", max_length=MAX_MARKDOWN)  # the report (sweep.md, bisect.md, ...)
    outcome: Literal["good", "bad", "skip"] | None = None  # check and watch
    versions: dict[str, str] = Field(default_factory=dict, max_length=50)  # followed packages
    seconds: float = 0.0
    # The watch's follow-up (issue/follow.py): tonight's outcome in every run (the first,
    # then the confirmation's reruns), where a confirmed flip changed, main branches.
    runs: list[Outcome] = Field(default_factory=list, max_length=11)
    named: Named | None = None
    main: list[OnMain] = Field(default_factory=list, max_length=10)

    _versions = field_validator("versions")(_checked_versions)


def bounded(text: str) -> str:
    """A report as an answer's Markdown: secrets masked, cut to MAX_MARKDOWN."""
    text = redact_text(text)
    if len(text) <= MAX_MARKDOWN:
        return text
    return text[: MAX_MARKDOWN - 80] + "\n\n… (cut: the whole report is in the run's artifact)\n"


def inline_code(text: str) -> str:
    """What a probe said, as one code span in an answer (masked, at most 500 characters)."""
    return code_span(redact_text(text), limit=500)


def answer_folder(root: Path, issue: int) -> Path:
    """Where a run job writes an issue's answer (and its reports and logs)."""
    return root / str(issue)


def artifact_name(issue: int) -> str:
    """The run job's artifact for ``issue``; post reads the answer only from its folder."""
    return f"issue-answers-{issue}"


def write_result(root: Path, result: Result) -> Path:
    folder = answer_folder(root, result.issue)
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / ANSWER_FILE, result.model_dump(mode="json"))
    return folder


def read_result(root: Path, issue: int) -> Result | str:
    """The answer for ``issue`` in the downloaded artifacts under ``root``, or why there
    is none (in words for the comment)."""
    return read_answer(answer_folder(root / artifact_name(issue), issue), issue)


def read_answer(folder: Path, issue: int) -> Result | str:
    """The answer in an issue's answer folder, or why there is none."""
    path = folder / ANSWER_FILE
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
