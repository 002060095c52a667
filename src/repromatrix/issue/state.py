"""The bot comment: the issue's memory, rendered from its state alone.

    <!-- repromatrix:bot -->
    the newest answer (and, collapsed, the code that ran)
    <details><summary>Earlier answers (N)</summary> ... </details>
    <!-- repromatrix:state <base64 of zlib of JSON> -->     (the last line, always)

The state is every answer kept (newest first), the watch's last outcomes, when the issue
was last watched, and the repro a trusted person approved for the watch (its sha256).
It is read from the comment's last line only (github.hidden: bounded decoding), where
the bot writes it after everything else, so an answer that quotes a line like it (a
repro can print anything) is never taken for it; answers are made inert before they
are kept (bot.py), and a state that cannot be read is None, never an empty memory that
would be written over the old one.

A comment never exceeds GitHub's limit (github.markdown.COMMENT_LIMIT): the oldest
answers go first (the comment says how many), then the newest answer's code (its
sha256 stays), then its body is cut. At most ``MAX_ANSWERS`` answers are kept.
"""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repromatrix.github.hidden import hidden, read_hidden
from repromatrix.github.inert import inert
from repromatrix.github.markdown import COMMENT_LIMIT, code_block, code_span, text

MARKER = "<!-- repromatrix:bot -->"
STATE_KIND = "state"
MAX_ANSWERS = 50
MAX_CODE = 50_000  # repro.MAX_REPRO: what a repro block may hold
CUT_NOTE = "\n… (cut: the whole report is in the run's artifact)\n"
_SHA256 = r"^[0-9a-f]{64}$"


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(default_factory=_new_id, max_length=40)  # two comments merge by it
    at: str = Field("", max_length=40)  # UTC timestamp
    title: str = Field("", max_length=2000)  # the command line, or "nightly watch"
    body: str = Field("", max_length=400_000)  # markdown, already inert (cut when rendered)
    url: str = Field("", max_length=500)  # the workflow run (its artifacts hold the reproducers)
    code: str = Field("", max_length=MAX_CODE)  # the repro that ran (the newest answer only)
    code_sha256: str = Field("", pattern=r"^([0-9a-f]{64})?$")


class Observed(BaseModel):
    """One watch result: the outcome and the versions of the followed packages."""

    model_config = ConfigDict(extra="ignore")

    outcome: Literal["good", "bad", "skip"]
    versions: dict[str, str] = Field(default_factory=dict, max_length=50)
    at: str = Field("", max_length=40)


class Approval(BaseModel):
    """The repro a trusted person approved for the watch: a label, /repromatrix approve,
    or a command that ran the issue's repro."""

    model_config = ConfigDict(extra="ignore")

    sha256: str = Field(pattern=_SHA256)
    by: str = Field("", max_length=60)
    at: str = Field("", max_length=40)
    how: str = Field("", max_length=20)


class Refused(BaseModel):
    """A body the watch refused and said so about (said once per body)."""

    model_config = ConfigDict(extra="ignore")

    sha256: str = Field(pattern=_SHA256)
    at: str = Field("", max_length=40)


class Kept(BaseModel):
    """The repro a trusted person kept as a case: where its file goes, the digest."""

    model_config = ConfigDict(extra="ignore")

    case: str = Field(max_length=200)  # the case id in cases/ (issues/test_issue_7.py::...)
    sha256: str = Field(pattern=_SHA256)
    by: str = Field("", max_length=60)
    at: str = Field("", max_length=40)


