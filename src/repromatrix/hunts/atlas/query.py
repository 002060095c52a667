"""``atlas query`` and ``atlas recommend``: answers read from the stored atlas (pure
and fast: atlas.json, no index, no uv, nothing run).

query PKG==VER OTHER: for each release of OTHER, works / breaks / flaky / conflict /
untested, with its evidence and the rule that gives it (its note: "transformers
4.56.2 fails with every partner tried (4 cells)"), the cause (the failure's
signature), the case's own error line, a registered issue's link and the repro of a
cell that failed of that cause; and each case's own answer where they differ.

recommend [--pin PKG==VER ...]: the newest set of the axes' versions that ran green
as one cell with the pins (newest: the first axis's version first, then the next),
the cells that show it, and a newer set whose every pair is known to work where
one exists (not yet run together), never one holding a known failing triple.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError
from repromatrix.hunts.atlas.rules import Answer, CaseAnswer
from repromatrix.hunts.atlas.universe import ABSENT
from repromatrix.hunts.atlas.view import View, load_view, repro_of
from repromatrix.names import canonicalize_name
from repromatrix.outcomes import AnswerStatus, CellOutcome, legend_row


def parse_exact(text: str, view: View, what: str = "PKG==VER") -> tuple[str, str]:
    """``transformers==4.56.2`` as an axis and one of its releases in the atlas
    (``trl==absent`` for an optional axis's cells without it)."""
    package, sep, version = text.partition("==")
    package = canonicalize_name(package.strip())
    version = version.strip()
    if not sep or not package or not version:
        raise UserError(f"{text!r}: give {what}, e.g. transformers==4.56.2")
    axes = view.universe.axes
    if package not in axes:
        raise UserError(f"{text!r}: {package} is not an axis of the atlas ({', '.join(axes)})")
    if version not in axes[package]:
        raise UserError(
            f"{text!r}: {package} {version} is not in the atlas "
            f"(its releases: {', '.join(axes[package])})"
        )
    return package, version


def _said(found: Answer | CaseAnswer) -> dict[str, Any]:
    """What every answer says: its status, evidence, rule and note, its runs."""
    return {
        "status": str(found.status),
        "evidence": str(found.evidence) if found.evidence else None,
        "rule": found.rule.name.lower() if found.rule else None,
        "note": found.note or None,
        "passed": found.passed,
        "runs": found.runs,
    }


def case_entry(view: View, found: CaseAnswer) -> dict[str, Any]:
    out: dict[str, Any] = {"case": found.case, **_said(found), "cells": list(found.cells)}
    if found.status == AnswerStatus.BREAKS:
        out.update(
            cause=found.cause_line or None,
            signature=found.cause or None,
            error=found.error or None,
            link=found.link or None,
            alone=" ".join(found.alone) if found.alone else None,
        )
        if found.cells:
            out["repro"] = repro_of(view, found.cells[0], found.case)
    return out


def entry(view: View, version: str, answer: Answer) -> dict[str, Any]:
    """One release's answer as --json shows it."""
    head = answer.headline
    out: dict[str, Any] = {
        "version": version,
        **_said(answer),
        "case": head.case if head and answer.status == AnswerStatus.BREAKS else None,
    }
    if answer.status == AnswerStatus.CONFLICT:
        out["error"] = answer.error
    cases = [case_entry(view, c) for c in answer.cases]
    if head is not None and answer.status == AnswerStatus.BREAKS:
        first = cases[0]
        out.update({k: first.get(k) for k in ("cause", "signature", "error", "link", "alone")})
        if "repro" in first:
            out["repro"] = first["repro"]
    out["cells"] = [
        {"pins": view.cells[i].pins, "outcome": view.cells[i].outcome} for i in answer.cells
    ]
    out["cases"] = cases
    return out


def query(view: View, pin: str, other: str) -> dict[str, Any]:
    package, version = parse_exact(pin, view)
    name = canonicalize_name(other)
    if name not in view.universe.axes:
        axes = ", ".join(view.universe.axes)
        raise UserError(f"{other!r}: not an axis of the atlas ({axes})")
    if name == package:
        raise UserError(f"{other!r}: give another axis than {package}")
    versions = [
        entry(view, v, view.answer((package, version), (name, v))) for v in view.universe.axes[name]
    ]
    found = {"package": package, "version": version, "other": name, "versions": versions}
    return {**found, **about(view)}


def about(view: View) -> dict[str, list[str]]:
    """Which tree of a held folder pin the answers are about, and the cells tested on
    an old one (not counted); nothing for an atlas without folder pins."""
    sources, old = view.sources(), view.old_trees()
    return {**({"sources": sources} if sources else {}), **({"old_trees": old} if old else {})}


def about_lines(found: dict[str, Any]) -> list[str]:
    return [f"  about your source: {line}" for line in found.get("sources", [])] + [
        f"  not counted: {line}; the next atlas run re-tests them"
        for line in found.get("old_trees", [])
    ]


def query_command(out: Path, pin: str, other: str, *, as_json: bool) -> int:
    found = query(load_view(out), pin, other)
    if as_json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"{found['package']} {found['version']} with each release of {found['other']}:")
    for line in about_lines(found):
        print(line)
    for item in found["versions"]:
        for line in _lines(item):
            print(line)
    return 0


