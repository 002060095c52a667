"""index.html: one self-contained page (no request leaves it), rendered from the
stored atlas (report.py writes it).

Per pair of axes a releases x releases grid, each square one answer, coloured and
marked as outcomes.ATLAS_LEGEND says (inferred hatched); a release that fails on
its own is marked once on its row or column with its cause, its squares greyed, not
a grid of pair breaks. Each square opens its answer per case: the rule, the cause
(the failure's signature), the case's error, a registered link (http(s) only) and
the repro of a cell that failed of that cause. Above: the recommended set, the
breaks by cause, the releases that fail on their own, three-way failures; below:
where answers change.

Bounded for any atlas: at most ``MAX_SQUARES`` squares and ``MAX_CELLS`` cells in
the page's data (answers.csv holds every answer); every text escaped, the data
block's ``<``, ``>`` and ``&`` escaped too.
"""

from __future__ import annotations

import html
import itertools
import json
from importlib import resources
from typing import Any

from repromatrix.hunts.atlas.query import recommend
from repromatrix.hunts.atlas.rules import Answer
from repromatrix.hunts.atlas.state import safe_link
from repromatrix.hunts.atlas.summary import (
    alone,
    audits_by_kind,
    brief,
    causes,
    cell_seconds,
    counted,
    counts_line,
    three_way,
    transitions,
)
from repromatrix.hunts.atlas.universe import Value, shown
from repromatrix.hunts.atlas.view import View, repro_of
from repromatrix.outcomes import ATLAS_LEGEND, AnswerStatus, legend_row

MAX_SQUARES = 20_000
MAX_CELLS = 5_000
MAX_ITEMS = 200  # a list on the page (causes, changes), at most


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _json(data: Any) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    # one part per joinpath: the package may load as a namespace's (MultiplexedPath)
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text("utf-8")


def _key(a: str, x: str, b: str, y: str) -> str:
    return f"{a}=={x}|{b}=={y}"


def _kind(answer: Answer) -> int:
    """The legend row of a square (its class ``k<N>``)."""
    row = legend_row(answer.status, answer.evidence, alone=answer.alone is not None)
    return ATLAS_LEGEND.index(row)


