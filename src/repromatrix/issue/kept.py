"""What becomes of a kept case later (issue/keep.py wrote it), in the keep job: each a
pull request, written from the checkout and data checked here; nothing of it runs.

- **marked** (``mark_changes``): a confirmed flip of a kept repro to passing, on
  released versions (issue/flips.py's ``Mark``, the post job's ``marks`` output): its
  registry entry gets ``possibly_fixed: "<package> <release>, commit <sha> (#<pr>)"``.
  The range stays: a person narrows it, or closes the issue.
- **settled** (``closed``, ``settle_changes``): the issue closed as fixed (``completed``)
  by a trusted person: the kept case's known-broken entry goes and its header says it
  is expected to pass. It is a plain regression case from then on: a failure of it is
  a regression, said on the tracking issue and on this one (nightly/kept.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError
from repromatrix.github.markdown import code_span, link, text
from repromatrix.issue.bot import Comments, memory
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.event import field, trusted_sender
from repromatrix.issue.flips import Mark
from repromatrix.issue.keep import (
    KEPT_MARK,
    REGISTRY,
    Change,
    case_file,
    case_id,
    read_checked_out,
    registry_cases,
)
from repromatrix.issue.plan import Plan, PlannedSettle

MAX_MARKS = 50  # a night watches at most this many issues (watch_limit's bound)
_FIXED_IN = re.compile(r"^[A-Za-z0-9 ._,:()#+!=<>~-]{1,200}$")  # flips.fixed_in_words
SETTLED_WORDS = "passes: a plain regression case (its issue was closed as fixed)"


# --------------------------------------------------------------------------- marks


def marks_output(marks: list[Mark]) -> str:
    """The post job's ``marks`` output: one line of JSON, empty when there are none."""
    rows = [{"issue": m.issue, "case": m.case, "fixed_in": m.fixed_in} for m in marks]
    return json.dumps(rows[:MAX_MARKS], separators=(",", ":")) if rows else ""


def read_marks(given: str) -> list[Mark]:
    """``--marks``: the post job's output, checked (a case that is not the issue's kept
    case, or words that could be more than a release and a commit, is refused)."""
    if not given.strip():
        return []
    try:
        rows = json.loads(given)
    except json.JSONDecodeError as err:
        raise UserError(f"--marks: not JSON ({err})") from None
    if not isinstance(rows, list) or len(rows) > MAX_MARKS:
        raise UserError(f"--marks: expected a list of at most {MAX_MARKS} marks")
    marks = []
    for number, row in enumerate(rows):
        issue = row.get("issue") if isinstance(row, dict) else None
        words = row.get("fixed_in") if isinstance(row, dict) else None
        if not isinstance(issue, int) or issue < 1 or row.get("case") != case_id(issue):
            raise UserError(f"--marks: [{number}]: not a kept case's mark: {str(row)[:80]!r}")
        if not isinstance(words, str) or not _FIXED_IN.match(words):
            raise UserError(f"--marks: [{number}].fixed_in: {str(words)[:80]!r} is not a release")
        marks.append(Mark(issue, case_id(issue), words))
    return marks


def marked(text_: str, case: str, fixed_in: str, source: str) -> str:
    """known_issues.yaml's text with ``case``'s entry marked possibly-fixed (a mark
    before it replaced); checked by reading the result back."""
    lines = text_.splitlines()
    start, end = _entry(lines, case, source)
    kept = [line for line in lines[start + 1 : end] if not line.startswith("  possibly_fixed:")]
    edited = [*lines[: start + 1], *kept, f"  possibly_fixed: {json.dumps(fixed_in)}", *lines[end:]]
    result = "\n".join(edited) + "\n"
    found = {issue.case: issue for issue in registry_cases(result, source)}
    if case not in found or found[case].possibly_fixed != fixed_in:
        raise UserError(f"{source}: the mark of {case} did not take (edited by hand?)")
    return result


def unregistered(text_: str, case: str, source: str) -> str:
    """known_issues.yaml's text without ``case``'s entry (and the line keep wrote above
    it); checked by reading the result back."""
    lines = text_.splitlines()
    start, end = _entry(lines, case, source)
    if start > 0 and lines[start - 1].startswith("# Kept from "):
        start -= 1
        if start > 0 and not lines[start - 1].strip():
            start -= 1
    result = "\n".join(lines[:start] + lines[end:]) + "\n"
    if case in {issue.case for issue in registry_cases(result, source)}:
        raise UserError(f"{source}: the entry of {case} did not go (edited by hand?)")
    return result


def _entry(lines: list[str], case: str, source: str) -> tuple[int, int]:
    """The lines of ``case``'s entry, as keep wrote it: ``- case: ...`` to the next
    entry, comment or blank line."""
    head = re.compile(rf"^- case: (['\"]?){re.escape(case)}\1\s*$")
    starts = [at for at, line in enumerate(lines) if head.match(line)]
    if len(starts) != 1:
        raise UserError(f"{source}: no entry of {case} as /repromatrix keep wrote it")
    end = starts[0] + 1
    while end < len(lines) and lines[end].startswith("  ") and lines[end].strip():
        end += 1
    return starts[0], end


