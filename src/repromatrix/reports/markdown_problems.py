"""summary.md's main table: the cases that do not pass everywhere.

With few combinations they are the columns (their verdict and the versions that
differ on top, one row per case). With many, two tables: per case, in how many
combinations it shows each status; then one row per run of neighbouring
combinations that have the same problem, naming its cases.
"""

from __future__ import annotations

from collections import defaultdict

from repromatrix.outcomes import (
    MISSING_CELL,
    STATUSES,
    CaseStatus,
    Verdict,
    verdict_attention,
    verdict_symbol,
)
from repromatrix.reports.markdown_text import code, fit, more_note, status_legend
from repromatrix.reports.view import (
    View,
    first_line,
    version_key,
)

# Up to this many combinations, they are the main table's columns; beyond it, rows.
COLUMNS_AT_MOST = 8
# Cases named on one combination's row of the main table, at most.
CASES_PER_ROW = 6


def problems(view: View, budget: int) -> str:
    """The main table: what is not passing everywhere, readable at a glance."""
    cases = view.problem_cases()
    title = "### Cases not passing everywhere\n\n"
    if not view.combinations:
        return ""
    if not cases:
        ran = sum(1 for c in view.combinations if c.cases)
        if ran == len(view.combinations):
            return title + f"Every case passes in all {ran} combinations.\n\n"
        return title + (
            f"Every case passes in the {ran} combinations whose cases ran (the other "
            f"{len(view.combinations) - ran}: see their verdicts).\n\n"
        )
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
    verdicts = [f"{verdict_symbol(c.verdict)} {c.verdict or '?'}" for c in view.combinations]
    rows = ["| *verdict* | " + " | ".join(verdicts) + " |\n"]
    for package in varying:
        cells = []
        for combination in view.combinations:
            text, resolved = view.version(combination, package)
            cells.append(text if resolved else f"*{text}*")
        rows.append(f"| *{package}* | " + " | ".join(cells) + " |\n")
    case_rows = [
        f"| {code(case_id)} | "
        + " | ".join(STATUSES[s].symbol for s in view.cells(case_id))
        + " |\n"
        for case_id in cases
    ]
    legend = status_legend({s for case_id in cases for s in view.cells(case_id)})
    fixed = header + rule + "".join(rows)
    table = fit(fixed, case_rows, budget - len(legend) - 2, more_note("cases", view))
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
        ordered = sorted(counts.items(), key=lambda kv: _status_attention(kv[0]))
        lines.append(
            f"| {code(case_id)} | "
            + " · ".join(f"{STATUSES[s].symbol} {n} {s}" for s, n in ordered)
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
            if not _quiet_or_skipped(statuses.get(case_id, MISSING_CELL))
        )
        skipped = sum(1 for s in statuses.values() if s == "skipped")
        if not shown and not skipped and combination.verdict in (Verdict.PASS, None):
            quiet += 1
            continue
        # A lost job's combinations share a row: their message names the job.
        lost = combination.verdict == Verdict.LOST
        alone = combination.verdict == Verdict.INSTALL_ERROR or not combination.cases
        key = (
            combination.verdict,
            shown,
            skipped,
            combination.message if lost else index if alone else None,
        )
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
    order = sorted(rows, key=lambda r: (verdict_attention(view.combinations[r[0]].verdict), r[0]))
    more = more_note("combinations", view)
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
    names = [f"{STATUSES[s].symbol} {code(labels[c])}" for c, s in shown[:CASES_PER_ROW]]
    if len(shown) > CASES_PER_ROW:
        names.append(f"+{len(shown) - CASES_PER_ROW} more")
    if verdict == Verdict.INSTALL_ERROR:
        names.append(code(first_line(first.message, 100)))
    elif not first.cases and first.message:
        names.append(first_line(first.message, 100))
    if skipped:
        names.append(f"{STATUSES[CaseStatus.SKIPPED].symbol} {skipped} skipped")
    symbol = verdict_symbol(verdict)
    versions = []
    for package in varying:
        seen = [view.version(view.combinations[i], package) for i in members]
        values = sorted({text for text, _ in seen}, key=version_key)
        text = f"{values[0]} – {values[-1]}" if len(values) > 2 else ", ".join(values)
        versions.append(text if all(resolved for _, resolved in seen) else f"*{text}*")
    cells = [label, f"{symbol} {verdict or '?'}", *versions, ", ".join(names) or "-"]
    return "| " + " | ".join(cells) + " |\n"


def _case_labels(cases: list[str]) -> dict[str, str]:
    """The shortest readable name of each case: the test name and parameter, or the
    whole id where two files hold the same test name."""
    names = {case_id: case_id.split("::")[-1] for case_id in cases}
    counts: dict[str, int] = defaultdict(int)
    for name in names.values():
        counts[name] += 1
    return {c: (name if counts[name] == 1 else c) for c, name in names.items()}


def _status_attention(word: str) -> int:
    row = STATUSES.get(word)
    return row.attention if row is not None else len(STATUSES)


def _quiet_or_skipped(word: str) -> bool:
    return STATUSES[word].quiet or word == CaseStatus.SKIPPED