def render_html(view: View) -> str:
    universe = view.universe
    solo = alone(view)
    answers: dict[str, Any] = {}
    shown_cells: dict[int, int] = {}  # index in view.cells -> index in the page's data
    grids: list[str] = []
    squares = 0
    for a, b in itertools.combinations(universe.packages, 2):
        size = len(universe.axes[a]) * len(universe.axes[b])
        if squares + size > MAX_SQUARES:
            grids.append(
                f"<p>{_e(a)} × {_e(b)}: {size} squares left out (answers.csv holds them)</p>"
            )
            continue
        squares += size
        rows = []
        for x in reversed(universe.axes[a]):
            cells = []
            for y in universe.axes[b]:
                answer = view.answer((a, x), (b, y))
                key = _key(a, x, b, y)
                answers[key] = _square_data(view, f"{a} {x} + {b} {y}", answer, shown_cells)
                row = ATLAS_LEGEND[_kind(answer)]
                title = f"{a} {x} + {b} {y}: {answer.status}"
                title += f" ({answer.evidence})" if answer.evidence else ""
                cells.append(
                    f'<td class="sq k{_kind(answer)}" data-k="{_e(key)}" title="{_e(title)}">'
                    f"{_e(row.symbol)}</td>"
                )
            rows.append(f"<tr>{_head(solo, (a, x), 'th')}{''.join(cells)}</tr>")
        head = "".join(_head(solo, (b, y), "th", vertical=True) for y in universe.axes[b])
        grids.append(
            f'<div><table class="grid"><thead><tr><th class="corner">{_e(a)} ↓ · {_e(b)} →'
            f"</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )
    cells = [None] * len(shown_cells)
    for index, at in shown_cells.items():
        c = view.cells[index]
        cells[at] = {"pins": c.pins, "outcome": str(c.outcome), "ran": c.tested}
    data = _json({"answers": answers, "cells": cells})
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>repromatrix compatibility atlas</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_asset("atlas.css")}{_legend_css()}</style></head><body>
<h1>Compatibility atlas</h1>
{_facts(view)}
{_recommended(view)}
<div class="legend">{_legend()}</div>
{_alone(view, solo)}
{_causes(view)}
{_three_way(view)}
<div class="grids">{"".join(grids)}<div id="detail" class="panel">Click a square.</div></div>
{_changes(view)}
<script type="application/json" id="atlas-data">{data}</script>
<script>{_asset("atlas.js")}</script>
</body></html>
"""


def _square_data(view: View, title: str, answer: Answer, shown_cells: dict[int, int]) -> dict:
    def cell_refs(indexes: tuple[int, ...]) -> list[int]:
        out = []
        for i in indexes[:20]:
            if i not in shown_cells and len(shown_cells) >= MAX_CELLS:
                continue
            out.append(shown_cells.setdefault(i, len(shown_cells)))
        return out

    return {
        "title": title,
        "status": str(answer.status),
        "evidence": str(answer.evidence or ""),
        "note": answer.note,
        "error": answer.error,
        "runs": f"{answer.passed}/{answer.runs}" if answer.runs else "",
        "cases": [
            {
                "case": c.case,
                "status": str(c.status),
                "evidence": str(c.evidence or ""),
                "note": c.note,
                "cause": c.cause_line,
                "error": c.error,
                "link": safe_link(c.link),
                "runs": f"{c.passed}/{c.runs}" if c.runs else "",
                "cells": cell_refs(c.cells),
                "repro": repro_of(view, c.cells[0], c.case)
                if c.cells and c.status == AnswerStatus.BREAKS
                else "",
            }
            for c in answer.cases
        ],
    }


def _head(solo: dict[Value, list], value: Value, tag: str, *, vertical: bool = False) -> str:
    text = f'<span class="v">{_e(value[1])}</span>' if vertical else _e(value[1])
    if value not in solo:
        return f"<{tag}>{text}</{tag}>"
    why = "; ".join(f"{c.case}: {brief(c.cause_line or c.error)}" for c in solo[value])
    mark = legend_row(AnswerStatus.BREAKS, None, alone=True).symbol
    return f'<{tag} class="alone" title="fails on its own: {_e(why)}">{_e(mark)} {text}</{tag}>'


def _legend_css() -> str:
    rules = []
    for i, row in enumerate(ATLAS_LEGEND):
        colour = row.colour
        fill = (
            f"repeating-linear-gradient(45deg,{colour} 0 4px,#fff 4px 7px)"
            if row.hatched
            else colour
        )
        text = "#57606a" if row.status == AnswerStatus.UNTESTED else "#fff"
        rules.append(f".k{i}{{background:{fill};color:{text}}}")
    return "".join(rules)


def _legend() -> str:
    return "".join(
        f'<span class="key"><span class="sw k{i}">{_e(row.symbol)}</span>{_e(row.text)}</span>'
        for i, row in enumerate(ATLAS_LEGEND)
    )


def _facts(view: View) -> str:
    state, universe = view.state, view.universe
    axes = "; ".join(f"{p} {v[0]} … {v[-1]} ({len(v)})" for p, v in universe.axes.items())
    held = ", ".join(f"{p} {v}" for p, v in state.held.items()) or "none"
    kinds = audits_by_kind(view)
    audit = (
        ", ".join(f"{kind}: {h} of {n} held" for kind, (h, n) in kinds.items())
        if kinds
        else "no inferred answer audited yet"
    )
    seconds, runs = cell_seconds(view)
    case_list = "".join(f"<li><code>{_e(c)}</code></li>" for c in state.cases)
    return (
        f'<div class="meta">axes: {_e(axes)} · held: {_e(held)} · strength {state.strength}</div>'
        f'<div class="meta">{len(view.cells)} cells tested; lower bound '
        f"{universe.lower_bound()} (the two largest axes' product); cell time "
        f"{seconds / 60:.0f} min ({counted(runs, 'finished run')})</div>"
        f'<div class="meta">pairs: {_e(counts_line(view))}</div>'
        f'<div class="meta">audit: {_e(audit)}</div>'
        + "".join(f'<div class="meta">not counted: {_e(line)}</div>' for line in view.old_trees())
        + f'<details class="meta"><summary>cases each cell runs</summary><ul>{case_list}</ul>'
        "</details>"
    )


def _recommended(view: View) -> str:
    found = recommend(view, [])
    if found["set"] is None:
        body = "no tested set of these versions works yet"
    else:
        pins = " ".join(f"{p}=={v}" for p, v in found["set"].items())
        repro = found["cells"][0]["repro"] if found["cells"] else ""
        body = f"<b><code>{_e(pins)}</code></b> ran green as one cell"
        body += f"<br>rerun: <code>{_e(repro)}</code>" if repro else ""
    if found["newer"]:
        newer = " ".join(f"{p}=={v}" for p, v in found["newer"].items())
        body += (
            f"<br>newer, every pair known to work (not yet run together): <code>{_e(newer)}</code>"
        )
    return f'<div class="panel" id="recommended"><h2>Recommended set</h2>{body}</div>'


def _alone(view: View, solo: dict[Value, list]) -> str:
    if not solo:
        return ""
    items = "".join(
        f"<li><b>{_e(shown([value]))}</b>: <code>{_e(c.case)}</code> "
        f"{_e(brief(c.cause_line or c.error))}"
        f' <span class="meta">({_e(c.note)})</span></li>'
        for value, found in sorted(solo.items())
        for c in found
    )
    return f'<h2>Releases that fail on their own</h2><ul id="alone">{items}</ul>'


def _causes(view: View) -> str:
    found = causes(view)
    total = sum(1 for a in view.answers.values() if a.status == AnswerStatus.BREAKS)
    items = []
    for cause in found[:MAX_ITEMS]:
        link = safe_link(cause.link)
        after = f' <a href="{_e(link)}">{_e(link)}</a>' if link else ""
        repro = f"<br><code>{_e(cause.repro)}</code>" if cause.repro else ""
        items.append(f"<li>{_e(cause.text(view))}{after}{repro}</li>")
    return (
        f'<h2>Breaks by cause</h2><div class="meta">{counted(total, "break")}, '
        f"{counted(len(found), 'cause')}</div>"
        f'<ul id="causes">{"".join(items) or "<li>none</li>"}</ul>'
    )


def _three_way(view: View) -> str:
    found = three_way(view)
    if not found:
        return ""
    items = "".join(f"<li>{_e(t.text())}</li>" for t in found[:MAX_ITEMS])
    return f'<h2>Three-way failures</h2><ul id="three-way">{items}</ul>'


def _changes(view: View) -> str:
    items = "".join(f"<li>{_e(change.text())}</li>" for change in transitions(view)[:MAX_ITEMS])
    return f"<h2>Where answers change</h2><ul>{items or '<li>nowhere</li>'}</ul>"