def _lines(item: dict[str, Any]) -> list[str]:
    """A release's answer as a person reads it: the answer, its cause or why, then
    each case whose answer differs."""
    row = legend_row(item["status"], item["evidence"], alone=bool(item.get("alone")))
    how = f" ({item['evidence']})" if item["evidence"] else ""
    counted = item["runs"] and item["status"] != AnswerStatus.UNTESTED
    runs = f" {item['passed']}/{item['runs']} runs passed" if counted else ""
    lines = [f"  {row.symbol} {item['version']:<12} {item['status']}{how}{runs}"]
    pad = " " * 17
    if item["status"] == AnswerStatus.CONFLICT:
        lines.append(f"{pad}uv cannot install them together: {item['error']}")
        return lines
    if item.get("cause"):
        lines.append(f"{pad}{item['case']}: {item['cause']}")
        if item.get("error") and item["error"] not in item["cause"]:
            lines.append(f"{pad}  error: {item['error']}")
    if item.get("note"):
        lines.append(f"{pad}{item['note']}")
    if item.get("link"):
        lines.append(f"{pad}registered: {item['link']}")
    if item.get("repro"):
        lines.append(f"{pad}rerun: {item['repro']}")
    if len({c["status"] for c in item["cases"]}) > 1:
        for case in item["cases"]:
            how = f" ({case['evidence']})" if case["evidence"] else ""
            lines.append(f"{pad}- {case['case']}: {case['status']}{how}")
    return lines


def recommend(view: View, pins: list[str]) -> dict[str, Any]:
    wanted = dict(parse_exact(p, view, "--pin PKG==VER") for p in pins)
    universe = view.universe
    order = universe.packages

    def rank(pins_of: dict[str, str]) -> tuple[int, ...]:
        return tuple(universe.position(p, pins_of[p]) for p in order)

    def matches(pins_of: dict[str, str]) -> bool:
        return all(pins_of.get(p) == v for p, v in wanted.items())

    green = [
        (i, c)
        for i, c in enumerate(view.cells)
        if c.outcome == CellOutcome.WORKS and universe.cell(c.pins) is not None and matches(c.pins)
    ]
    result: dict[str, Any] = {"pins": wanted, "set": None, "cells": [], "newer": None}
    if green:
        _, best = max(green, key=lambda item: rank(item[1].pins))
        result["set"] = {p: best.pins[p] for p in order}
        result["cells"] = [
            {"pins": c.pins, "cases": {k: v.status for k, v in c.cases.items()},
             "ran": c.tested, "repro": repro_of(view, i, None)}
            for i, c in green
            if c.pins == best.pins
        ]  # fmt: skip
    newer = _pairwise_newest(view, wanted)
    if newer is not None and (result["set"] is None or rank(newer) > rank(result["set"])):
        result["newer"] = newer
    return {**result, **about(view)}


def failing_triples(view: View) -> list[frozenset[tuple[str, str]]]:
    """The releases of three-way (or wider) failures: every triple of such a cell not
    seen passing that case (with three axes, the cell itself)."""
    found = []
    for case in view.knowledge.cases.values():
        clean = [set(view.universe.values(r.cell)) for r in case.runs if r.seen.name == "CLEAN"]
        for h in case.higher:
            for triple in itertools.combinations(h.values, 3):
                if not any(set(triple) <= cell for cell in clean):
                    found.append(frozenset(triple))
    return found


def _pairwise_newest(view: View, wanted: dict[str, str]) -> dict[str, str] | None:
    """The newest set whose every pair works (tested or inferred), holding no known
    failing triple; the releases first, an optional axis's absence last."""
    universe = view.universe
    triples = failing_triples(view)
    choices = [
        [wanted[p]]
        if p in wanted
        else [v for v in reversed(universe.axes[p]) if v != ABSENT]
        + [v for v in universe.axes[p] if v == ABSENT]
        for p in universe.packages
    ]
    for values in itertools.product(*choices):  # newest first, the first axis first
        held = set(zip(universe.packages, values, strict=True))
        if any(t <= held for t in triples):
            continue
        if all(
            view.answers[pair].status == AnswerStatus.WORKS for pair in universe.pairs_of(values)
        ):
            return dict(zip(universe.packages, values, strict=True))
    return None


def recommend_command(out: Path, pins: list[str], *, as_json: bool) -> int:
    found = recommend(load_view(out), pins)
    if as_json:
        print(json.dumps(found, indent=2))
        return 0 if found["set"] else 1
    given = " ".join(f"{p}=={v}" for p, v in found["pins"].items()) or "no pins"
    if found["set"] is None:
        print(f"no tested set works with {given}")
    else:
        shown = " ".join(f"{p}=={v}" for p, v in found["set"].items())
        print(f"recommended with {given}: {shown}")
        for cell in found["cells"]:
            print(f"  shown by the cell run {cell['ran']}: {cell['repro']}")
    if found["newer"]:
        shown = " ".join(f"{p}=={v}" for p, v in found["newer"].items())
        print(f"newer, every pair known to work (not yet run together): {shown}")
    for line in about_lines(found):
        print(line)
    return 0 if found["set"] else 1