def mark_changes(marks: list[Mark], cases: Path, cases_path: str, run_url: str,
                 say: Callable[[str], None] = print) -> list[Change]:  # fmt: skip
    """A pull request per mark whose case is registered in the checkout."""
    registry_path = f"{cases_path}/{REGISTRY}"
    found = []
    for mark in marks:
        current = read_checked_out(cases / REGISTRY)
        if mark.case not in {issue.case for issue in registry_cases(current, registry_path)}:
            say(f"#{mark.issue}: {mark.case} is not registered known-broken: nothing to mark")
            continue
        edited = marked(current, mark.case, mark.fixed_in, registry_path)
        if edited == current:
            continue
        digest = hashlib.sha256(mark.fixed_in.encode()).hexdigest()[:8]  # a branch per fix
        body = (
            f"The watch's confirmed flip of #{mark.issue} to passing on released versions: "
            f"possibly fixed in {text(mark.fixed_in)}. Marks {code_span(mark.case)} "
            f"possibly-fixed in {code_span(REGISTRY)}; its range stays until a maintainer "
            "narrows it or closes the issue as fixed (the case then becomes a plain "
            f"regression case).\n\n{link('the run', run_url) if run_url else ''}\n"
        )
        found.append(Change(f"repromatrix/possibly-fixed-{mark.issue}-{digest}",
                            f"Issue #{mark.issue}: possibly fixed in {mark.fixed_in}",
                            body, {registry_path: edited}))  # fmt: skip
    return found


# --------------------------------------------------------------------------- settled


def closed(plan: Plan, payload: Any, client: Comments, settings: IssueSettings,
           permission: Callable[[str], str]) -> None:  # fmt: skip
    """An issues ``closed`` event: a kept case to settle when a trusted person closed
    its issue as fixed; anything else is a note."""
    issue = field(payload, "issue", "number", kind=int)
    login = field(payload, "sender", "login") or ""
    reason = field(payload, "issue", "state_reason")
    if issue is None or issue < 1 or field(payload, "issue", "pull_request", kind=dict):
        plan.notes.append("ignored: not an issue")
    elif reason != "completed":
        plan.notes.append(f"#{issue}: closed as {str(reason)[:20]!r}, not as fixed: kept as is")
    elif not trusted_sender(login, settings, permission):
        plan.notes.append(f"#{issue}: closed by {login[:40]!r}, who is not trusted: kept as is")
    else:
        state, _ids = memory(client.comments(issue), plan.bots)
        if state.kept is None or state.kept.case != case_id(issue):
            plan.notes.append(f"#{issue}: closed as fixed; no kept case")
        else:
            plan.settled.append(PlannedSettle(issue=issue, by=login))
            plan.notes.append(f"#{issue}: closed as fixed by {login}: {case_id(issue)} settles")


def settled_case(text_: str, issue: int) -> str:
    """The kept case file's text, expected to pass (its header and EXPECTED)."""
    if not text_.startswith(KEPT_MARK):
        raise UserError(f"{case_file(issue)}: not a case /repromatrix keep wrote")
    lines = text_.split("\n")
    for at, line in enumerate(lines):
        if line.startswith("    expected  "):
            lines[at] = f"    expected  {SETTLED_WORDS}"
        elif line == 'EXPECTED = "fails"':
            lines[at] = 'EXPECTED = "passes"'
    return "\n".join(lines)


def settle_changes(plan: Plan, cases: Path, cases_path: str, run_url: str,
                   say: Callable[[str], None] = print) -> list[Change]:  # fmt: skip
    """A pull request per settled keep: the registry entry gone, the header expecting
    a pass (from the checkout's files: what a person merged)."""
    registry_path = f"{cases_path}/{REGISTRY}"
    found = []
    for settle in plan.settled:
        case, files = case_id(settle.issue), {}
        path = cases / case_file(settle.issue)
        current = read_checked_out(path)
        if not current:
            say(f"#{settle.issue}: {case_file(settle.issue)} is not in the checkout: nothing to do")
            continue
        if settled_case(current, settle.issue) != current:
            files[f"{cases_path}/{case_file(settle.issue)}"] = settled_case(current, settle.issue)
        registry = read_checked_out(cases / REGISTRY)
        if case in {issue.case for issue in registry_cases(registry, registry_path)}:
            files[registry_path] = unregistered(registry, case, registry_path)
        if not files:
            say(f"#{settle.issue}: {case} is a plain regression case already")
            continue
        body = (
            f"#{settle.issue} was closed as fixed by {text(settle.by)}: its kept case "
            f"{code_span(case)} is a plain regression case now (its known-broken entry "
            f"in {code_span(REGISTRY)} goes; it is expected to pass). A failure of it is "
            f"a regression, said on the tracking issue and on #{settle.issue}.\n\n"
            f"{link('the run', run_url) if run_url else ''}\n"
        )
        found.append(Change(f"repromatrix/fixed-{settle.issue}",
                            f"Issue #{settle.issue} is fixed: its kept case is a regression case",
                            body, files))  # fmt: skip
    return found
