"""Kept issue repros in the nightly (``cases/issues/test_issue_<N>.py``, written by
``/repromatrix keep``: issue/keep.py): their transitions are said on the tracking issue
like any case's, and on the issue each came from, once per transition.

- REGRESSED: a kept case failing tonight, not tracked before (the tracking issue's
  *new*): a plain regression case (its issue closed as fixed) broke again, or a
  known-broken one fails outside its range.
- FIXED: a tracked failure of a kept case passing again (*fixed*), or a known-broken
  kept case passing inside its range (*possibly fixed*) where it did not last night.

The comment is built from github.markdown's pieces (case ids, combination ids and
messages as code spans or escaped text): inert, and under GitHub's limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from repromatrix.github.inert import inert
from repromatrix.github.markdown import COMMENT_LIMIT, code_span, link, one_line, text
from repromatrix.nightly.tracking import Update
from repromatrix.outcomes import CaseStatus
from repromatrix.results import Results

# issue/keep.py's case_id: the case's file and test are named after its issue.
KEPT_CASE = re.compile(r"^issues/test_issue_([1-9][0-9]{0,8})\.py::test_issue_\1(\[.*\])?$")
MARKER = "<!-- repromatrix:kept-case -->"
MAX_LINES = 40  # per issue and night: a kept case in many combinations


@dataclass(frozen=True)
class Told:
    """One comment on a kept case's issue."""

    issue: int
    body: str


def kept_issue(case: str) -> int | None:
    """The issue a kept case came from (None: not a kept case)."""
    found = KEPT_CASE.match(case)
    return int(found.group(1)) if found else None


def transitions(update: Update, baseline: Results | None, date: str, run: str) -> list[Told]:
    """Tonight's transitions of kept cases, one comment per issue."""
    said: dict[int, list[str]] = {}

    def say(case: str, line: str) -> None:
        issue = kept_issue(case)
        if issue is not None:
            said.setdefault(issue, []).append(line)

    for failure in update.new:
        message = f": {text(one_line(failure.message, 200))}" if failure.message else ""
        where = f"{code_span(failure.combination)} ({text(failure.status)}){message}"
        say(failure.case, f"- REGRESSED: {code_span(failure.case)} on {where}")
    for failure in update.fixed:
        say(failure.case, f"- FIXED: {code_span(failure.case)} passes again on "
                          f"{code_span(failure.combination)}")  # fmt: skip
    before = _possibly_fixed(baseline)
    for found in update.possibly_fixed:
        if (found.combination, found.case) not in before:
            say(found.case, f"- FIXED: {code_span(found.case)} passes on "
                            f"{code_span(found.combination)}, inside its known-broken range: "
                            "possibly fixed (the registry entry may be out of date)")  # fmt: skip
    run_link = f" ({link('run', run)})" if run else ""
    told = []
    for issue, lines in sorted(said.items()):
        more = len(lines) - MAX_LINES
        shown = lines[:MAX_LINES] + ([f"- and {more} more (the tracking issue lists them)"]
                                     if more > 0 else [])  # fmt: skip
        body = (
            f"repromatrix nightly of {text(date)}{run_link}: this issue's kept case\n\n"
            + "\n".join(shown)
            + "\n\n_The nightly's tracking issue lists it too._"
        )
        # Through the one renderer, as the tracking issue: a cut stays inert, not a slice.
        shown_body = inert(body, limit=COMMENT_LIMIT - len(MARKER) - 2,
                           note="_… cut (the tracking issue lists everything)._",
                           links=[run] if run else [])  # fmt: skip
        told.append(Told(issue, f"{MARKER}\n{shown_body}\n"))
    return told


def _possibly_fixed(results: Results | None) -> set[tuple[str, str]]:
    if results is None:
        return set()
    return {
        (combo.id, case.id)
        for combo in results.combinations
        for case in combo.cases
        if case.status == CaseStatus.POSSIBLY_FIXED
    }
