"""A tier as GitHub Actions job matrices (``repromatrix ci-matrix --tier nightly``).

GitHub refuses a matrix of more than 256 jobs, and a workflow cannot make jobs
on the fly, so nightly.yml has a fixed number of slice jobs (``slice_0`` ..),
each running the combinations of one slice as its own matrix. This module cuts
the tier into at most that many slices of at most 256 each, as even as possible
(so that the slices finish at about the same time), in matrix order; the
unused slices are empty and their jobs are skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.matrix.model import Combination

GITHUB_MATRIX_LIMIT = 256


def slices(ids: Sequence[str], *, count: int, size: int = GITHUB_MATRIX_LIMIT) -> list[list[str]]:
    """``ids`` cut into ``count`` lists (empty ones last), none longer than ``size``."""
    if count < 1 or size < 1:
        raise UserError(f"slices: need at least one slice of one job (got {count} x {size})")
    if len(ids) > count * size:
        raise UserError(
            f"the tier has {len(ids)} combinations, more than {count} matrix jobs of at most "
            f"{size} each can run: add slice jobs to the workflow (and --slices) or split the tier"
        )
    used = max(1, math.ceil(len(ids) / size)) if ids else 0
    out: list[list[str]] = []
    start = 0
    for index in range(used):
        # The first (len % used) slices take one more: sizes differ by one at most.
        length = len(ids) // used + (1 if index < len(ids) % used else 0)
        out.append(list(ids[start : start + length]))
        start += length
    return out + [[] for _ in range(count - used)]


def github_outputs(combos: Sequence[Combination], *, count: int, size: int) -> dict[str, str]:
    """Step outputs: ``slice_N`` (a JSON list of ids, for ``fromJSON`` in a job's
    matrix), ``total`` and ``all`` (every id, for the gathering job)."""
    ids = [c.id for c in combos]
    outputs = {
        f"slice_{i}": json.dumps(part) for i, part in enumerate(slices(ids, count=count, size=size))
    }
    outputs["total"] = str(len(ids))
    outputs["all"] = json.dumps(ids)
    return outputs