class State(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_: int = Field(1, alias="schema")
    answers: list[Answer] = Field(default_factory=list, max_length=MAX_ANSWERS)  # newest first
    trimmed: int = Field(0, ge=0)  # answers dropped to keep the comment under the limit
    last_watched: str = Field("", max_length=40)  # UTC timestamp of the last nightly watch
    watch: Observed | None = None  # the last watch result
    decisive: Observed | None = None  # the last good or bad one (skips do not flip)
    approved: Approval | None = None
    refused: Refused | None = None
    # Said once each (issue/flips.py): a flip that did not hold in every run (its
    # versions), and per package the main-branch commit said to pass ahead of a release.
    flaky: Observed | None = None
    ahead: dict[str, str] = Field(default_factory=dict, max_length=10)
    kept: Kept | None = None  # the repro kept as a case (issue/keep.py)


def is_bot_comment(body: object) -> bool:
    return isinstance(body, str) and body.lstrip().startswith(MARKER)


def read_state(body: object) -> State | None:
    """The state on the last line of a bot comment; None when there is none or it cannot
    be read (out of bounds, hand-edited, forged)."""
    if not is_bot_comment(body):
        return None
    data = read_hidden(body, STATE_KIND, line="last")
    if not isinstance(data, dict):
        return None
    try:
        return State.model_validate(data)
    except ValidationError:
        return None


def merged(states: list[State]) -> State:
    """One state from several bot comments (two answers posted at once leave two): every
    answer once (by id), newest first; the latest of everything else."""
    if len(states) == 1:
        return states[0].model_copy(deep=True)
    answers: dict[str, Answer] = {}
    for state in states:
        for answer in state.answers:
            answers.setdefault(answer.id, answer)
    ordered = sorted(answers.values(), key=lambda a: (a.at, a.id), reverse=True)

    def latest(items: list, key: str):  # type: ignore[no-untyped-def]
        present = [i for i in items if i is not None]
        return max(present, key=lambda i: getattr(i, key)) if present else None

    return State(
        answers=ordered[:MAX_ANSWERS],
        trimmed=max((s.trimmed for s in states), default=0) + max(0, len(ordered) - MAX_ANSWERS),
        last_watched=max((s.last_watched for s in states), default=""),
        watch=latest([s.watch for s in states], "at"),
        decisive=latest([s.decisive for s in states], "at"),
        approved=latest([s.approved for s in states], "at"),
        refused=latest([s.refused for s in states], "at"),
        flaky=latest([s.flaky for s in states], "at"),
        ahead=_newest_with(states, "ahead"),
        kept=latest([s.kept for s in states], "at"),
    ).model_copy(deep=True)


def _newest_with(states: list[State], name: str) -> dict[str, str]:
    """A mapping as the most recently watched of ``states`` has it."""
    newest = max(states, key=lambda s: s.last_watched)
    return dict(getattr(newest, name))


def with_answer(state: State, answer: Answer) -> State:
    """The state with ``answer`` as the newest; earlier answers keep their code's sha256
    only (the code that ran is shown for the newest answer)."""
    updated = state.model_copy(deep=True)
    for earlier in updated.answers:
        earlier.code = ""
    updated.answers.insert(0, answer)
    dropped = len(updated.answers) - MAX_ANSWERS
    if dropped > 0:
        updated.answers = updated.answers[:MAX_ANSWERS]
        updated.trimmed += dropped
    return updated


def _section(answer: Answer, heading: str) -> str:
    link = f" · [run]({answer.url})" if answer.url else ""
    parts = [f"{heading} {code_span(answer.title, limit=300)} · {answer.at}{link}", ""]
    parts.append(answer.body.strip())
    if answer.code:
        summary = f"The code that ran (sha256 {answer.code_sha256[:12]}…)"
        parts += ["", f"<details><summary>{summary}</summary>", ""]
        parts += [code_block(answer.code, "python").rstrip("\n"), "", "</details>"]
    elif answer.code_sha256:
        parts += ["", f"The code that ran: sha256 {code_span(answer.code_sha256)}"]
    return "\n".join(parts) + "\n"


def render(state: State) -> str:
    parts = [MARKER, ""]
    if state.answers:
        parts.append(_section(state.answers[0], "**repromatrix**"))
    earlier = state.answers[1:]
    if earlier:
        parts += ["<details>", f"<summary>Earlier answers ({len(earlier)})</summary>", ""]
        parts += [_section(answer, "####") for answer in earlier]
        parts += ["</details>", ""]
    if state.trimmed:
        many = "s" if state.trimmed != 1 else ""
        parts += [
            f"_{state.trimmed} older answer{many} trimmed: a comment holds at most "
            f"{COMMENT_LIMIT:,} characters._",
            "",
        ]
    if state.approved is not None:
        by = text(state.approved.by[:60]) or "a maintainer"
        parts += [
            f"_The nightly watch runs the repro approved by {by} ({state.approved.how}, "
            f"{state.approved.at[:10]}): sha256 {code_span(state.approved.sha256[:12])}._",
            "",
        ]
    refused = state.refused
    if refused is not None and (state.approved is None or state.approved.sha256 != refused.sha256):
        parts += [
            f"_The nightly watch waits: the repro (sha256 {code_span(refused.sha256[:12])}) is "
            "not the approved one._",
            "",
        ]
    parts.append(hidden(STATE_KIND, state.model_dump(mode="json", by_alias=True)))
    return "\n".join(parts) + "\n"


def fitted(state: State, limit: int = COMMENT_LIMIT) -> tuple[State, str]:
    """The state with the oldest answers dropped (then the newest one's code, then its
    body cut) until its rendering fits ``limit``; that state and its text. A few
    renders, not one per answer: the number kept is found by halving."""
    state = state.model_copy(deep=True)
    text = render(state)
    if len(text) <= limit:
        return state, text
    answers = state.answers
    low, high = 1, len(answers)  # renders of `low` answers may fit; `high` do not
    while high - low > 1:
        middle = (low + high) // 2
        if len(render(state.model_copy(update={"answers": answers[:middle]}))) <= limit:
            low = middle
        else:
            high = middle
    state.trimmed += len(answers) - low
    state.answers = answers[:low]
    text = render(state)
    if len(text) <= limit or not state.answers:
        return state, text
    newest = state.answers[0]
    newest.code = ""  # its sha256 stays: the code is in the run's plan artifact
    text = render(state)
    body = newest.body
    while len(text) > limit and newest.body:
        over = len(text) - limit
        room = max(0, len(newest.body) - max(over, len(newest.body) // 4))
        newest.body = inert(body, limit=room, note=CUT_NOTE) if room > len(CUT_NOTE) else CUT_NOTE
        text = render(state)
        if room == 0:
            break
    return state, text
