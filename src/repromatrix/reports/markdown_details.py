"""summary.md's collapsed blocks: one <details> per failure (error, short traceback,
one-line repro, bisect command), then one per known-broken issue with the fixed and
flaky cases listed beside them.

Failures come in the order a reader needs them: regressions, install errors, then
other failures; a block is rendered only when it fits, and what the budget leaves
out is counted in a note.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterator

from repromatrix.github.markdown import html_text
from repromatrix.outcomes import COLLECTION_ID, STATUSES, VERDICTS, Verdict
from repromatrix.reports.markdown_text import code, code_block, fit, more_note
from repromatrix.reports.view import (
    View,
    cell_status,
    first_line,
    is_problem,
    resolved_text,
    short_traceback,
)
from repromatrix.results import CaseResult, CombinationResult
from repromatrix.verdicts import case_repro, is_regression

GITHUB_ITEM = re.compile(
    r"https://github\.com/[^/]+/(?P<repo>[^/]+)/(?:issues|pull)/(?P<number>\d+)/?"
)
MESSAGE_CHARS = 1_200


def _failures(view: View) -> tuple[int, Iterator[str]]:
    """How many failure blocks there are, and the blocks, rendered on demand, in the
    order a reader needs them: regressions, install errors, other failures."""
    regressed, installs, failing = [], [], []
    for combination in view.combinations:
        if combination.verdict == Verdict.INSTALL_ERROR:
            installs.append((combination, None))
        for case in combination.cases:
            if is_regression(case):
                regressed.append((combination, case))
            elif is_problem(case):
                failing.append((combination, case))
    ordered = [*regressed, *installs, *failing]

    def blocks() -> Iterator[str]:
        for combination, case in ordered:
            if case is None:
                yield _install_details(combination)
            else:
                yield _case_details(combination, case)

    return len(ordered), blocks()


def details(view: View, budget: int) -> str:
    total, blocks = _failures(view)
    return fit("### Failures\n\n", blocks, budget, more_note("failures", view), total)


def _case_details(combination: CombinationResult, case: CaseResult) -> str:
    status = cell_status(case)
    symbol = STATUSES[status].symbol
    step = case.transitions[0] if case.transitions else None
    why = ""
    if case.change == "regressed":
        why = "regressed since the baseline run"
    elif step is not None:
        why = step.text
    summary = (
        f"{symbol} <code>{html_text(combination.id)}</code> · "
        f"<code>{html_text(case.id)}</code> · {html_text(case.status)}"
        + (f": {html_text(why)}" if why else "")
    )
    body = []
    message = case.message.strip()
    # The message usually starts with the exception type already.
    named = case.error_type and not message.startswith(case.error_type)
    error = f"`{case.error_type}`: " if named else ""
    if "\n" in message or len(message) > 200:
        body.append(f"**{case.status}** {error}\n\n" + code_block(message[:MESSAGE_CHARS]))
    else:
        body.append(f"**{case.status}** {error}{code(message) if message else ''}\n")
    body.append("\n" + _resolved_line(combination) + "\n")
    if len(case.attempts) > 1:
        body.append(f"Attempts (fresh interpreters): {', '.join(case.attempts)}\n")
    if case.traceback.strip():
        body.append("\n" + code_block(short_traceback(case.traceback)))
    body.append(f"\nRepro: {code(case_repro(combination, case.id))}\n")
    for transition in case.transitions[:2]:
        if transition.bisect:
            body.append(f"\n{transition.text[0].upper()}{transition.text[1:]}: ")
            body.append(f"{code(transition.bisect)}\n")
    if case.id == COLLECTION_ID:
        body.append(f"\nThe run's log: `logs/{combination.id}.cases.log`\n")
    return f"<details><summary>{summary}</summary>\n\n" + "".join(body) + "\n</details>\n\n"


def _install_details(combination: CombinationResult) -> str:
    symbol = VERDICTS[Verdict.INSTALL_ERROR].symbol
    message = combination.message.strip()
    summary = (
        f"{symbol} <code>{html_text(combination.id)}</code> · install-error: "
        f"{html_text(first_line(message, 160))}"
    )
    requested = ", ".join(f"{p} {v}" for p, v in combination.requested.items())
    body = (
        f"Requested: {requested}\n\n"
        + (code_block(message[:MESSAGE_CHARS]) if message else "")
        + f"\nRepro: {code(case_repro(combination))} · log: "
        + f"`logs/{combination.id}.install.log`\n"
    )
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n"


def _resolved_line(combination: CombinationResult) -> str:
    parts = [f"{p} {resolved_text(combination, p) or '-'}" for p in combination.requested]
    if combination.environment.python:
        parts.append(f"python {combination.environment.python}")
    return "Resolved: " + ", ".join(parts)


def lists(view: View, budget: int) -> str:
    """Known-broken (one line per registered issue), fixed, flaky."""
    known: dict[tuple[str, str], list[str]] = defaultdict(list)
    notes: dict[tuple[str, str], str] = {}
    example: dict[tuple[str, str], tuple[CombinationResult, CaseResult]] = {}
    flaky: list[str] = []
    for combination in view.combinations:
        for case in combination.cases:
            if case.status == "known-broken" and case.known_issue:
                key = (case.id, case.known_issue.get("link", ""))
                known[key].append(combination.id)
                notes[key] = case.known_issue.get("note", "")
                example.setdefault(key, (combination, case))
            elif case.status == "flaky":
                flaky.append(
                    f"- {code(combination.id)} · {code(case.id)}: "
                    f"{' -> '.join(case.attempts) or 'flaky'}\n"
                )
    items: list[str] = []
    for key, combinations in known.items():
        items.append(_known_broken(key, notes[key], combinations, *example[key]))
    for change in view.results.fixed:
        items.append(f"- ✨ {code(change.combination)} · {code(change.case)}: {change.text}\n")
    items += [f"- 🔁{item[1:]}" for item in flaky]
    if not items:
        return ""
    return (
        fit("### Known-broken, fixed and flaky\n\n", items, budget, more_note("entries", view))
        + "\n"
    )


def _known_broken(
    key: tuple[str, str],
    note: str,
    combinations: list[str],
    combination: CombinationResult,
    case: CaseResult,
) -> str:
    """One registered issue: what it is and where (visible), then its error line and
    a repro (collapsed)."""
    case_id, link = key
    where = f"{len(combinations)} combination" + ("s" if len(combinations) > 1 else "")
    summary = (
        f"🐛 <code>{html_text(case_id)}</code>: "
        f'<a href="{html.escape(link)}">{html.escape(_link_text(link))}</a>'
        + (f" {html_text(note)}" if note else "")
        + f" — in {where}"
    )
    error = first_line(case.message, 300)
    named = case.error_type and not error.startswith(case.error_type)
    error = f"{case.error_type}: {error}" if named else error
    shown = ", ".join(code(c) for c in combinations[:8])
    extra = f" (+{len(combinations) - 8})" if len(combinations) > 8 else ""
    body = (
        (f"Error in {code(combination.id)}: {code(error)}\n\n" if error else "")
        + f"Repro: {code(case_repro(combination, case_id))}\n\n"
        + f"In {shown}{extra}\n"
    )
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n"


def _link_text(link: str) -> str:
    """'https://github.com/huggingface/peft/pull/617' -> 'peft#617'; other links as they are."""
    found = GITHUB_ITEM.fullmatch(link.strip())
    return f"{found['repo']}#{found['number']}" if found else link
