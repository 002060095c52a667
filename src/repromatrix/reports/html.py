"""index.html: the whole matrix at a glance, in one self-contained file.

A grid of combinations (rows) x cases (columns) coloured by status, with the
version columns between them: a version that differs from the row above is
highlighted, so the row where a colour changes shows which package moved. Hover
a cell for its error, click it for the message, traceback, repro and bisect
commands. Filters by package version and verdict; click a package's header to
sort by it; the URL's #fragment sets filters, sort or the open cell, so a view can be
linked. No external asset: inline CSS and JS, data embedded as JSON.
"""

from __future__ import annotations

import html
import json
from typing import Any

from packaging.version import InvalidVersion, Version

from repromatrix.outcomes import Verdict
from repromatrix.redact import redact_text
from repromatrix.verdicts.judge import case_repro, is_regression
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
    short_case,
    short_traceback,
)

# Text in a cell besides its colour (for colour-blind readers and for print).
CELL_MARK = {
    "passed": "✓",
    "regressed": "▼",
    "failed": "✗",
    "error": "!",
    "crashed": "C",
    "timed-out": "T",
    "known-broken": "K",
    "possibly-fixed": "?",
    "flaky": "~",
    "skipped": "–",
    "missing": "",
}
TRACEBACK_LINES = 60
TRACEBACK_CHARS = 6000
MESSAGE_CHARS = 2000


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
            f"<script>{SCRIPT}</script>\n",
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
    return sorted(counts.items(), key=lambda kv: VERDICT_RANK.get(kv[0], 99))


def _css() -> str:
    status_rules = "".join(
        f".s-{name}{{background:{colour}}}" for name, (_, colour, _) in STATUS_STYLE.items()
    )
    verdict_rules = "".join(
        f".v-{name}{{background:{colour};color:#fff}}" for name, (_, colour) in VERDICT_STYLE.items()
    )
    return CSS + status_rules + verdict_rules


def _header(view: View) -> str:
    results = view.results
    run = results.run
    summary = results.summary
    chips = "".join(
        f'<span class="chip v-{_e(v)}">{n} {_e(v)}</span>' for v, n in _by_rank(
            summary.verdicts if summary else {}
        )
    )
    exit_code = summary.exit_code if summary else 0
    status = (
        f'<strong class="{"bad" if exit_code else "good"}">'
        f"exit status {exit_code}: {_e(EXIT_TEXT[exit_code])}</strong>"
    )
    facts = [
        " ".join(filter(None, [_e(f.words), f"<code>{_e(f.value)}</code>" if f.code
                               else _e(f.value)]))
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
        where = ", ".join(combinations[:8]) + (f" (+{len(combinations) - 8})" if len(
            combinations
        ) > 8 else "")
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
        f'</summary><ul>{"".join(items)}{more}</ul></details>\n'
    )


def _version_key(text: str) -> tuple:
    try:
        return (0, Version(text))
    except InvalidVersion:
        return (1, text)


def _controls(view: View) -> str:
    selects = []
    verdicts = sorted(
        {c.verdict or "?" for c in view.combinations}, key=lambda v: VERDICT_RANK.get(v, 99)
    )
    options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in verdicts)
    selects.append(
        f'<label>verdict <select data-filter="verdict"><option value="">all</option>'
        f"{options}</select></label>"
    )
    for column, package in enumerate(view.packages):
        values = sorted({view.version(c, package)[0] for c in view.combinations}, key=_version_key)
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
        + '<label><input type="checkbox" id="problems"> only rows with problems</label>'
        + '<label>cases <input id="casefilter" placeholder="part of a case id"></label>'
        + '<span id="shown" class="muted"></span></section>\n'
    )


def _legend(view: View) -> str:
    seen = {cell_status(case) for c in view.combinations for case in c.cases}
    items = [
        f'<span class="key"><i class="sw s-{name}">{_e(CELL_MARK[name])}</i>{_e(meaning)}</span>'
        for name, (_, _, meaning) in STATUS_STYLE.items()
        if name in seen
    ]
    items.append('<span class="key"><i class="sw chg">1.2</i>version changed from the row above</span>')
    return f'<div class="legend">{"".join(items)}</div>\n'


