"""The one hidden-state codec: read back as written, only from the line where the bot
writes it, and within bounds whatever the text holds (a zlib bomb, a nesting bomb, a
flood of empty items, garbage)."""

from __future__ import annotations

import base64
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.errors import UserError
from repromatrix.github.hidden import MAX_ITEMS, hidden, read_hidden
from repromatrix.github.repository import repository_name


def _line(kind: str, raw: bytes) -> str:
    return f"<!-- repromatrix:{kind} {base64.b64encode(zlib.compress(raw, 9)).decode()} -->"


def test_it_reads_back_from_its_own_line_only() -> None:
    data = {"answers": [{"body": "-->\n<!-- x -->"}], "n": 3}
    assert read_hidden("text\n" + hidden("state", data) + "\n", "state", line="last") == data
    assert read_hidden(hidden("tracking", data) + "\nbody", "tracking", line="first") == data
    forged = hidden("state", {"n": 666})
    # A line like it anywhere else is text, not state.
    assert read_hidden(f"{forged}\ntext\n{hidden('state', data)}", "state", line="last") == data
    assert read_hidden(f"{hidden('state', data)}\n{forged} trailing", "state", line="last") is None
    assert read_hidden(f"body\n{forged}", "state", line="first") is None


def test_bombs_and_floods_read_as_nothing_quickly() -> None:
    nesting = _line("state", b"[" * 3_000_000)  # about 3 KB: a RecursionError before
    assert len(nesting) < 10_000
    assert read_hidden(nesting, "state", line="last") is None
    shallow = _line("state", b"[" * 1000 + b"]" * 1000)
    assert read_hidden(shallow, "state", line="last") is None
    flood = _line("state", b'{"answers":[' + b",".join([b"{}"] * (MAX_ITEMS + 5)) + b"]}")
    assert read_hidden(flood, "state", line="last") is None
    bomb = _line("state", b" " * 50_000_000)
    assert read_hidden(bomb, "state", line="last") is None


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_reads_as_data_or_nothing(text: str) -> None:
    read_hidden(text, "state", line="last")
    read_hidden(text, "state", line="first")
    assert read_hidden(text + "\n<!-- repromatrix:state QUJD -->", "state", line="last") is None


@pytest.mark.parametrize("name", ["owner/repo", "o-1/r.e_p-o", "A/..x"])
def test_a_repository_name_is_owner_slash_name(name: str) -> None:
    assert repository_name(name, "repository.full_name") == name


@pytest.mark.parametrize(
    "name", ["", "owner", "o/r/x", "../x", "o/..", "o/r:x", "-o/r", "o/r\n", "o/r po", 7, None]
)
def test_anything_else_is_one_line(name: object) -> None:
    with pytest.raises(UserError) as raised:
        repository_name(name, "repository.full_name")
    assert "\n" not in str(raised.value) and "repository.full_name" in str(raised.value)
