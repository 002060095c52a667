"""The search with real probes: k-section (search/bisection.py) over a walk of releases
or commits, one probe per candidate from the prober the bisect is handed (a round's at
once: probe/rounds.py), every step written to the record as it ends; and the progress
a person watches on stderr meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from packaging.version import Version
from rich.console import Console
from rich.text import Text

from repromatrix import procs
from repromatrix.hunts.bisect.book import Book, add_step
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.prober import Prober
from repromatrix.probe.rounds import Rounds
from repromatrix.probe.spec import Probe, Trial
from repromatrix.results import utc_now
from repromatrix.search.bisection import Find, SearchResult, Step, ksection, most_rounds


@dataclass(frozen=True)
class Walk:
    """What one search with real probes walks: the candidates from the old-outcome end
    to the new-outcome end, how each becomes a trial (its pin over the held cell, the
    stack of its day), what is looked for, and how many are probed at once."""

    candidates: list
    trial: Callable[[Any], Trial]
    find: Find
    jobs: int = 1


def search_with_probes(walk: Walk, prober: Prober, book: Book, progress: Progress) -> SearchResult:
    """k-section over the walk (jobs 1: the sequential search), one probe per
    candidate (a round's in threads of their own, each on its own GPUs), every step
    written to the book (bisect.json, bisect.md) as it ends."""
    rounds = Rounds(prober)

    def on_step(step: Step, most_left: int) -> None:
        add_step(book.record, step)
        book.save()
        progress.done(step, most_left)

    book.save()
    try:
        return ksection(
            walk.candidates,
            lambda candidates: rounds([walk.trial(c) for c in candidates]),
            walk.find,
            walk.jobs,
            on_step=on_step,
            on_round=progress.round,
        )
    except BaseException:
        procs.cancel_all()  # probes in other threads (--jobs N) stop with the bisect
        book.record.status, book.record.finished = "interrupted", utc_now()
        book.save()
        raise
    finally:
        progress.stop()


SHORT_DETAIL = 160  # characters of a step's reason on its progress line


class Progress:
    """One line per finished step, a spinner for the running round (rich)."""

    def __init__(
        self, console: Console, package: str, walk: list, probe: Probe, jobs: int = 1
    ) -> None:
        self.console = console
        self.package = package
        self.status = None
        self.last_detail = ("", "")  # the last step's detail shown, and its candidate
        self.most = most_rounds(len(walk), jobs)
        at_once = f", {jobs} at a time" if jobs > 1 else ""
        unit = "rounds" if jobs > 1 else "steps"
        console.print(
            f"bisecting {package}: {len(walk)} candidates from "
            f"{walk[0]} to {walk[-1]}{at_once}, at most {self.most} {unit} "
            f"without skips ({probe.label})"
        )
        self.unit = "round" if jobs > 1 else "step"

    def round(self, number: int, batch: list[tuple[Version, str]]) -> None:
        said = ", ".join(
            f"{candidate}" + (f" ({role})" if role != "step" else "") for candidate, role in batch
        )
        text = f"{self.unit} {number}: testing {self.package} {said}"
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def done(self, step: Step[Version], most_left: int) -> None:
        observation = step.observation
        style = {ProbeOutcome.GOOD: "green", ProbeOutcome.BAD: "red", ProbeOutcome.SKIP: "yellow"}[
            observation.outcome
        ]
        role = f" ({step.role})" if step.role != "step" else ""
        unit = f"{self.unit}{'s' if most_left != 1 else ''}"
        self.console.print(
            Text.assemble(
                f"  {step.candidate}{role}: ",
                (observation.outcome.value, style),
                f" ({self._detail(step)}, {observation.seconds:.1f}s); "
                f"at most {most_left} more {unit}",
            )
        )

    def _detail(self, step: Step[Version]) -> str:
        """The step's reason, once: a step that failed as the one before says so by
        its version instead of repeating a 300-character error; a long one is cut
        (bisect.md and bisect.json keep every word)."""
        detail = step.observation.detail
        if detail == self.last_detail[0] and len(detail) > SHORT_DETAIL:
            return f"the same as {self.last_detail[1]}"
        self.last_detail = (detail, str(step.candidate))
        return detail if len(detail) <= SHORT_DETAIL else detail[: SHORT_DETAIL - 1] + "…"

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None
