"""reports/atlas/: index.html (one self-contained page), answers.csv (every answer)
and summary.md (the atlas in a few lines), rendered from atlas.json alone (asv's
publish: re-rendering runs nothing).

The page: per pair of axes a releases x releases grid coloured by answer (tested
solid, inferred hatched), each square opening its cells, the failing case, the
error, a registered issue's link and the repro command; the recommended set; where
answers change; the audit's accuracy.
"""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import itertools
import json
from importlib import resources
from pathlib import Path
from typing import Any

from repromatrix.hunts.atlas.query import recommend
from repromatrix.hunts.atlas.summary import audit_accuracy, transitions
from repromatrix.hunts.atlas.view import View, load_view
from repromatrix.results.folder import write_text_atomic

SYMBOL = {"works": "✓", "breaks": "✗", "conflict": "⊘", "untested": "·"}
CSV_FIELDS = (
    "package", "version", "other", "other_version", "status", "evidence", "case", "error",
    "link", "cells",
)  # fmt: skip


def render(out: Path) -> list[Path]:
    """The atlas in ``out`` rendered again from its atlas.json."""
    return write_report(load_view(out))


def write_report(view: View) -> list[Path]:
    folder = view.folder
    written = []
    for name, text in (
        ("index.html", render_html(view)),
        ("answers.csv", render_csv(view)),
        ("summary.md", render_summary(view)),
    ):
        write_text_atomic(folder / name, text)
        written.append(folder / name)
    return written


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _json(data: Any) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    # one part per joinpath: the package may load as a namespace's (MultiplexedPath)
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text("utf-8")


def _key(a: str, x: str, b: str, y: str) -> str:
    return f"{a}=={x}|{b}=={y}"


def render_html(view: View) -> str:
    universe = view.universe
    answers: dict[str, Any] = {}
    grids = []
    for a, b in itertools.combinations(universe.packages, 2):
        rows = []
        for x in reversed(universe.axes[a]):
            squares = []
            for y in universe.axes[b]:
                answer = view.answer((a, x), (b, y))
                key = _key(a, x, b, y)
                answers[key] = {
                    "title": f"{a} {x} + {b} {y}",
                    "status": answer.status,
                    "evidence": answer.evidence,
                    "case": answer.case,
                    "error": answer.error,
                    "link": answer.link,
                    "note": answer.note,
                    "cells": list(answer.cells),
                    "failures": [list(f) for f in answer.failures],
                }
                title = f"{a} {x} + {b} {y}: {answer.status}"
                title += f" ({answer.evidence})" if answer.evidence else ""
                squares.append(
                    f'<td class="sq {answer.status} {answer.evidence}" data-k="{_e(key)}" '
                    f'title="{_e(title)}">{SYMBOL[answer.status]}</td>'
                )
            rows.append(f"<tr><th>{_e(x)}</th>{''.join(squares)}</tr>")
        head = "".join(f'<th><span class="v">{_e(y)}</span></th>' for y in universe.axes[b])
        grids.append(
            f'<div><table class="grid"><thead><tr><th class="corner">{_e(a)} ↓ · {_e(b)} →'
            f"</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )
    cells = [
        {
            "pins": c.pins,
            "outcome": c.outcome,
            "failures": [dataclasses.asdict(f) for f in c.failures],
            "repro": c.repro,
        }
        for c in view.cells
    ]
    data = _json({"answers": answers, "cells": cells})
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>repromatrix compatibility atlas</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_asset("atlas.css")}</style></head><body>
<h1>Compatibility atlas</h1>
{_facts(view)}
{_recommended(view)}
<div class="legend">{_legend()}</div>
<div class="grids">{"".join(grids)}<div id="detail" class="panel">Click a square.</div></div>
{_changes(view)}
<script type="application/json" id="atlas-data">{data}</script>
<script>{_asset("atlas.js")}</script>
</body></html>
"""


def _facts(view: View) -> str:
    state, universe = view.state, view.universe
    axes = "; ".join(f"{p} {v[0]} … {v[-1]} ({len(v)})" for p, v in universe.axes.items())
    held = ", ".join(f"{p} {v}" for p, v in state.held.items()) or "none"
    statuses = [a.status for a in view.answers.values()]
    counts = ", ".join(f"{statuses.count(s)} {s}" for s in SYMBOL if statuses.count(s))
    inferred = sum(1 for a in view.answers.values() if a.evidence == "inferred")
    held_audits, audited = audit_accuracy(view)
    audit = (
        f"{held_audits} of {audited} inferred answers held when re-tested"
        if audited
        else ("no inferred answer audited yet")
    )
    run = state.runs[-1] if state.runs else None
    last = f"last run {run.started}: {run.cells} cells in {run.seconds:.0f} s" if run else ""
    cases = "".join(f"<li><code>{_e(c)}</code></li>" for c in state.cases)
    return (
        f'<div class="meta">axes: {_e(axes)} · held: {_e(held)} · strength {state.strength}</div>'
        f'<div class="meta">{len(view.cells)} cells tested; lower bound '
        f"{universe.lower_bound()} (the two largest axes' product); pairs: {_e(counts)} "
        f"({inferred} inferred) · {_e(audit)} · {_e(last)}</div>"
        f'<details class="meta"><summary>cases each cell runs</summary><ul>{cases}</ul></details>'
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


def _legend() -> str:
    keys = [
        ("works", "", "works (tested)"),
        ("works", "inferred", "works (inferred)"),
        ("breaks", "", "breaks (tested)"),
        ("breaks", "inferred", "breaks (inferred)"),
        ("conflict", "", "conflict (uv cannot install both)"),
        ("untested", "", "untested"),
    ]
    return "".join(
        f'<span class="key"><span class="sw {s} {e}"></span>{_e(t)}</span>' for s, e, t in keys
    )


def _changes(view: View) -> str:
    items = "".join(f"<li>{_e(change.text())}</li>" for change in transitions(view))
    return f"<h2>Where answers change</h2><ul>{items or '<li>nowhere</li>'}</ul>"


def render_csv(view: View) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for ((a, x), (b, y)), answer in view.answers.items():
        cells = ";".join(
            " ".join(f"{p}=={v}" for p, v in view.cells[i].pins.items()) for i in answer.cells
        )
        writer.writerow(
            (a, x, b, y, answer.status, answer.evidence, answer.case, answer.error,
             answer.link, cells)
        )  # fmt: skip
    return out.getvalue()


def render_summary(view: View) -> str:
    universe = view.universe
    statuses = [a.status for a in view.answers.values()]
    found = recommend(view, [])
    held_audits, audited = audit_accuracy(view)
    lines = [
        "# Compatibility atlas",
        "",
        "- axes: " + "; ".join(f"{p} {', '.join(v)}" for p, v in universe.axes.items()),
        f"- cells tested: {len(view.cells)}; lower bound {universe.lower_bound()}",
        "- pairs: " + ", ".join(f"{statuses.count(s)} {s}" for s in SYMBOL if statuses.count(s)),
        f"- audit: {held_audits} of {audited} inferred answers held",
    ]
    if view.state.runs:
        total = sum(r.seconds for r in view.state.runs)
        lines.append(f"- wall time of its runs: {total:.0f} s")
    if found["set"]:
        lines.append("- recommended: " + " ".join(f"{p}=={v}" for p, v in found["set"].items()))
    lines += ["", "## Where answers change", ""]
    lines += [f"- {change.text()}" for change in transitions(view)] or ["- nowhere"]
    return "\n".join(lines) + "\n"
