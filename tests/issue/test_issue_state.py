"""The bot comment: hidden state read back as written, earlier answers collapsed, never
over 65,536 characters (oldest answers trimmed first, and the comment says so)."""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.issue.state import (
    MARKER,
    Answer,
    Observed,
    State,
    fitted,
    read_state,
    render,
    with_answer,
)


def _answer(n: int, size: int = 100) -> Answer:
    return Answer(at=f"2026-11-{n:02d}", title=f"/repromatrix check #{n}", body="x" * size, url="u")


def test_the_hidden_state_reads_back_as_written() -> None:
    state = State(
        answers=[_answer(2), _answer(1)],
        last_watched="2026-11-24T03:41:00+00:00",
        watch=Observed(outcome="bad", versions={"transformers": "5.2.0"}, at="t"),
        decisive=Observed(outcome="bad", versions={"transformers": "5.2.0"}, at="t"),
        trimmed=3,
    )
    text = render(state)
    assert text.startswith(MARKER)
    assert read_state(text) == state
    assert render(read_state(text)) == text  # rendering is a function of the state


def test_earlier_answers_are_collapsed_newest_first() -> None:
    state = with_answer(State(answers=[_answer(1)]), _answer(2))
    text = render(state)
    newest, details = text.split("<details>")
    assert "/repromatrix check #2" in newest and "#1" not in newest
    assert "<summary>Earlier answers (1)</summary>" in details
    assert "/repromatrix check #1" in details


@settings(max_examples=50, deadline=None)
@given(st.text())
def test_any_comment_text_reads_as_a_state_or_none(text: str) -> None:
    assert read_state(text) is None or isinstance(read_state(text), State)
    assert read_state(MARKER + text + "\n<!-- repromatrix:state QUJD -->") is None


def test_a_hand_edited_state_is_no_state_not_an_empty_one() -> None:
    # None, not State(): the bot then leaves that comment alone rather than writing an
    # empty memory over it (bot.memory).
    text = render(State(answers=[_answer(1)]))
    broken = text.replace("repromatrix:state ", "repromatrix:state AAAA")
    assert read_state(broken) is None


def test_the_comment_stays_under_the_limit_trimming_the_oldest_first() -> None:
    rng = random.Random(7)
    # Incompressible bodies: the hidden (compressed) copy costs as much as the text.
    answers = [
        Answer(at=str(n), title=f"#{n}", body="".join(rng.choices(string.ascii_letters, k=9000)))
        for n in range(20, 0, -1)
    ]
    state, text = fitted(State(answers=answers))
    assert len(text) <= COMMENT_LIMIT
    kept = [a.title for a in state.answers]
    assert kept == [f"#{n}" for n in range(20, 20 - len(kept), -1)]  # the newest ones
    assert state.trimmed == 20 - len(kept) > 0
    assert f"_{state.trimmed} older answers trimmed" in text
    assert read_state(text) == state


def test_one_huge_answer_is_cut_and_says_so() -> None:
    rng = random.Random(3)
    body = "".join(rng.choices(string.ascii_letters, k=200_000))
    state, text = fitted(State(answers=[Answer(title="big", body=body)]))
    assert len(text) <= COMMENT_LIMIT
    assert "(cut: the whole report is in the run's artifact)" in text
    assert read_state(text) == state
