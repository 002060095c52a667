"""The bot comment: one per issue, found by a hidden marker, edited in place.

    <!-- repromatrix:bot -->
    the newest answer
    <details><summary>Earlier answers (N)</summary> ... </details>
    <!-- repromatrix:state <base64 of zlib of JSON> -->

The state is the comment's memory between runs: every answer kept (newest first), the
watch's last outcomes and when the issue was last watched. The comment is rendered from
the state alone, so reading it back and rendering again gives the same text. It never
exceeds GitHub's 65,536 characters: the oldest answers go first (the comment says how
many), then the newest answer's body is cut.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MARKER = "<!-- repromatrix:bot -->"
MAX_COMMENT = 65_536
_STATE = re.compile(r"<!-- repromatrix:state (?P<data>[A-Za-z0-9+/=]*) -->")
MAX_STATE_BYTES = 2_000_000  # decompressed: a state a comment could hold, with room


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    at: str = ""  # UTC timestamp
    title: str = ""  # the command line, or "nightly watch"
    body: str = ""  # markdown
    url: str = ""  # the workflow run (its artifacts hold the reproducers)


class Observed(BaseModel):
    """One watch result: the outcome and the versions of the followed packages."""

    model_config = ConfigDict(extra="ignore")

    outcome: str  # good | bad | skip
    versions: dict[str, str] = {}
    at: str = ""


class State(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_: int = Field(1, alias="schema")
    answers: list[Answer] = []  # newest first
    trimmed: int = 0  # answers dropped to keep the comment under the limit, all time
    last_watched: str = ""  # UTC timestamp of the last nightly watch
    watch: Observed | None = None  # the last watch result
    decisive: Observed | None = None  # the last good or bad one (skips do not flip)


def is_bot_comment(body: object) -> bool:
    return isinstance(body, str) and body.lstrip().startswith(MARKER)


def read_state(body: object) -> State:
    """The state hidden in a bot comment; an empty state when there is none, or when it
    cannot be read (a hand-edited comment starts over rather than failing the run)."""
    if not isinstance(body, str):
        return State()
    found = _STATE.search(body)
    if not found:
        return State()
    try:
        raw = zlib.decompressobj().decompress(
            base64.b64decode(found.group("data"), validate=True), MAX_STATE_BYTES
        )
        return State.model_validate(json.loads(raw))
    except (binascii.Error, zlib.error, ValueError, ValidationError):
        return State()


def _hidden(state: State) -> str:
    data = json.dumps(state.model_dump(mode="json", by_alias=True), separators=(",", ":"))
    packed = base64.b64encode(zlib.compress(data.encode(), 9)).decode()
    return f"<!-- repromatrix:state {packed} -->"


def _section(answer: Answer, heading: str) -> str:
    link = f" · [run]({answer.url})" if answer.url else ""
    return f"{heading} `{_code(answer.title)}` · {answer.at}{link}\n\n{answer.body.strip()}\n"


def _code(text: str) -> str:
    return " ".join(text.split()).replace("`", "'")[:300]


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
            f"{MAX_COMMENT:,} characters._",
            "",
        ]
    parts.append(_hidden(state))
    return "\n".join(parts) + "\n"


def fitted(state: State, limit: int = MAX_COMMENT) -> tuple[State, str]:
    """The state with the oldest answers dropped (and, if need be, the newest one's
    body cut) until its rendering fits ``limit``; that state and its text."""
    state = state.model_copy(deep=True)
    text = render(state)
    while len(text) > limit and len(state.answers) > 1:
        state.answers.pop()
        state.trimmed += 1
        text = render(state)
    if len(text) > limit and state.answers:
        newest = state.answers[0]
        note = "\n\n… (cut: the whole report is in the run's artifact)"
        over = len(text) - limit
        keep = max(0, len(newest.body) - over - len(note) - 64)
        newest.body = newest.body[:keep] + note
        text = render(state)
        while len(text) > limit and newest.body:
            newest.body = newest.body[: len(newest.body) // 2] + note
            text = render(state)
    return state, text


def with_answer(state: State, answer: Answer, **changes: Any) -> State:
    """The state with ``answer`` as the newest, and any other fields changed."""
    updated = state.model_copy(deep=True, update=changes)
    updated.answers.insert(0, answer)
    return updated
