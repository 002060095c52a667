"""Tonight's cells: a covering array over the axes, seeded with the cells already
tested, that skips what the metadata forbids (pure).

covertable builds it (strength 2 or 3, ``presets`` = the rows already tested, so a
new release costs only the cells its new pairs need, about the size of the largest
other axis; ``constraints`` = the pairs uv cannot install together). Why covertable
and not another library: docs/atlas.md, "Covering array".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from covertable import make

from repromatrix.hunts.atlas.universe import Cell, Pair, Universe

SALTS = ("", "a", "b", "c", "d", "e")
SMALL = 100  # a lower bound up to which every salt is tried


def covering_cells(
    universe: Universe,
    tested: Iterable[Cell],
    *,
    conflicts: Iterable[Pair] = (),
    blocked: Iterable[Cell] = (),
    strength: int = 2,
) -> list[Cell]:
    """The cells to add to ``tested`` so that every pair (or triple) that can be
    installed together is in one; the tested cells themselves are not repeated."""
    packages = universe.packages
    if len(packages) < 2:
        return []
    strength = min(strength, len(packages))
    factors = {p: list(universe.axes[p]) for p in packages}
    done = list(dict.fromkeys(tested))
    presets = [dict(zip(packages, cell, strict=True)) for cell in done]
    constraints = _constraints(packages, conflicts, blocked)
    # covertable's greedy array depends on its hash salt; a small universe tries a few
    # and keeps the smallest (a cell saved is a cell's install and cases saved).
    tries = SALTS if universe.lower_bound() <= SMALL else SALTS[:1]
    best: list[Cell] | None = None
    for salt in tries:
        rows = make(factors, strength=strength, presets=presets, constraints=constraints, salt=salt)
        seen = set(done)
        out: list[Cell] = []
        for row in rows:
            if len(row) != len(packages):
                continue  # covertable leaves a row short only where nothing can complete it
            cell = tuple(str(row[p]) for p in packages)
            if cell not in seen:
                seen.add(cell)
                out.append(cell)
        if best is None or len(out) < len(best):
            best = out
    return best or []


def _constraints(
    packages: tuple[str, ...], conflicts: Iterable[Pair], blocked: Iterable[Cell]
) -> list[dict[str, Any]]:
    """covertable's escape hatch (a function of the row) per pair of axes with
    conflicts: one check per row instead of one expression per forbidden pair."""
    forbidden: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for (a, x), (b, y) in conflicts:
        forbidden[(a, b)].add((x, y))
    rules: list[dict[str, Any]] = []
    for (a, b), pairs in forbidden.items():
        rules.append(
            {
                "operator": "fn",
                "requires": [a, b],
                "evaluate": lambda row, a=a, b=b, pairs=frozenset(pairs): (
                    (row[a], row[b]) not in pairs
                ),
            }
        )
    cells = frozenset(blocked)
    if cells:
        rules.append(
            {
                "operator": "fn",
                "requires": list(packages),
                "evaluate": lambda row: tuple(row[p] for p in packages) not in cells,
            }
        )
    return rules
