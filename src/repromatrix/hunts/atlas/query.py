"""``atlas query`` and ``atlas recommend``: answers read from the stored atlas (pure
and fast: atlas.json, no index, no uv, nothing run).

query PKG==VER OTHER: for each release of OTHER, works / breaks (the failing case,
its error line, a registered issue's link) / conflict / untested, with its evidence
(tested, or inferred from neighbouring cells).

recommend [--pin PKG==VER ...]: the newest set of the axes' versions that ran green
as one cell with the pins (newest: the first axis's version first, then the next),
the cells that show it, and a newer set whose every pair is known to work where
one exists (not yet run together).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError
from repromatrix.hunts.atlas.knowledge import Answer
from repromatrix.hunts.atlas.view import View, load_view
from repromatrix.names import canonicalize_name


def parse_exact(text: str, view: View, what: str = "PKG==VER") -> tuple[str, str]:
    """``transformers==4.56.2`` as an axis and one of its releases in the atlas."""
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


def entry(view: View, version: str, answer: Answer) -> dict[str, Any]:
    """One release's answer as --json shows it."""
    out: dict[str, Any] = {
        "version": version,
        "status": answer.status,
        "evidence": answer.evidence or None,
    }
    if answer.status == "breaks":
        out.update(case=answer.case, error=answer.error, link=answer.link or None)
        out["failures"] = [
            {"case": c, "error": e, "link": k or None} for c, e, k in answer.failures
        ]
    if answer.status == "conflict":
        out["error"] = answer.error
    if answer.note:
        out["note"] = answer.note
    cells = [view.cells[i] for i in answer.cells]
    out["cells"] = [{"pins": c.pins, "outcome": c.outcome} for c in cells]
    shown = next((c for c in cells if c.outcome == answer.status), cells[0] if cells else None)
    if shown is not None and shown.repro:
        out["repro"] = shown.repro
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
    return {"package": package, "version": version, "other": name, "versions": versions}


def query_command(out: Path, pin: str, other: str, *, as_json: bool) -> int:
    found = query(load_view(out), pin, other)
    if as_json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"{found['package']} {found['version']} with each release of {found['other']}:")
    for item in found["versions"]:
        how = f" ({item['evidence']})" if item["evidence"] else ""
        detail = ""
        if item["status"] == "breaks":
            detail = f"  {item['case']}: {item['error']}" + (
                f"  {item['link']}" if item.get("link") else ""
            )
        elif item["status"] == "conflict":
            detail = "  uv cannot install them together"
        print(f"  {item['version']:<12} {item['status']}{how}{detail}")
    return 0


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
        if c.outcome == "works" and universe.cell(c.pins) is not None and matches(c.pins)
    ]
    result: dict[str, Any] = {"pins": wanted, "set": None, "cells": [], "newer": None}
    if green:
        _, best = max(green, key=lambda item: rank(item[1].pins))
        result["set"] = {p: best.pins[p] for p in order}
        result["cells"] = [
            {"pins": c.pins, "cases": c.cases, "tested": c.tested, "repro": c.repro}
            for _, c in green
            if c.pins == best.pins
        ]
    newer = _pairwise_newest(view, wanted)
    if newer is not None and (result["set"] is None or rank(newer) > rank(result["set"])):
        result["newer"] = newer
    return result


def _pairwise_newest(view: View, wanted: dict[str, str]) -> dict[str, str] | None:
    """The newest set whose every pair is works (tested or inferred)."""
    universe = view.universe
    choices = [
        [wanted[p]] if p in wanted else list(reversed(universe.axes[p])) for p in universe.packages
    ]
    for values in itertools.product(*choices):  # newest first, the first axis first
        if all(view.answers[pair].status == "works" for pair in universe.pairs_of(values)):
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
            print(f"  shown by the cell tested {cell['tested']}: {cell['repro']}")
    if found["newer"]:
        shown = " ".join(f"{p}=={v}" for p, v in found["newer"].items())
        print(f"newer, every pair known to work (not yet run together): {shown}")
    return 0 if found["set"] else 1
