"""``run --shard I/N``: a tier cut into N deterministic parts, for a scheduler other
than GitHub's (Kubernetes indexed Jobs, Buildkite parallelism): part I of N holds
the I-th run of the tier's combinations in matrix order, sizes as even as possible
(they differ by one at most). Together the N parts hold each combination once.

I counts from 1 (N/N is the last part). 0/N names the same part as N/N, so a
zero-based index (Kubernetes' JOB_COMPLETION_INDEX, Buildkite's
BUILDKITE_PARALLEL_JOB) works as it comes: 0..N-1 and 1..N both cover the tier once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from repromatrix.errors import UserError

T = TypeVar("T")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        found = _SHARD.match(text)
        if found is None:
            raise UserError(f"--shard: {text!r} is not I/N (e.g. 1/4)")
        index, count = int(found.group(1)), int(found.group(2))
        if count < 1 or index > count:
            raise UserError(f"--shard: {text!r}: I must be 1..N (or 0..N-1) and N at least 1")
        return cls(index or count, count)

    def take(self, items: Sequence[T]) -> list[T]:
        """This part of ``items`` (in their order)."""
        start = (self.index - 1) * len(items) // self.count
        end = self.index * len(items) // self.count
        return list(items[start:end])

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
