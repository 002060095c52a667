"""summary.md: ready to paste into a GitHub issue (also the CI step summary).

Sections, in reading order: the verdicts and the run's facts, regressions (with the
bisect command for each transition), the cases that do not pass everywhere (the main
table: one row per such case, the combinations as columns when there are few; with
many, one row per combination that has a problem, listing its cases by name), one
collapsed <details> per failure (error, short traceback, one-line repro), the
known-broken issues (each with its error line and a repro, collapsed), fixed and
flaky, the environment block, then, collapsed, the full grid (combinations x cases)
and every resolved version.

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

from packaging.version import InvalidVersion, Version

from repromatrix.outcomes import COLLECTION_ID, Verdict
from repromatrix.redact import redact_text
from repromatrix.reports import environment
from repromatrix.reports.view import (
    EXIT_TEXT,
    QUIET_STATUSES,
    STATUS_RANK,
    STATUS_STYLE,
    VERDICT_RANK,
    VERDICT_STYLE,
    View,
    cell_status,
    first_line,
    is_problem,
    run_facts,
    short_traceback,
)
from repromatrix.results import CaseResult, CombinationResult
from repromatrix.verdicts import case_repro, is_regression

MAX_CHARS = 65_536
GITHUB_ITEM = re.compile(
    r"https://github\.com/[^/]+/(?P<repo>[^/]+)/(?:issues|pull)/(?P<number>\d+)/?"
)
COLLECT_ENV_CHARS = 6_000
MESSAGE_CHARS = 1_200
# Up to this many combinations, they are the main table's columns; beyond it, rows.
COLUMNS_AT_MOST = 8
# Cases named on one combination's row of the main table, at most.
CASES_PER_ROW = 6
# Shares of what is left after the fixed parts (headline, environment, footer),
# in the order the sections are filled; what one section leaves unused flows on.
SHARES = (
    ("regressions", 0.10),
    ("problems", 0.25),
    ("details", 0.25),
    ("lists", 0.12),
    ("grid", 0.20),
    ("resolved", 0.08),
)


def render(view: View) -> str:
    fixed_head = _head(view)
    fixed_env = _environment(view)
    footer = _footer(view)
    builders: dict[str, Callable[[int], str]] = {
        "regressions": lambda budget: _regressions(view, budget),
        "problems": lambda budget: _problems(view, budget),
        "details": lambda budget: _details(view, budget),
        "lists": lambda budget: _lists(view, budget),
        "grid": lambda budget: _grid(view, budget),
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
            built["problems"],
            built["details"],
            built["lists"],
            fixed_env,
            built["grid"],
            built["resolved"],
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


def _problems(view: View, budget: int) -> str:
    """The main table: what is not passing everywhere, readable at a glance."""
    cases = view.problem_cases()
    title = "### Cases not passing everywhere\n\n"
    if not view.combinations:
        return ""
    if not cases:
        return title + f"Every case passes in all {len(view.combinations)} combinations.\n\n"
    passing = len(view.case_ids) - len(cases)
    intro = (
        f"{len(cases)} of {len(view.case_ids)} cases do not pass everywhere"
        + (f"; the other {passing} pass in every combination they ran in" if passing else "")
        + ".\n\n"
    )
    if len(view.combinations) <= COLUMNS_AT_MOST:
        body = _cases_by_combination(view, cases, budget - len(title) - len(intro))
    else:
        body = _cases_across(view, cases) + _combination_rows(
            view, cases, budget - len(title) - len(intro) - len(_cases_across(view, cases))
        )
    if not body:
        return ""
    return title + intro + body


def _cases_by_combination(view: View, cases: list[str], budget: int) -> str:
    """Few combinations: one column each, their verdict and the versions that differ
    on top, then one row per case."""
    varying = view.varying_packages()
    header = "| case | " + " | ".join(code(c.id) for c in view.combinations) + " |\n"
    rule = "|---|" + ":-:|" * len(view.combinations) + "\n"
    verdicts = [
        f"{VERDICT_STYLE.get(c.verdict or '', ('?', ''))[0]} {c.verdict or '?'}"
        for c in view.combinations
    ]
    rows = ["| *verdict* | " + " | ".join(verdicts) + " |\n"]
    for package in varying:
        cells = []
        for combination in view.combinations:
            text, resolved = view.version(combination, package)
            cells.append(text if resolved else f"*{text}*")
        rows.append(f"| *{package}* | " + " | ".join(cells) + " |\n")
    case_rows = [
        f"| {code(case_id)} | "
        + " | ".join(STATUS_STYLE[s][0] for s in view.cells(case_id))
        + " |\n"
        for case_id in cases
    ]
    legend = _status_legend({s for case_id in cases for s in view.cells(case_id)})
    fixed = header + rule + "".join(rows)
    table = _fit(fixed, case_rows, budget - len(legend) - 2, _more("cases", view))
    return table + "\n" + legend if table else ""


def _cases_across(view: View, cases: list[str]) -> str:
    """Many combinations: per case, how many combinations show each status."""
    lines = ["| case | in how many of the " + f"{len(view.combinations)} combinations |\n"]
    lines.append("|---|---|\n")
    for case_id in cases:
        counts: dict[str, int] = defaultdict(int)
        for status in view.cells(case_id):
            if status != "missing":  # a combination that ran nothing says nothing
                counts[status] += 1
        ordered = sorted(counts.items(), key=lambda kv: STATUS_RANK.get(kv[0], 99))
        lines.append(
            f"| {code(case_id)} | "
            + " · ".join(f"{STATUS_STYLE[s][0]} {n} {s}" for s, n in ordered)
            + " |\n"
        )
    return "".join(lines) + "\n"


def _combination_rows(view: View, cases: list[str], budget: int) -> str:
    """Many combinations: one row per run of neighbouring combinations (matrix order)
    with the same verdict and the same cases not passing, its versions that differ
    between combinations (as a range over the run), and those cases by name."""
    varying = view.varying_packages()
    labels = _case_labels(cases)
    caption = "By combination (neighbours with the same cases not passing share a row):\n\n"
    header = caption + "| combinations | verdict | " + "".join(f"{p} | " for p in varying)
    header += "not passing |\n"
    rule = "|---|---|" + "---|" * len(varying) + "---|\n"
    groups: list[tuple[tuple, list[int]]] = []
    quiet = 0
    for index, combination in enumerate(view.combinations):
        statuses = view.statuses[index]
        shown = tuple(
            (case_id, statuses[case_id])
            for case_id in cases
            if statuses.get(case_id, "missing") not in QUIET_STATUSES | {"skipped"}
        )
        skipped = sum(1 for s in statuses.values() if s == "skipped")
        if not shown and not skipped and combination.verdict in (Verdict.PASS, None):
            quiet += 1
            continue
        alone = combination.verdict == Verdict.INSTALL_ERROR or not combination.cases
        key = (combination.verdict, shown, skipped, index if alone else None)
        if groups and groups[-1][0] == key and groups[-1][1][-1] == index - 1:
            groups[-1][1].append(index)
        else:
            groups.append((key, [index]))
    if not groups:
        return ""
    rows = [
        (members[0], _group_row(view, varying, labels, key, members)) for key, members in groups
    ]
    note = f"\n{quiet} more combinations pass every case.\n\n" if quiet else "\n"
    # Rows are chosen by importance (verdict, then matrix order), shown in matrix order.
    order = sorted(
        rows, key=lambda r: (VERDICT_RANK.get(view.combinations[r[0]].verdict or "", 99), r[0])
    )
    more = _more("combinations", view)
    used = len(header) + len(rule) + len(note) + len(more(len(rows)))
    chosen: set[int] = set()
    for index, row in order:
        if used + len(row) > budget:
            break
        chosen.add(index)
        used += len(row)
    if not chosen:
        return ""
    kept = [row for index, row in rows if index in chosen]
    left = sum(len(members) for key, members in groups if members[0] not in chosen)
    tail = more(left) if left else ""
    return header + rule + "".join(kept) + tail + note


def _group_row(
    view: View, varying: list[str], labels: dict[str, str], key: tuple, members: list[int]
) -> str:
    verdict, shown, skipped, _alone = key
    first, last = view.combinations[members[0]], view.combinations[members[-1]]
    label = code(first.id)
    if len(members) > 1:
        label += f" … {code(last.id)} ({len(members)})"
    names = [f"{STATUS_STYLE[s][0]} {code(labels[c])}" for c, s in shown[:CASES_PER_ROW]]
    if len(shown) > CASES_PER_ROW:
        names.append(f"+{len(shown) - CASES_PER_ROW} more")
    if verdict == Verdict.INSTALL_ERROR:
        names.append(code(first_line(first.message, 100)))
    elif not first.cases and first.message:
        names.append(first_line(first.message, 100))
    if skipped:
        names.append(f"{STATUS_STYLE['skipped'][0]} {skipped} skipped")
    symbol = VERDICT_STYLE.get(verdict or "", ("?", ""))[0]
    versions = []
    for package in varying:
        seen = [view.version(view.combinations[i], package) for i in members]
        values = sorted({text for text, _ in seen}, key=_version_key)
        text = f"{values[0]} – {values[-1]}" if len(values) > 2 else ", ".join(values)
        versions.append(text if all(resolved for _, resolved in seen) else f"*{text}*")
    cells = [label, f"{symbol} {verdict or '?'}", *versions, ", ".join(names) or "-"]
    return "| " + " | ".join(cells) + " |\n"


def _version_key(text: str) -> tuple:
    try:
        return (0, Version(text), "")
    except InvalidVersion:
        return (1, Version("0"), text)


def _case_labels(cases: list[str]) -> dict[str, str]:
    """The shortest readable name of each case: the test name and parameter, or the
    whole id where two files hold the same test name."""
    names = {case_id: case_id.split("::")[-1] for case_id in cases}
    counts: dict[str, int] = defaultdict(int)
    for name in names.values():
        counts[name] += 1
    return {c: (name if counts[name] == 1 else c) for c, name in names.items()}


def _grid(view: View, budget: int) -> str:
    """The full grid, collapsed: every combination x every case, cases numbered."""
    cases = view.case_ids
    if not view.combinations:
        return ""
    head = (
        "<details><summary>Full grid: "
        f"{len(view.combinations)} combinations × {len(cases)} cases</summary>\n\n"
    )
    end = "\n</details>\n\n"
    header_cells = ["combination", "verdict", *view.packages]
    if view.show_python:
        header_cells.append("python")
    header_cells += [str(i) for i in range(1, len(cases) + 1)]
    header = "| " + " | ".join(header_cells) + " |\n"
    rule = "|" + "|".join(["---"] * (2 + len(view.packages) + view.show_python)) + "|"
    rule += ":-:|" * len(cases) + "\n"
    seen = {s for row in view.statuses for s in row.values()}
    if any(len(c.cases) < len(cases) for c in view.combinations):
        seen.add("missing")
    legend = (
        "\nCases:\n\n"
        + "".join(f"{i}. {code(c)}\n" for i, c in enumerate(cases, 1))
        + "\n"
        + _status_legend(seen, versions=True, sweep=view.sweep_package())
    )
    fixed = len(head) + len(header) + len(rule) + len(legend) + len(end) + 200

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
    if not chosen:
        return ""
    lines = [head, header, rule]
    previous: CombinationResult | None = None
    # A sweep-like tier changes a version on every row: mark where outcomes change.
    sweep = view.sweep_package()
    transitions = view.transition_rows() if sweep else set()
    for index, combination in enumerate(view.combinations):
        if index in chosen:
            row = _row(view, combination, None if sweep else previous)[1]
            lines.append(row.replace("| ", "| ▲ ", 1) if index in transitions else row)
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
    lines.append(legend)
    lines.append(end)
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


def _status_legend(seen: set[str], *, versions: bool = False, sweep: str | None = None) -> str:
    parts = [f"{symbol} {name}" for name, (symbol, _, _) in STATUS_STYLE.items() if name in seen]
    if versions and sweep:
        parts.append(
            f"▲ an outcome changes from the row above (this tier moves {sweep} only); "
            "*italic* = requested, not resolved"
        )
    elif versions:
        parts.append(
            "versions in **bold** changed from the row above; *italic* = requested, not resolved"
        )
    return "Legend: " + " · ".join(parts) + "\n\n"


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
        # One row per distribution (a column per distribution made rows of ~800
        # characters): each version with where it is, the commonest as a count.
        rows.append("| distribution | versions |\n|---|---|\n")
        rows += [f"| {name} | {_where_versions(built, name)} |\n" for name in varying]
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


def _where_versions(built: list[CombinationResult], name: str) -> str:
    by_value: dict[str, list[str]] = defaultdict(list)
    for combination in built:
        by_value[combination.resolved.get(name, "not installed")].append(combination.id)
    ordered = sorted(by_value.items(), key=lambda kv: -len(kv[1]))
    parts = []
    for index, (value, ids) in enumerate(ordered):
        if len(ids) <= 2 and index > 0:
            parts.append(f"{value} in {', '.join(code(i) for i in ids)}")
        else:
            parts.append(f"{value} in {len(ids)} combinations")
    return " · ".join(parts)


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
        _fit("### Known-broken, fixed and flaky\n\n", items, budget, _more("entries", view)) + "\n"
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
        f"🐛 <code>{html.escape(case_id)}</code>: "
        f'<a href="{html.escape(link)}">{html.escape(_link_text(link))}</a>'
        + (f" {html.escape(note)}" if note else "")
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


def _footer(view: View) -> str:
    return (
        f"---\n<sub>Full report: index.html, junit.xml and results.json in {view.location}. "
        "Re-render with `repromatrix report`.</sub>\n"
    )
