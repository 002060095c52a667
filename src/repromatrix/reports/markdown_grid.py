"""summary.md's collapsed tables at the end: the full grid (every combination x every
case, with its versions) and every distribution's resolved versions.

Both are for looking things up, so they come last and get what budget is left; the
rows that do not fit are counted in a note saying where the full table is.
"""

from __future__ import annotations

from collections import defaultdict

from repromatrix.outcomes import STATUSES, verdict_attention, verdict_symbol
from repromatrix.reports.markdown_text import code, status_legend
from repromatrix.reports.view import (
    View,
    cell_status,
)
from repromatrix.results import CombinationResult


def grid(view: View, budget: int) -> str:
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
        + status_legend(seen, versions=True, sweep=view.sweep_package())
    )
    fixed = len(head) + len(header) + len(rule) + len(legend) + len(end) + 200

    rows = [_row(view, c) for c in view.combinations]
    # Choose rows by importance (verdict, then matrix order); show them in matrix order
    # with versions in bold where they changed from the row above.
    order = sorted(
        range(len(rows)),
        key=lambda i: (verdict_attention(view.combinations[i].verdict), i),
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
    symbol = verdict_symbol(combination.verdict)
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
        cells.append(STATUSES[cell_status(by_id.get(case_id))].symbol)
    return combination.id, "| " + " | ".join(cells) + " |\n"


def resolved_versions(view: View, budget: int) -> str:
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
