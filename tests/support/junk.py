"""Breaking a valid document for the generated-input tests: one value, anywhere in it,
swapped for junk."""

from __future__ import annotations

from typing import Any


def swap_in_junk(doc: Any, junk: Any, rng: Any, *, max_depth: int, stop: float) -> None:
    """Walk down DOC from its top, a random key or index at each level, and put JUNK
    where the walk stops: with chance STOP at each level, at a leaf, or MAX_DEPTH down."""
    node, depth = doc, 0
    while isinstance(node, (dict, list)) and node and depth < max_depth:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = rng.choice(keys)
        if rng.random() < stop or not isinstance(node[key], (dict, list)):
            node[key] = junk
            return
        node, depth = node[key], depth + 1
