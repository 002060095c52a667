"""What an atlas answer is (pure, importing nothing of the atlas): one case's answer,
a pair's answer over every case, and the rules that give them (each rule's text is
the answer's note).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from repromatrix.hunts.atlas.universe import Value
from repromatrix.outcomes import AnswerStatus, Evidence


class Rule(enum.Enum):
    """Why an answer holds; its text is the answer's note."""

    PASSED = "a cell holding the pair passed"
    PAIR = "the pair fails where everything else is known to work, and again with other partners"
    PENDING = "the pair fails where everything else is known to work (one cell; not yet rerun with other partners)"  # noqa: E501
    ALONE = "{release} fails with every partner tried ({cells} cells)"
    NEIGHBOURS = "{package} {low} and {high} on either side agree (with {other})"
    FLAKY = "failed and passed in the cells that hold it"
    CONFLICT = "uv: no solution"
    SKIPPED = "the case skipped wherever the pair ran"


# Over the cases, the worst first: what the pair's one answer is.
SEVERITY = (
    AnswerStatus.BREAKS,
    AnswerStatus.FLAKY,
    AnswerStatus.UNTESTED,
    AnswerStatus.WORKS,
    AnswerStatus.SKIPPED,
)


@dataclass(frozen=True)
class CaseAnswer:
    case: str
    status: AnswerStatus
    evidence: Evidence | None = None
    rule: Rule | None = None
    note: str = ""
    cause: str = ""  # the failure's signature key
    cause_line: str = ""  # the signature as one line
    error: str = ""  # the case's own message, from a cell with that cause
    link: str = ""
    cells: tuple[int, ...] = ()  # indexes into the cells that show it, the shown one first
    passed: int = 0  # runs of the case that passed, in the cells that hold the pair
    runs: int = 0
    alone: Value | None = None  # the release that fails on its own (Rule.ALONE)
    higher: tuple[int, ...] = ()  # three-way failures holding the pair (cell indexes)


@dataclass(frozen=True)
class Answer:
    """A pair's answer over every case."""

    status: AnswerStatus
    evidence: Evidence | None = None
    rule: Rule | None = None
    note: str = ""
    cells: tuple[int, ...] = ()
    passed: int = 0
    runs: int = 0
    cases: tuple[CaseAnswer, ...] = ()
    error: str = ""  # a conflict's uv message

    @property
    def headline(self) -> CaseAnswer | None:
        """The case the answer is about (the first breaking one, say)."""
        return next((c for c in self.cases if c.status == self.status), None)

    @property
    def case(self) -> str:
        return self.headline.case if self.headline else ""

    @property
    def alone(self) -> Value | None:
        return self.headline.alone if self.headline else None
