"""summary.md: ready to paste into a GitHub issue (also the CI step summary).

Sections, in reading order: headline and exit status, regressions (with the bisect
command for each transition), the verdict table (combinations x cases, version
columns), the environment block, one collapsed <details> per failure (error, short
traceback, one-line repro), then the known-broken / fixed / flaky lists.

GitHub refuses a body over 65,536 characters, so every section gets a share of that
budget. What does not fit is left out by a fixed rule (most important first, matrix
order within) and the section says so and where the full report is: the same
results always give the same summary.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

from repromatrix.redact import redact_text
from repromatrix.results import CaseResult, CombinationResult
from repromatrix.outcomes import COLLECTION_ID, Verdict
from repromatrix.verdicts import case_repro, is_regression
from repromatrix.reports import environment
from repromatrix.reports.view import (
    EXIT_TEXT,
    STATUS_STYLE,
    VERDICT_RANK,
    VERDICT_STYLE,
    View,
    cell_status,
    first_line,
    run_facts,
    is_problem,
    short_traceback,
)

MAX_CHARS = 65_536
COLLECT_ENV_CHARS = 6_000
MESSAGE_CHARS = 1_200
# Shares of what is left after the fixed parts (headline, environment, footer),
# in the order the sections are filled; what one section leaves unused flows on.
SHARES = (
    ("regressions", 0.12),
    ("table", 0.40),
    ("details", 0.35),
    ("lists", 0.08),
    ("resolved", 0.05),
)


def render(view: View) -> str:
    fixed_head = _head(view)
    fixed_env = _environment(view)
    footer = _footer(view)
    builders: dict[str, Callable[[int], str]] = {
        "regressions": lambda budget: _regressions(view, budget),
        "table": lambda budget: _table(view, budget),
        "details": lambda budget: _details(view, budget),
        "lists": lambda budget: _lists(view, budget),
        "resolved": lambda budget: _resolved_versions(view, budget),
    }
    remaining = MAX_CHARS - len(fixed_head) - len(fixed_env) - len(footer) - 64
    built: dict[str, str] = {}
    shares_left = sum(share for _, share in SHARES)
    for name, share in SHARES:
        budget = max(0, int(remaining * share / shares_left))
        built[name] = builders[name](budget)
        remaining -= len(built[name])
        shares_left -= share
    text = "".join(
        [
            fixed_head,
            built["regressions"],
            built["table"],
            fixed_env,
            built["resolved"],
            built["details"],
            built["lists"],
            footer,
        ]
    )
    return _capped(redact_text(text), view)


def _capped(text: str, view: View) -> str:
    """The last guard: never over the limit, whatever the parts did."""
    if len(text) <= MAX_CHARS:
        return text
    note = f"\n\n… cut at {MAX_CHARS} characters; full report: {view.location}\n"
    return text[: MAX_CHARS - len(note)] + note


# --------------------------------------------------------------------------- text helpers


def code(text: str) -> str:
    """An inline code span that survives backticks and pipes in ``text``."""
    text = " ".join(text.split()).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, language: str = "text") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}\n"


def _fit(
    title: str,
    items: Iterable[str],
    budget: int,
    more: Callable[[int], str],
    total: int | None = None,
) -> str:
    """``title`` and as many ``items`` as fit in ``budget``, then a note for the rest.
    ``items`` may be lazy (with ``total`` given): only what fits is rendered."""
    if total is None:
        items = list(items)
        total = len(items)
    if not total:
        return ""
    out, used = [title], len(title)
    for index, item in enumerate(items):
        note = more(total - index - 1) if index < total - 1 else ""
        if used + len(item) + len(note) > budget:
            tail = more(total - index)
            if used + len(tail) > budget:
                return "" if index == 0 else "".join(out)
            return "".join([*out, tail])
        out.append(item)
        used += len(item)
    return "".join(out)


def _more(what: str, view: View) -> Callable[[int], str]:
    return lambda n: f"\n*… {n} more {what} not shown here: see index.html in {view.location}*\n\n"


# --------------------------------------------------------------------------- sections


def _head(view: View) -> str:
    results = view.results
    summary = results.summary
    counts = summary.verdicts if summary else {}
    ordered = sorted(counts.items(), key=lambda kv: VERDICT_RANK.get(kv[0], 99))
    verdicts = " · ".join(f"{VERDICT_STYLE.get(v, ('', ''))[0]} {n} {v}" for v, n in ordered)
    exit_code = summary.exit_code if summary else 0
    lines = [f"## repromatrix: {verdicts or 'no combinations'}\n\n"]
    lines.append(f"**Exit status {exit_code}**: {EXIT_TEXT[exit_code]}.\n\n")
    facts = [
        " ".join(filter(None, [f.words, code(f.value) if f.code else f.value]))
        for f in run_facts(view)
    ]
    lines.append(" · ".join(facts) + "\n\n")
    return "".join(lines)


def _regressions(view: View, budget: int) -> str:
    results = view.results
    if not results.regressions:
        return ""
    # One line per transition (or per case for a baseline regression with no single
    # package to blame), naming every combination that shows it.
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    bisects: dict[tuple[str, str], str] = {}
    for change in results.regressions:
        step = change.transition
        key = (change.case, step.text if step else change.text)
        groups[key].append(change.combination)
        if step and step.bisect:
            bisects[key] = step.bisect
    items = []
    for (case_id, text), combinations in groups.items():
        shown = ", ".join(code(c) for c in combinations[:6])
        extra = f" (+{len(combinations) - 6})" if len(combinations) > 6 else ""
        item = f"- {code(case_id)}: {text}: {shown}{extra}\n"
        if (case_id, text) in bisects:
            item += f"  bisect: {code(bisects[(case_id, text)])}\n"
        items.append(item)
    return _fit("### Regressions\n\n", items, budget, _more("regressions", view)) + "\n"


def _table(view: View, budget: int) -> str:
    cases = view.case_ids
    header_cells = ["combination", "verdict", *view.packages]
    if view.show_python:
        header_cells.append("python")
    header_cells += [str(i) for i in range(1, len(cases) + 1)]
    header = "| " + " | ".join(header_cells) + " |\n"
    rule = "|" + "|".join(["---"] * (2 + len(view.packages) + view.show_python)) + "|"
    rule += ":-:|" * len(cases) + "\n"
    legend = _case_legend(view) + _status_legend(view)
    title = "### Verdicts\n\n"
    fixed = len(title) + len(header) + len(rule) + len(legend) + 200

    rows = [_row(view, c) for c in view.combinations]
    # Choose rows by importance (verdict, then matrix order); show them in matrix order
    # with versions in bold where they changed from the row above.
    order = sorted(
        range(len(rows)),
        key=lambda i: (VERDICT_RANK.get(view.combinations[i].verdict or "", 99), i),
    )
    chosen: set[int] = set()
    used = fixed
    for index in order:
        cost = len(rows[index][1]) + 64  # bold markers where versions change
        if used + cost > budget:
            break
        chosen.add(index)
        used += cost
    if fixed > budget and not chosen:
        return ""
    lines = [title, header, rule]
    previous: CombinationResult | None = None
    for index, combination in enumerate(view.combinations):
        if index in chosen:
            lines.append(_row(view, combination, previous)[1])
            previous = combination
    left_out = len(rows) - len(chosen)
    if left_out:
        verdicts = defaultdict(int)
        for index in range(len(rows)):
            if index not in chosen:
                verdicts[view.combinations[index].verdict or "?"] += 1
        what = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
        lines.append(
            f"\n*… {left_out} more combinations ({what}) not shown here: "
            f"see index.html in {view.location}*\n"
        )
    lines.append("\n" + legend)
    return "".join(lines)


def _row(
    view: View, combination: CombinationResult, previous: CombinationResult | None = None
) -> tuple[str, str]:
    symbol = VERDICT_STYLE.get(combination.verdict or "", ("?", ""))[0]
    cells = [code(combination.id), f"{symbol} {combination.verdict or '?'}"]
    for package in view.packages:
        text, resolved = view.version(combination, package)
        changed = previous is not None and view.version(previous, package)[0] != text
        shown = text if resolved else f"*{text}*"
        cells.append(f"**{shown}**" if changed and text != "-" else shown)
    if view.show_python:
        cells.append(combination.environment.python or "-")
    by_id = {c.id: c for c in combination.cases}
    for case_id in view.case_ids:
        cells.append(STATUS_STYLE[cell_status(by_id.get(case_id))][0])
    return combination.id, "| " + " | ".join(cells) + " |\n"


def _case_legend(view: View) -> str:
    if not view.case_ids:
        return ""
    parts = [f"**{i}** {code(c)}" for i, c in enumerate(view.case_ids, 1)]
    return "Cases: " + " · ".join(parts) + "\n\n"


def _status_legend(view: View) -> str:
    seen = {
        cell_status(case) for combination in view.combinations for case in combination.cases
    }
    if any(len(c.cases) < len(view.case_ids) for c in view.combinations):
        seen.add("missing")
    parts = [f"{symbol} {name}" for name, (symbol, _, _) in STATUS_STYLE.items() if name in seen]
    versions = "versions in **bold** changed from the row above; *italic* = requested, not resolved"
    return "Legend: " + " · ".join(parts) + (f" · {versions}" if parts else versions) + "\n\n"


def _environment(view: View) -> str:
    host = view.results.run.host or {}
    collected = host.get("collect_env")
    lines = ["### Environment\n\n"]
    pairs = environment.headline(collected)
    if pairs:
        where = code(collected.get("combination", "?"))
        lines.append(
            " · ".join(f"**{label}** {value}" for label, value in pairs)
            + f" (`python -m torch.utils.collect_env` in {where})\n\n"
        )
    elif collected and collected.get("error"):
        lines.append(f"torch.utils.collect_env failed: {code(collected['error'][:300])}\n\n")
    else:
        lines.append("torch.utils.collect_env: not collected (no cell was built in this run)\n\n")
    host_facts = [
        f"{host['platform']}" if host.get("platform") else "",
        f"{host['cpus']} CPUs" if host.get("cpus") else "",
        "GPUs: " + (", ".join(host["gpus"]) if host.get("gpus") else "none"),
        "CI" if host.get("ci") else "",
    ]
    lines.append("Host: " + ", ".join(f for f in host_facts if f) + "\n\n")
    if collected and collected.get("text"):
        text = collected["text"]
        if len(text) > COLLECT_ENV_CHARS:
            text = text[:COLLECT_ENV_CHARS] + "\n… (cut; the full text is in results.json)"
        lines.append(
            "<details><summary>python -m torch.utils.collect_env</summary>\n\n"
            + code_block(text)
            + "\n</details>\n\n"
        )
    return "".join(lines)


def _resolved_versions(view: View, budget: int) -> str:
    """Every combination's resolved versions, compactly: the distributions that are the
    same everywhere once, the ones that vary as a table."""
    built = [c for c in view.combinations if c.resolved]
    if not built:
        return ""
    names = sorted({n for c in built for n in c.resolved} - set(view.packages))
    same = [n for n in names if len({c.resolved.get(n) for c in built}) == 1]
    varying = [n for n in names if n not in same]
    head = "<details><summary>Resolved versions of every distribution</summary>\n\n"
    intro = ""
    if same:
        listed = ", ".join(f"{n} {built[0].resolved[n]}" for n in same)
        intro = f"Same in every combination: {listed}\n\n"
    rows: list[str] = []
    if varying:
        rows.append("| combination | " + " | ".join(varying) + " |\n")
        rows.append("|" + "---|" * (len(varying) + 1) + "\n")
        rows += [
            f"| {code(c.id)} | "
            + " | ".join(c.resolved.get(n, "-") for n in varying)
            + " |\n"
            for c in built
        ]
    end = "\n</details>\n\n"
    text = head + intro
    if len(text) + len(end) > budget:
        return ""
    kept = 0
    for row in rows:
        if len(text) + len(row) + len(end) + 120 > budget:
            break
        text += row
        kept += 1
    if kept < len(rows):
        text += f"\n*… {len(rows) - kept} more rows: see results.json in {view.location}*\n"
    return text + end


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


def _details(view: View, budget: int) -> str:
    total, blocks = _failures(view)
    return _fit("### Failures\n\n", blocks, budget, _more("failures", view), total)


def _case_details(combination: CombinationResult, case: CaseResult) -> str:
    status = cell_status(case)
    symbol = STATUS_STYLE[status][0]
    step = case.transitions[0] if case.transitions else None
    why = ""
    if case.change == "regressed":
        why = "regressed since the baseline run"
    elif step is not None:
        why = step.text
    summary = (
        f"{symbol} <code>{html.escape(combination.id)}</code> · "
        f"<code>{html.escape(case.id)}</code> · {html.escape(case.status)}"
        + (f": {html.escape(why)}" if why else "")
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
    symbol = VERDICT_STYLE[Verdict.INSTALL_ERROR][0]
    message = combination.message.strip()
    summary = (
        f"{symbol} <code>{html.escape(combination.id)}</code> · install-error: "
        f"{html.escape(first_line(message, 160))}"
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
    parts = [f"{p} {combination.resolved.get(p, '-')}" for p in combination.requested]
    if combination.environment.python:
        parts.append(f"python {combination.environment.python}")
    return "Resolved: " + ", ".join(parts)


def _lists(view: View, budget: int) -> str:
    """Known-broken (one line per registered issue), fixed, flaky."""
    known: dict[tuple[str, str], list[str]] = defaultdict(list)
    notes: dict[tuple[str, str], str] = {}
    flaky: list[str] = []
    for combination in view.combinations:
        for case in combination.cases:
            if case.status == "known-broken" and case.known_issue:
                key = (case.id, case.known_issue.get("link", ""))
                known[key].append(combination.id)
                notes[key] = case.known_issue.get("note", "")
            elif case.status == "flaky":
                flaky.append(
                    f"- {code(combination.id)} · {code(case.id)}: "
                    f"{' -> '.join(case.attempts) or 'flaky'}\n"
                )
    items: list[str] = []
    for (case_id, link), combinations in known.items():
        shown = ", ".join(code(c) for c in combinations[:8])
        extra = f" (+{len(combinations) - 8})" if len(combinations) > 8 else ""
        note = f" {notes[(case_id, link)]}" if notes[(case_id, link)] else ""
        items.append(f"- 🐛 {code(case_id)}: {link}{note} — in {shown}{extra}\n")
    for change in view.results.fixed:
        items.append(f"- ✨ {code(change.combination)} · {code(change.case)}: {change.text}\n")
    items += [f"- 🔁{item[1:]}" for item in flaky]
    if not items:
        return ""
    return _fit(
        "### Known-broken, fixed and flaky\n\n", items, budget, _more("entries", view)
    ) + "\n"


def _footer(view: View) -> str:
    return (
        f"---\n<sub>Full report: index.html, junit.xml and results.json in {view.location}. "
        "Re-render with `repromatrix report`.</sub>\n"
    )
