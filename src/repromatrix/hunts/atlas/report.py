"""reports/atlas/: index.html (one self-contained page, page.py), answers.csv (every
pair's answer, per case) and summary.md (the atlas in a few lines), rendered from
atlas.json alone (asv's publish: re-rendering runs nothing).

What a cell wrote reaches these files as text only: bounded (state.py), links
http(s) or nothing, no CSV cell that a spreadsheet would read as a formula, and in
summary.md (appended to the nightly's step summary) only through the inert Markdown
builders every post uses (github/markdown.py).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from repromatrix.github.markdown import code_span, text
from repromatrix.hunts.atlas import summary as facts
from repromatrix.hunts.atlas.page import render_html
from repromatrix.hunts.atlas.query import recommend
from repromatrix.hunts.atlas.state import safe_link
from repromatrix.hunts.atlas.universe import shown
from repromatrix.hunts.atlas.view import View, load_view
from repromatrix.outcomes import AnswerStatus
from repromatrix.results.folder import write_text_atomic

CSV_FIELDS = (
    "package", "version", "other", "other_version", "case", "status", "evidence", "rule",
    "passed", "runs", "cause", "signature", "error", "link", "note", "pair_status",
    "pair_evidence", "cells",
)  # fmt: skip
# What a spreadsheet takes for a formula at a cell's start (OWASP's CSV injection).
FORMULA = ("=", "+", "-", "@", "\t", "\r", "|", "%")
MAX_LINES = 400  # summary.md's lists, at most (the CSV holds everything)


def render(out: Path) -> list[Path]:
    """The atlas in ``out`` rendered again from its atlas.json."""
    return write_report(load_view(out))


def write_report(view: View) -> list[Path]:
    folder = view.folder
    written = []
    for name, rendered in (
        ("index.html", render_html(view)),
        ("answers.csv", render_csv(view)),
        ("summary.md", render_summary(view)),
    ):
        write_text_atomic(folder / name, rendered)
        written.append(folder / name)
    return written


def inert(text: object) -> str:
    """A CSV cell no spreadsheet evaluates: one that would start a formula is quoted
    with a leading apostrophe."""
    value = str(text)
    return "'" + value if value.startswith(FORMULA) else value


def render_csv(view: View) -> str:
    """One row per pair and case; the breaks first, grouped by cause (the causes in
    summary.md's order), then every other answer in pair order."""
    rank = {(c.case, c.key): i for i, c in enumerate(facts.causes(view))}
    rows: list[tuple[tuple[int, int], list[object]]] = []
    for n, (((a, x), (b, y)), answer) in enumerate(view.answers.items()):
        pair = (str(answer.status), str(answer.evidence or ""))
        for case in answer.cases or [None]:
            if case is None:  # a conflict: no case ran
                row = ["", *pair, answer.rule.name.lower() if answer.rule else "", 0, 0, "", "",
                       answer.error, "", answer.note, *pair, ""]  # fmt: skip
                order = (len(rank), n)
            else:
                cells = ";".join(
                    " ".join(f"{p}=={v}" for p, v in view.cells[i].pins.items())
                    for i in case.cells[:20]
                )
                row = [
                    case.case, str(case.status), str(case.evidence or ""),
                    case.rule.name.lower() if case.rule else "", case.passed, case.runs,
                    case.cause_line, case.cause, case.error, safe_link(case.link), case.note,
                    *pair, cells,
                ]  # fmt: skip
                broken = case.status == AnswerStatus.BREAKS
                order = (rank.get((case.case, case.cause), len(rank)) if broken else len(rank), n)
            rows.append((order, [a, x, b, y, *row]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for _, row in sorted(rows, key=lambda item: item[0]):
        writer.writerow([inert(v) for v in row])
    return out.getvalue()


def render_summary(view: View) -> str:
    universe = view.universe
    found = recommend(view, [])
    seconds, runs = facts.cell_seconds(view)
    by_cause = facts.causes(view)
    breaks = sum(1 for a in view.answers.values() if a.status == AnswerStatus.BREAKS)
    lines = [
        "# Compatibility atlas",
        "",
        "- axes: " + text("; ".join(f"{p} {', '.join(v)}" for p, v in universe.axes.items())),
        f"- cells tested: {len(view.cells)}; lower bound {universe.lower_bound()}",
        f"- pairs: {text(facts.counts_line(view))}",
        f"- breaks: {facts.counted(breaks, 'break')}, {facts.counted(len(by_cause), 'cause')}",
        "- audit: " + text(_audit_line(view)),
        f"- cell time: {seconds / 60:.0f} min over {facts.counted(len(view.state.cells), 'cell')}"
        f" ({facts.counted(runs, 'finished run')})",
    ]
    if found["set"]:
        pins = " ".join(f"{p}=={v}" for p, v in found["set"].items())
        lines.append("- recommended: " + code_span(pins))
    solo = facts.alone(view)
    if solo:
        lines += ["", "## Releases that fail on their own", ""]
        for value, answers in sorted(solo.items()):
            for case in answers:
                why = facts.brief(case.cause_line or case.error)
                lines.append(
                    f"- {text(shown([value]))}: {code_span(case.case)}: "
                    f"{text(f'{why} ({case.note})')}"
                )
    lines += ["", "## Breaks by cause", ""]
    lines += [f"- {text(cause.text(view))}" + (f"; rerun: {code_span(cause.repro)}" if cause.repro
              else "") for cause in by_cause[:MAX_LINES]] or ["- none"]  # fmt: skip
    three = facts.three_way(view)
    if three:
        lines += ["", "## Three-way failures", ""]
        lines += [f"- {text(t.text())}" for t in three[:MAX_LINES]]
    lines += ["", "## Where answers change", ""]
    changes = facts.transitions(view)[:MAX_LINES]
    lines += [f"- {text(change.text())}" for change in changes] or ["- nowhere"]
    return "\n".join(lines) + "\n"


def _audit_line(view: View) -> str:
    kinds = facts.audits_by_kind(view)
    if not kinds:
        return "no inferred answer audited yet"
    held = sum(h for h, _ in kinds.values())
    total = sum(n for _, n in kinds.values())
    detail = ", ".join(f"{kind} {h} of {n}" for kind, (h, n) in kinds.items())
    return f"{held} of {total} inferred answers held when re-tested ({detail})"
