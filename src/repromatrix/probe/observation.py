"""What one probe said, typed: good, bad or skip (cargo-bisect-rustc's Satisfies: Yes,
No, Unknown), why in one line, and what it learned on the way: the cell it ran in, or
why that cell could not be built. A hunt reads these fields; it never looks a key up.

git bisect run's exit codes speak the same language (``EXIT_CODES``): a script probe
answers with them, and ``check`` gives them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repromatrix.execution._cell.signature import Signature
from repromatrix.outcomes import ProbeOutcome

if TYPE_CHECKING:  # the upload-date client loads only where a cutoff is given
    from repromatrix.environment.as_of import TimeTravel

EXIT_CODES = {ProbeOutcome.GOOD: 0, ProbeOutcome.BAD: 1, ProbeOutcome.SKIP: 125}


@dataclass(frozen=True)
class DateCap:
    """The ``--as-of`` date cap refused what a pin needs: as asked, the cutoff, and the
    travelling packages the resolver's refusal names (bisect.md and sweep.md say so)."""

    as_of: str
    date: str | None
    packages: tuple[str, ...]

    def describe(self) -> dict[str, Any]:
        """As sweep.json's ``as_of_cap`` stores it."""
        return {"as_of": self.as_of, "date": self.date, "packages": list(self.packages)}


@dataclass(frozen=True)
class InstallFailure:
    """The cell could not be built: uv's stage (``resolve``, ``install`` ...) and its
    message; the date cap when time travel is what refused."""

    stage: str
    message: str
    date_cap: DateCap | None = None


@dataclass(frozen=True)
class BuiltCell:
    """The cell a probe ran in: what names it, whether it was reused, what it holds."""

    identity: str  # the first 16 hex digits of the environment's identity
    reused: bool = False
    build_seconds: float = 0.0  # resolve + (re)use or build
    python: str | None = None  # the interpreter's version
    resolved: Mapping[str, str] = field(default_factory=dict)  # every distribution -> version
    travel: TimeTravel | None = None  # the stack as of a day (environment/as_of.py)
    interpreter: Path | None = None  # the cell's python, to ask it (a package's URLs)
    # packages built from a folder (`mylib: "."`): package -> path, digest, commit, dirty
    sources: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Observation:
    """What probing one candidate gave."""

    outcome: ProbeOutcome
    detail: str = ""  # one line: "exit 1: <error>", "install-error: ...", a case's message
    seconds: float = 0.0
    cell: BuiltCell | None = None  # None: nothing was built
    failure: InstallFailure | None = None  # why the cell could not be built
    output_tail: str = ""  # a script's last output (redacted, this machine's paths shortened)
    # What a bad probe died of (execution/_cell/signature.py): the failing case's, or a
    # script's Python traceback's (else its exit status and reason). None unless bad.
    # The same value results.json stores as a FailureSignature (the stdlib one here:
    # a probe loads no models); ``same_failure`` compares either with either.
    signature: Signature | None = None

    @property
    def resolved(self) -> Mapping[str, str]:
        return self.cell.resolved if self.cell is not None else {}

    @property
    def travel(self) -> TimeTravel | None:
        return self.cell.travel if self.cell is not None else None

    @property
    def date_cap(self) -> DateCap | None:
        return self.failure.date_cap if self.failure is not None else None
