"""The nightly watch: issues with the label re-run on the newest releases of the
packages their repro names, at most ``watch_limit`` a night.

Which issues: those whose body has a repro block (issue/repro.py) that names at least
one package, least recently watched first (never watched first of all, then the
oldest ``last_watched`` kept in each bot comment's state; ties by issue number), so
every watched issue gets its turn however many there are. A night's watch is a
``check`` with the repro's pins: a bare name floats to its newest release, ``PKG==VER``
stays held.

A flip: the outcome is good where the last decisive one (good or bad; an untestable
night flips nothing) was bad, or the reverse. It is said once, in a comment of its own:
"now passes with transformers 5.3.0 (fails with 5.2.0)".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as default

from repromatrix.errors import UserError
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.event import field
from repromatrix.issue.plan import Job, effective_pins
from repromatrix.issue.repro import Repro, find_repro
from repromatrix.issue.state import Observed, State


@dataclass(frozen=True)
class Candidate:
    issue: int
    repro: Repro
    last_watched: str  # "" when never watched
    state: State = default(default_factory=State)  # the bot's memory of the issue


def candidates(
    issues: Sequence[object], states: dict[int, State]
) -> tuple[list[Candidate], list[str]]:
    """The watchable issues and a note for each labelled one that is not."""
    found: list[Candidate] = []
    notes: list[str] = []
    for item in issues:
        number = field(item, "number", kind=int)
        if number is None or number < 1:
            notes.append("skipped an issue without a number")
            continue
        try:
            repro = find_repro(field(item, "body"), "issue")
        except UserError as err:
            notes.append(f"#{number}: not watched: {err}")
            continue
        if repro is None:
            notes.append(f"#{number}: not watched: no ```python block starting # repromatrix")
            continue
        if not repro.needs:
            notes.append(f"#{number}: not watched: its repro names no package (# repromatrix: PKG)")
            continue
        state = states.get(number) or State()
        found.append(Candidate(number, repro, state.last_watched, state))
    return found, notes


def tonight(found: Sequence[Candidate], limit: int) -> list[Candidate]:
    """The ``limit`` least recently watched (never watched first; then by number)."""
    return sorted(found, key=lambda c: (c.last_watched != "", c.last_watched, c.issue))[:limit]


def watch_job(candidate: Candidate, settings: IssueSettings) -> Job:
    """Tonight's check of the repro, with what its follow-up needs (issue/follow.py):
    the reruns a flip takes, the night it would flip from, the followed packages'
    repositories and the main branches to run."""
    followed = candidate.repro.packages()
    main = [name for name in settings.watch.main if name in followed]
    state = candidate.state
    return Job(
        issue=candidate.issue,
        kind="watch",
        line="nightly watch",
        pins=effective_pins(settings, (), candidate.repro, None),
        watched=followed,
        source="issue",
        timeout=settings.minutes * 60.0,
        confirm=settings.confirm,
        since=state.decisive,
        repositories={n: u for n, u in settings.repositories.items() if n in followed},
        main=main,
        ahead={name: sha for name, sha in state.ahead.items() if name in main},
        close=settings.close,
        confinement=settings.confinement,
    )


def flip(previous: Observed | None, now: Observed) -> str | None:
    """The sentence to comment when the outcome flipped, else None."""
    if previous is None or now.outcome not in ("good", "bad"):
        return None
    if previous.outcome == now.outcome:
        return None
    changed = [n for n in now.versions if previous.versions.get(n) != now.versions[n]]
    names = changed or list(now.versions)
    then_word = "fails" if previous.outcome == "bad" else "passes"
    now_said = ", ".join(f"{n} {now.versions[n]}" for n in names) or "today's releases"
    earlier = [n for n in names if n in previous.versions]
    then_said = ", ".join(
        previous.versions[n] if len(names) == 1 else f"{n} {previous.versions[n]}" for n in earlier
    )
    head = "now passes" if now.outcome == "good" else "fails again"
    sentence = f"{head} with {now_said}"
    if then_said:
        sentence += f" ({then_word} with {then_said})"
    return sentence