def _grid(view: View) -> str:
    head = ['<th class="cid">combination</th><th>verdict</th>']
    for column, package in enumerate(view.packages):
        head.append(
            f'<th class="pkg" data-col="{column}" title="sort by {_e(package)}">{_e(package)}</th>'
        )
    if view.show_python:
        head.append('<th class="pkg py">python</th>')
    for index, case_id in enumerate(view.case_ids):
        head.append(
            f'<th class="case" data-case="{index}" title="{_e(case_id)}">'
            f"<span>{_e(short_case(case_id))}</span></th>"
        )
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
            changed = previous is not None and view.version(previous, package)[0] != text
            classes = "ver" + (" chg" if changed else "") + ("" if resolved else " req")
            cells.append(f'<td class="{classes}" title="{_e(package)} {_e(text)}">{_e(text)}</td>')
        if view.show_python:
            cells.append(f'<td class="ver">{_e(combination.environment.python or "-")}</td>')
        by_id = {c.id: c for c in combination.cases}
        for index, case_id in enumerate(view.case_ids):
            case = by_id.get(case_id)
            status = cell_status(case)
            hover = f"{case_id}\n{status}"
            if case is not None and case.message:
                hover += ": " + first_line(case.message, 240)
            cells.append(
                f'<td class="c s-{status}" data-c="{index}" title="{_e(hover)}">'
                f"{_e(CELL_MARK[status])}</td>"
            )
        problem = any(c.status not in ("passed", "skipped") for c in combination.cases) or (
            verdict not in (Verdict.PASS, Verdict.SKIPPED)
        )
        rows.append(
            f'<tr data-r="{row}" data-verdict="{_e(verdict)}"'
            f'{" data-problem" if problem else ""}>{"".join(cells)}</tr>\n'
        )
        previous = combination
    return (
        '<div class="gridwrap"><table id="grid"><thead><tr>'
        + "".join(head)
        + "</tr></thead><tbody>\n"
        + "".join(rows)
        + "</tbody></table></div>\n"
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
    """What the click panel shows; passing cells are described by the script itself."""
    combinations = []
    cells: dict[str, Any] = {}
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
            status = cell_status(case)
            if status == "passed":
                continue
            cells[f"{row}:{index_of[case.id]}"] = {
                "status": case.status,
                "regressed": is_regression(case),
                "change": case.change,
                "error_type": case.error_type,
                "message": case.message[:MESSAGE_CHARS],
                "traceback": short_traceback(case.traceback, TRACEBACK_LINES, TRACEBACK_CHARS),
                "attempts": case.attempts,
                "seconds": case.seconds,
                "known_issue": case.known_issue,
                "transitions": [
                    {"text": t.text, "bisect": t.bisect, "good": t.good_combination}
                    for t in case.transitions[:3]
                ],
                "repro": case_repro(combination, case.id),
            }
    return {
        "cases": view.case_ids,
        "packages": view.packages,
        "combinations": combinations,
        "cells": cells,
    }


CSS = """
*{box-sizing:border-box}
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
margin:0;padding:12px 16px;color:#1f2328;background:#fff}
h1{font-size:20px;margin:0 12px 0 0;display:inline-block}
h2{font-size:15px;margin:14px 0 6px}
header{display:flex;flex-wrap:wrap;align-items:center;gap:6px}
.chips{display:inline-flex;gap:6px;flex-wrap:wrap}
.chip{padding:2px 8px;border-radius:10px;font-weight:600}
.meta{flex-basis:100%;margin:6px 0}
.good{color:#1a7f37}.bad{color:#cf222e}.muted{color:#656d76}
code{font:12px ui-monospace,SFMono-Regular,Menlo,"DejaVu Sans Mono",monospace;
background:#f6f8fa;padding:1px 4px;border-radius:4px}
code.cmd{display:inline-block;margin-top:2px;user-select:all}
.regressions summary{cursor:pointer}.regressions summary h2{display:inline}
.regressions ul{margin:0;padding-left:18px;max-height:24vh;overflow:auto}
.regressions li{margin:3px 0}
.controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:10px 0;
padding:8px;background:#f6f8fa;border-radius:6px}
.controls select,.controls input{font:inherit;max-width:16em}
.legend{display:flex;flex-wrap:wrap;gap:12px;margin:6px 0 8px}
.key{display:inline-flex;align-items:center;gap:4px}
.sw{display:inline-block;min-width:22px;height:18px;border-radius:3px;text-align:center;
font-style:normal;color:#fff;font-weight:700;line-height:18px;padding:0 3px}
.sw.chg{background:#fffbe6;color:#1f2328;box-shadow:inset 3px 0 0 #d4a72c}
.gridwrap{overflow:auto;max-height:80vh;border:1px solid #d0d7de;border-radius:6px}
table{border-collapse:separate;border-spacing:0}
th,td{padding:3px 6px;border-bottom:1px solid #eaeef2;white-space:nowrap}
thead th{position:sticky;top:0;background:#f6f8fa;z-index:2;vertical-align:bottom;
border-bottom:1px solid #d0d7de}
th.cid{position:sticky;left:0;background:#fff;z-index:1;text-align:left;
font:600 12px ui-monospace,SFMono-Regular,Menlo,"DejaVu Sans Mono",monospace;cursor:pointer}
thead th.cid{z-index:3;background:#f6f8fa}
th.pkg{cursor:pointer}th.pkg.sorted{text-decoration:underline}
th.case{padding:4px 2px;font-weight:500}
th.case span{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;
max-height:11em;overflow:hidden;text-overflow:ellipsis}
td.verdict{font-weight:700;font-size:11px;text-align:center}
td.ver{font:12px ui-monospace,SFMono-Regular,Menlo,"DejaVu Sans Mono",monospace;color:#424a53;
max-width:14em;overflow:hidden;text-overflow:ellipsis}
td.ver.chg{background:#fffbe6;box-shadow:inset 3px 0 0 #d4a72c;font-weight:700;color:#1f2328}
td.ver.req{font-style:italic;color:#8c959f}
td.c{min-width:30px;text-align:center;color:#fff;font-weight:700;cursor:pointer;
border-right:2px solid #fff;border-bottom:2px solid #fff}
td.c.s-missing{color:#8c959f}
td.c.s-regressed{box-shadow:inset 0 0 0 2px #1f2328}
tr:hover td,tr:hover th.cid{filter:brightness(0.94)}
tr.neighbour th.cid{outline:3px solid #1f6feb;outline-offset:-3px}
tr.hidden{display:none}.colhidden{display:none}
td.c.selected{outline:3px solid #1f2328;outline-offset:-3px}
#detail{position:fixed;right:12px;bottom:12px;width:min(720px,calc(100vw - 24px));
max-height:60vh;overflow:auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;
box-shadow:0 8px 24px rgba(140,149,159,.3);padding:12px 14px;z-index:10}
#detail pre{background:#f6f8fa;padding:8px;border-radius:6px;overflow:auto;max-height:30vh;
font:12px ui-monospace,SFMono-Regular,Menlo,"DejaVu Sans Mono",monospace;white-space:pre-wrap}
#close{float:right;border:0;background:none;font-size:20px;cursor:pointer}
.env p{margin:4px 0}.env pre{font-size:11px;max-height:40vh;overflow:auto;background:#f6f8fa;
padding:8px}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var table = document.getElementById("grid");
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var nPkg = data.packages.length;
  var panel = document.getElementById("detail");
  var panelBody = document.getElementById("detail-body");

  function esc(s) {
    return String(s == null ? "" : s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  }
  function shq(s) {  // shlex.quote
    return /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'";
  }
  function versionCells(tr) {
    return Array.prototype.slice.call(tr.querySelectorAll("td.ver"), 0, nPkg);
  }
  function cmpVersion(a, b) {  // PEP 440 enough for sorting: numbers as numbers
    var pa = a.split(/[^0-9A-Za-z]+/), pb = b.split(/[^0-9A-Za-z]+/);
    for (var i = 0; i < Math.max(pa.length, pb.length); i++) {
      var x = pa[i] || "", y = pb[i] || "";
      var nx = /^\d+$/.test(x), ny = /^\d+$/.test(y);
      if (nx && ny && +x !== +y) return +x - +y;
      if (nx !== ny) return nx ? 1 : -1;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  }

  // Versions that differ from the previous visible row stand out: where a colour
  // changes between two rows, the highlighted version is what moved.
  function markChanges() {
    var previous = null, shown = 0;
    rows.forEach(function (tr) {
      if (tr.classList.contains("hidden")) return;
      shown++;
      var cells = versionCells(tr);
      cells.forEach(function (td, i) {
        var changed = previous !== null && previous[i] !== td.textContent;
        td.classList.toggle("chg", changed);
      });
      previous = cells.map(function (td) { return td.textContent; });
    });
    document.getElementById("shown").textContent =
      shown + " of " + rows.length + " combinations shown";
  }

  function applyFilters() {
    var verdict = document.querySelector("select[data-filter=verdict]").value;
    var pkgs = Array.prototype.slice.call(document.querySelectorAll("select[data-filter=pkg]"));
    var problems = document.getElementById("problems").checked;
    rows.forEach(function (tr) {
      var hide = (verdict && tr.dataset.verdict !== verdict) ||
        (problems && !tr.hasAttribute("data-problem"));
      var cells = versionCells(tr);
      pkgs.forEach(function (sel) {
        if (sel.value && cells[+sel.dataset.col].textContent !== sel.value) hide = true;
      });
      tr.classList.toggle("hidden", !!hide);
    });
    var text = document.getElementById("casefilter").value.toLowerCase();
    data.cases.forEach(function (id, i) {
      var hide = text && id.toLowerCase().indexOf(text) < 0;
      table.querySelectorAll("[data-case='" + i + "'],td[data-c='" + i + "']").forEach(
        function (el) { el.classList.toggle("colhidden", !!hide); });
    });
    markChanges();
  }

  function sortBy(col) {
    var order = [col];
    for (var i = 0; i < nPkg; i++) if (i !== col) order.push(i);
    rows.sort(function (a, b) {
      var va = versionCells(a), vb = versionCells(b);
      for (var k = 0; k < order.length; k++) {
        var c = cmpVersion(va[order[k]].textContent, vb[order[k]].textContent);
        if (c) return c;
      }
      return +a.dataset.r - +b.dataset.r;
    });
    rows.forEach(function (tr) { tbody.appendChild(tr); });
    table.querySelectorAll("th.pkg").forEach(function (th) {
      th.classList.toggle("sorted", +th.dataset.col === col);
    });
    markChanges();
  }

  function show(html) {
    panelBody.innerHTML = html;
    panel.hidden = false;
  }
  function clearMarks() {
    table.querySelectorAll(".selected").forEach(function (el) { el.classList.remove("selected"); });
    table.querySelectorAll("tr.neighbour").forEach(function (el) { el.classList.remove("neighbour"); });
  }
  function rowOf(id) {
    return rows.filter(function (tr) { return data.combinations[+tr.dataset.r].id === id; })[0];
  }

  function showCell(td) {
    var r = +td.parentNode.dataset.r, c = +td.dataset.c;
    var combo = data.combinations[r], caseId = data.cases[c];
    var cell = data.cells[r + ":" + c];
    clearMarks();
    td.classList.add("selected");
    var html = "<h2>" + esc(combo.id) + " · <code>" + esc(caseId) + "</code></h2>";
    if (!cell) {
      var found = td.classList.contains("s-missing") ? "not run in this combination" : "passed";
      show(html + "<p>" + found + "</p><p>repro: <code class=cmd>" +
        esc(combo.repro + " -- " + shq(caseId)) + "</code></p>");
      return;
    }
    html += "<p><b>" + esc(cell.regressed ? "REGRESSED (" + cell.status + ")" : cell.status) +
      "</b>" + (cell.error_type ? " <code>" + esc(cell.error_type) + "</code>" : "") +
      (cell.attempts.length > 1 ? " · attempts: " + esc(cell.attempts.join(", ")) : "") + "</p>";
    if (cell.known_issue) {
      html += "<p>known issue: <a href='" + esc(cell.known_issue.link) + "'>" +
        esc(cell.known_issue.link) + "</a> " + esc(cell.known_issue.note) + "</p>";
    }
    if (cell.change) html += "<p>against the baseline run: " + esc(cell.change) + "</p>";
    cell.transitions.forEach(function (t) {
      html += "<p>" + esc(t.text) + " (passes in " + esc(t.good) + ")" +
        (t.bisect ? "<br><code class=cmd>" + esc(t.bisect) + "</code>" : "") + "</p>";
      var other = rowOf(t.good);
      if (other) other.classList.add("neighbour");
    });
    if (cell.message) html += "<pre>" + esc(cell.message) + "</pre>";
    if (cell.traceback) html += "<details open><summary>traceback (end)</summary><pre>" +
      esc(cell.traceback) + "</pre></details>";
    html += "<p>repro: <code class=cmd>" + esc(cell.repro) + "</code></p>";
    show(html);
  }

  function showCombination(th) {
    var combo = data.combinations[+th.parentNode.dataset.r];
    clearMarks();
    var resolved = Object.keys(combo.resolved).map(function (k) {
      return esc(k) + " " + esc(combo.resolved[k]);
    }).join(", ");
    var requested = Object.keys(combo.requested).map(function (k) {
      return esc(k) + " " + esc(combo.requested[k]);
    }).join(", ");
    show("<h2>" + esc(combo.id) + " · " + esc(combo.verdict) + "</h2><p>" + esc(combo.reason) +
      "</p>" + (combo.message ? "<pre>" + esc(combo.message) + "</pre>" : "") +
      "<p>requested: " + requested + "</p><p>resolved" +
      (combo.python ? " (python " + esc(combo.python) + ")" : "") + ": " +
      (resolved || "nothing (not built)") + "</p><p>repro: <code class=cmd>" +
      esc(combo.repro) + "</code></p>");
  }

  table.addEventListener("click", function (event) {
    var td = event.target.closest("td.c");
    if (td) return showCell(td);
    var th = event.target.closest("tbody th.cid");
    if (th) return showCombination(th);
    var head = event.target.closest("th.pkg[data-col]");
    if (head) return sortBy(+head.dataset.col);
  });
  document.getElementById("close").addEventListener("click", function () {
    panel.hidden = true;
    clearMarks();
  });
  document.querySelectorAll(".controls select, .controls input").forEach(function (el) {
    el.addEventListener("input", applyFilters);
    el.addEventListener("change", applyFilters);
  });
  // Links into the report: index.html#ROW:COL opens a cell's details;
  // #verdict=V&PACKAGE=VERSION&problems=1&case=TEXT&sort=PACKAGE sets the controls.
  function fromHash() {
    var hash = decodeURIComponent(location.hash.slice(1));
    var cell = /^(\d+):(\d+)$/.exec(hash);
    if (cell) {
      var tr = rows.filter(function (r) { return r.dataset.r === cell[1]; })[0];
      var td = tr && tr.querySelector("td.c[data-c='" + cell[2] + "']");
      if (td) showCell(td);
      return;
    }
    var sort = null;
    hash.split("&").forEach(function (pair) {
      var at = pair.indexOf("="), key = pair.slice(0, at), value = pair.slice(at + 1);
      if (at < 0) return;
      if (key === "verdict") document.querySelector("select[data-filter=verdict]").value = value;
      else if (key === "problems") document.getElementById("problems").checked = value === "1";
      else if (key === "case") document.getElementById("casefilter").value = value;
      else if (key === "sort") sort = data.packages.indexOf(value);
      else {
        var column = data.packages.indexOf(key);
        var select = document.querySelector("select[data-filter=pkg][data-col='" + column + "']");
        if (select) select.value = value;
      }
    });
    if (sort !== null && sort >= 0) sortBy(sort);
    applyFilters();
  }
  markChanges();
  fromHash();
  document.body.dataset.ready = "1";
})();
"""
