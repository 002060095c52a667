"""index.html: the whole matrix at a glance, in one self-contained file.

A grid of combinations (rows) x cases (columns) coloured by status, with the
version columns between them: a version that differs from the row above is
highlighted, so the row where a colour changes shows which package moved. Hover
a cell for its error, click it for the message, traceback, repro and bisect
commands. Filters by package version and verdict; click a package's header to
sort by it; the URL's #fragment sets filters, sort or the open cell, so a view can be
linked. No external asset: the CSS and JS (assets/report.css, assets/report.js, package
files) are inlined, and the data is embedded as JSON.
"""

from __future__ import annotations

import functools
import html
import json
from importlib import resources
from typing import Any

from repromatrix.outcomes import (
    MISSING_CELL,
    REGRESSED_CELL,
    STATUS_TABLE,
    VERDICT_TABLE,
    VERDICTS,
    CaseStatus,
    Verdict,
    verdict_attention,
)
from repromatrix.redact import redact_text
from repromatrix.reports import environment
from repromatrix.reports.view import (
    EXIT_TEXT,
    View,
    cell_status,
    run_facts,
    short_traceback,
    split_case,
    version_key,
)
from repromatrix.results import CombinationResult
from repromatrix.results.bulk import without_cycle_collection
from repromatrix.verdicts import case_repro

# Rows laid out before the script runs (it then lays out those near the view).
FIRST_ROWS = 100
# A version cell's text longer than this is cut by the CSS: its whole text on hover.
VERSION_SHOWN = 16
TRACEBACK_LINES = 60
TRACEBACK_CHARS = 6000
MESSAGE_CHARS = 2000


