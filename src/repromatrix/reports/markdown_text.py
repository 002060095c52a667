"""The Markdown pieces every section of summary.md is made of: inline code and code
blocks that survive whatever text they hold, a section cut to its share of the
budget with a note saying what was left out, and the status legend under a table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from repromatrix.github.markdown import code_block, code_span
from repromatrix.outcomes import STATUS_TABLE
from repromatrix.reports.view import View

__all__ = ["code", "code_block", "fit", "more_note", "status_legend"]


def code(text: str) -> str:
    """An inline code span that survives backticks and pipes in ``text`` (a table cell
    or not: summary.md's spans are the same everywhere)."""
    return code_span(text, cell=True)


def fit(
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


def more_note(what: str, view: View) -> Callable[[int], str]:
    return lambda n: f"\n*… {n} more {what} not shown here: see index.html in {view.location}*\n\n"


def status_legend(seen: set[str], *, versions: bool = False, sweep: str | None = None) -> str:
    parts = [f"{row.symbol} {row.word}" for row in STATUS_TABLE if row.word in seen]
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
