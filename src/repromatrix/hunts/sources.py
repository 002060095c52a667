"""Which source of the user's own package a hunt's answer is about.

A folder pin (``--pin mylib=.``) is built from the tree as it is when each cell is
built (environment/source_tree.py: its digest keys the cell). A hunt's record keeps
the tree its probes saw (``sources``: package -> commit, dirty flag, digest), and
says when the tree changed while the hunt ran (``sources_changed``): steps before
and after an edit tested different code, so the answer mixes the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from repromatrix.environment.source_tree import SourceTree, changed_text
from repromatrix.probe.observation import Observation


def note_sources(
    sources: dict[str, dict[str, Any]], changed: list[str], observation: Observation
) -> None:
    """One probe's trees into a record: the first tree of each package is kept; a
    later, different one is a line in ``changed``."""
    cell = observation.cell
    for package, record in (cell.sources if cell is not None else {}).items():
        seen = sources.get(package)
        if seen is None:
            sources[package] = dict(record)
            continue
        old, new = SourceTree.of_record(package, seen), SourceTree.of_record(package, record)
        line = f"{package} {changed_text(old, new)}"
        if old.digest != new.digest and line not in changed:
            changed.append(line)


def sources_of(observations: Iterable[Observation]) -> tuple[dict[str, dict], list[str]]:
    """``note_sources`` over many probes: (sources, changed)."""
    sources: dict[str, dict[str, Any]] = {}
    changed: list[str] = []
    for observation in observations:
        note_sources(sources, changed, observation)
    return sources, changed


def source_lines(sources: Mapping[str, Mapping[str, Any]], changed: Iterable[str]) -> list[str]:
    """A report's Markdown lines: ``- your source: `mylib . abc1234 + edits, sha256:…```
    and, where the tree moved during the hunt, the warning."""
    lines = [
        f"- your source: `{SourceTree.of_record(package, dict(record)).label()}`"
        for package, record in sources.items()
    ]
    moved = list(changed)
    if moved:
        lines.append(
            f"- **your source changed during this hunt** ({'; '.join(moved)}): the probes "
            "before and after the edit tested different code; run it again on a tree left alone"
        )
    return lines


def source_words(observation: Observation) -> str:
    """`` (your source: mylib . abc1234 + edits, sha256:…)`` for a one-line verdict
    (check's), "" when nothing was built from a folder."""
    cell = observation.cell
    if cell is None or not cell.sources:
        return ""
    labels = [SourceTree.of_record(p, dict(r)).label() for p, r in cell.sources.items()]
    return f" (your source: {', '.join(labels)})"