@without_cycle_collection
def render(view: View) -> str:
    results = view.results
    summary = results.summary
    counts = summary.verdicts if summary else {}
    title = "repromatrix · " + " · ".join(f"{n} {v}" for v, n in _by_rank(counts))
    body = "".join(
        [
            _header(view),
            _regressions(view),
            _controls(view),
            _legend(view),
            _grid(view),
            _environment(view),
            '<aside id="detail" hidden><button id="close" title="close">×</button>'
            '<div id="detail-body"></div></aside>\n',
            f'<script type="application/json" id="data">{_json(_data(view))}</script>\n',
            f"<script>{asset('report.js')}</script>\n",
            # Without the script every row is shown.
            "<noscript><style>#grid tr.off{display:table-row}</style></noscript>\n",
        ]
    )
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_css()}</style></head>\n"
        f'<body data-ready="0">\n{body}</body></html>\n'
    )
    return redact_text(page)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _json(data: Any) -> str:
    """JSON that cannot end the <script> element it sits in."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _by_rank(counts: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: verdict_attention(kv[0]))


@functools.cache
def asset(name: str) -> str:
    """A file of reports/assets, as text (package data: works from a wheel too)."""
    return resources.files("repromatrix.reports").joinpath("assets", name).read_text("utf-8")


def _css() -> str:
    status_rules = "".join(f".s-{row.word}{{background:{row.colour}}}" for row in STATUS_TABLE)
    verdict_rules = "".join(
        f".v-{row.verdict}{{background:{row.colour};color:#fff}}" for row in VERDICT_TABLE
    )
    return asset("report.css") + status_rules + verdict_rules


def _header(view: View) -> str:
    results = view.results
    summary = results.summary
    chips = "".join(
        f'<span class="chip v-{_e(v)}">{n} {_e(v)}</span>'
        for v, n in _by_rank(summary.verdicts if summary else {})
    )
    exit_code = summary.exit_code if summary else 0
    status = (
        f'<strong class="{"bad" if exit_code else "good"}">'
        f"exit status {exit_code}: {_e(EXIT_TEXT[exit_code])}</strong>"
    )
    facts = [
        " ".join(
            filter(None, [_e(f.words), f"<code>{_e(f.value)}</code>" if f.code else _e(f.value)])
        )
        for f in run_facts(view)
    ]
    meta = " · ".join(facts)
    return (
        f'<header><h1>repromatrix</h1><div class="chips">{chips}</div>'
        f'<p class="meta">{status}<br>{meta}</p></header>\n'
    )


def _regressions(view: View) -> str:
    changes = view.results.regressions
    if not changes:
        return ""
    seen: dict[tuple[str, str], list[str]] = {}
    bisect: dict[tuple[str, str], str] = {}
    for change in changes:
        step = change.transition
        key = (change.case, step.text if step else change.text)
        seen.setdefault(key, []).append(change.combination)
        if step and step.bisect:
            bisect[key] = step.bisect
    items = []
    for (case_id, text), combinations in list(seen.items())[:200]:
        where = ", ".join(combinations[:8]) + (
            f" (+{len(combinations) - 8})" if len(combinations) > 8 else ""
        )
        command = (
            f'<br><code class="cmd">{_e(bisect[(case_id, text)])}</code>'
            if (case_id, text) in bisect
            else ""
        )
        items.append(
            f"<li><code>{_e(case_id)}</code>: <b>{_e(text)}</b> "
            f'<span class="muted">in {_e(where)}</span>{command}</li>'
        )
    more = f"<li>… {len(seen) - 200} more in results.json</li>" if len(seen) > 200 else ""
    return (
        f'<details class="regressions" open><summary><h2>Regressions ({len(seen)})</h2>'
        f"</summary><ul>{''.join(items)}{more}</ul></details>\n"
    )


def _controls(view: View) -> str:
    selects = []
    verdicts = sorted({c.verdict or "?" for c in view.combinations}, key=verdict_attention)
    options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in verdicts)
    selects.append(
        f'<label>verdict <select data-filter="verdict"><option value="">all</option>'
        f"{options}</select></label>"
    )
    for column, package in enumerate(view.packages):
        values = sorted({view.version(c, package)[0] for c in view.combinations}, key=version_key)
        if len(values) < 2:
            continue
        options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
        selects.append(
            f'<label>{_e(package)} <select data-filter="pkg" data-col="{column}">'
            f'<option value="">all</option>{options}</select></label>'
        )
    return (
        '<section class="controls">'
        + "".join(selects)
        + '<label title="rows and case columns that are not all passing"><input type="checkbox" '
        'id="problems"> problems only</label>'
        + '<label>cases <input id="casefilter" placeholder="part of a case id"></label>'
        + '<span id="shown" class="muted"></span>'
        + '<span id="attention" hidden>what needs attention first · <a href="#all">'
        + f"show the full grid ({len(view.combinations)} combinations)</a></span></section>\n"
    )


def _legend(view: View) -> str:
    seen = {cell_status(case) for c in view.combinations for case in c.cases}
    items = [
        f'<span class="key"><i class="sw s-{row.word}">{_e(row.mark)}</i>{_e(row.meaning)}</span>'
        for row in STATUS_TABLE
        if row.word in seen
    ]
    sweep = view.sweep_package()
    if sweep is not None:
        items.append(
            '<span class="key"><i class="sw edge">▲</i>transition: an outcome changes from the '
            f"row above (this tier moves {_e(sweep)} only)</span>"
        )
    else:
        items.append(
            '<span class="key"><i class="sw chg">1.2</i>version changed from the row above</span>'
        )
    return f'<div class="legend">{"".join(items)}</div>\n'


def _columns(view: View) -> list[tuple[str, list[int]]]:
    """The case columns grouped by file, files in first-seen order: (file, indexes
    into view.case_ids)."""
    groups: dict[str, list[int]] = {}
    for index, case_id in enumerate(view.case_ids):
        groups.setdefault(split_case(case_id)[0], []).append(index)
    return list(groups.items())


def _case_header(index: int, case_id: str, quiet: bool) -> str:
    _file, name, param = split_case(case_id)
    shown = f'<span class="nm">{_e(name)}</span>'
    if param:
        shown += f'<b class="prm">{_e(param)}</b>'
    return (
        f'<th class="case" data-case="{index}"{" data-quiet" if quiet else ""} '
        f'title="{_e(case_id)}"><div class="v">{shown}</div></th>'
    )


def _grid(view: View) -> str:
    columns = _columns(view)
    order = [index for _file, indexes in columns for index in indexes]
    problems = set(view.problem_cases())
    sweep = view.sweep_package() is not None
    transitions = view.transition_rows() if sweep else set()
    fixed = 2 + len(view.packages) + view.show_python
    top = ['<th class="cid" rowspan="2">combination</th><th rowspan="2">verdict</th>']
    for column, package in enumerate(view.packages):
        top.append(
            f'<th class="pkg" rowspan="2" data-col="{column}" title="sort by {_e(package)}">'
            f"{_e(package)}</th>"
        )
    if view.show_python:
        top.append('<th class="pkg py" rowspan="2">python</th>')
    for file, indexes in columns:
        top.append(
            f'<th class="file" colspan="{len(indexes)}" '
            f'data-cases="{",".join(map(str, indexes))}" title="{_e(file)}">'
            f"<span>{_e(file or 'cases')}</span></th>"
        )
    names = [_case_header(i, view.case_ids[i], view.case_ids[i] not in problems) for i in order]
    # A cell's hover text and details come from the page's data when asked for (the
    # script): 2,000 combinations x their cases stay a light page.
    marks = {row.word: f"{_e(row.mark)}</td>" for row in STATUS_TABLE}
    rows = []
    previous = None
    for row, combination in enumerate(view.combinations):
        verdict = combination.verdict or "?"
        cells = [
            f'<th class="cid" title="{_e(combination.verdict_reason)}">{_e(combination.id)}</th>'
            f'<td class="verdict v-{_e(verdict)}">{_e(verdict)}</td>'
        ]
        for package in view.packages:
            text, resolved = view.version(combination, package)
            changed = (
                not sweep and previous is not None and view.version(previous, package)[0] != text
            )
            classes = "ver" + (" chg" if changed else "") + ("" if resolved else " req")
            hover = f' title="{_e(text)}"' if len(text) > VERSION_SHOWN else ""
            cells.append(f'<td class="{classes}"{hover}>{_e(text)}</td>')
        if view.show_python:
            cells.append(f'<td class="ver">{_e(combination.environment.python or "-")}</td>')
        statuses = view.statuses[row]
        for index in order:
            status = statuses.get(view.case_ids[index], MISSING_CELL)
            cells.append(f'<td class="c s-{status}" data-c="{index}">{marks[status]}')
        # Past the first screenfuls a row waits for the script, which lays out the rows
        # near the view only (report.js): a page of 2,000 rows paints at once.
        classes = " ".join(
            name
            for name, on in (("transition", row in transitions), ("off", row >= FIRST_ROWS))
            if on
        )
        flags = (" data-problem" if _is_problem_row(combination) else "") + (
            f' class="{classes}"' if classes else ""
        )
        rows.append(
            f'<tr data-r="{row}" data-verdict="{_e(verdict)}"{flags}>{"".join(cells)}</tr>\n'
        )
        previous = combination
    return (
        f'<div class="gridwrap"><table id="grid" data-fixed="{fixed}"><thead>'
        f'<tr class="files">{"".join(top)}</tr><tr class="names">{"".join(names)}</tr>'
        "</thead><tbody>\n" + "".join(rows) + "</tbody></table></div>\n"
    )


def _is_problem_row(combination: CombinationResult) -> bool:
    """A row the "problems only" view keeps: a case that is not passed or skipped, or
    a verdict other than PASS and SKIPPED."""
    quiet = (CaseStatus.PASSED, CaseStatus.SKIPPED)
    return any(c.status not in quiet for c in combination.cases) or (
        combination.verdict not in (Verdict.PASS, Verdict.SKIPPED)
    )


def _environment(view: View) -> str:
    host = view.results.run.host or {}
    collected = host.get("collect_env") or {}
    pairs = environment.headline(collected)
    line = " · ".join(f"<b>{_e(k)}</b> {_e(v)}" for k, v in pairs) or (
        "torch.utils.collect_env: " + _e(collected.get("error") or "not collected")
    )
    text = collected.get("text", "")
    full = (
        f"<details><summary>python -m torch.utils.collect_env (in "
        f"{_e(collected.get('combination', '?'))})</summary><pre>{_e(text)}</pre></details>"
        if text
        else ""
    )
    platform = _e(host.get("platform", ""))
    gpus = ", ".join(host.get("gpus") or []) or "none"
    return (
        f'<section class="env"><h2>Environment</h2><p>{line}</p>'
        f'<p class="muted">host: {platform}, {_e(host.get("cpus", "?"))} CPUs, GPUs: {_e(gpus)}'
        f"</p>{full}</section>\n"
    )


def _data(view: View) -> dict[str, Any]:
    """What the script needs: each combination's facts, the cells that are not passing
    (what the click panel shows; a passing cell is described by the script itself),
    with their texts kept once in ``strings`` (the same error in many combinations is
    written once), and the verdicts' order of attention."""
    combinations = []
    cells: dict[str, Any] = {}
    strings: dict[str, int] = {}

    def text(value: str) -> int:
        return strings.setdefault(value, len(strings))

    index_of = {case_id: i for i, case_id in enumerate(view.case_ids)}
    for row, combination in enumerate(view.combinations):
        combinations.append(
            {
                "id": combination.id,
                "verdict": combination.verdict,
                "reason": combination.verdict_reason,
                "repro": case_repro(combination),
                "message": combination.message,
                "requested": combination.requested,
                "resolved": combination.resolved,
                "python": combination.environment.python,
            }
        )
        for case in combination.cases:
            status = view.statuses[row][case.id]
            if status == CaseStatus.PASSED:
                continue
            cells[f"{row}:{index_of[case.id]}"] = {
                "status": case.status,
                "regressed": status == REGRESSED_CELL,
                "change": case.change,
                "error_type": case.error_type,
                "message": text(case.message[:MESSAGE_CHARS]),
                "traceback": text(
                    short_traceback(case.traceback, TRACEBACK_LINES, TRACEBACK_CHARS)
                ),
                "attempts": case.attempts,
                "seconds": case.seconds,
                "known_issue": case.known_issue,
                "transitions": [
                    {"text": t.text, "bisect": t.bisect, "good": t.good_combination}
                    for t in case.transitions[:3]
                ],
                "repro": case_repro(combination, case.id),
            }
    verdicts = {c.verdict for c in view.combinations if c.verdict}
    return {
        "cases": view.case_ids,
        "packages": view.packages,
        "combinations": combinations,
        "cells": cells,
        "strings": list(strings),
        "sweep": view.sweep_package(),
        # Verdict -> its order of attention; "attention": whether the page opens on the
        # rows that need it (some verdict is not quiet). Not in a sweep-like tier: its
        # whole ladder, the rows where an outcome changes marked, is what to look at.
        "rank": {v: verdict_attention(v) for v in verdicts},
        "attention": view.sweep_package() is None
        and any(not VERDICTS[v].quiet for v in verdicts if v in VERDICTS),
    }
