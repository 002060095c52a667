"""The one hidden-state codec: a bot's memory kept in its own comment or issue body,

    <!-- repromatrix:KIND <base64 of zlib of JSON> -->

on a line of its own, at a place the bot chooses (the first line of the tracking
issue's body, the last line of the issue bot's comment). It is read from that line
only: text the bot quotes (a repro's output, a report) may hold a line that looks
like it anywhere else and is never taken for it.

Decoding is bounded, as the text may have been edited by hand or forged: the encoded
line is at most ``COMMENT_LIMIT`` characters, the JSON at most ``MAX_JSON_BYTES``
once inflated (a zlib bomb stops there), nested at most ``MAX_DEPTH`` deep and holding
at most ``MAX_ITEMS`` values (counted in one pass before it is parsed, so neither the
parser's recursion nor a flood of empty items costs more than reading the bytes).
Anything out of bounds, or not the codec's, reads as None.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from typing import Any, Literal

from repromatrix.github.markdown import COMMENT_LIMIT

MAX_JSON_BYTES = 2_000_000
MAX_DEPTH = 32
MAX_ITEMS = 200_000
_KIND = re.compile(r"^[a-z][a-z-]{0,30}$")
_DATA = re.compile(r"[A-Za-z0-9+/=]*")


def hidden(kind: str, data: Any) -> str:
    """The line that carries ``data`` (JSON-able)."""
    assert _KIND.match(kind), kind
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return f"<!-- repromatrix:{kind} {base64.b64encode(zlib.compress(raw, 9)).decode()} -->"


def read_hidden(body: object, kind: str, *, line: Literal["first", "last"]) -> Any | None:
    """The data of the ``kind`` line at the ``line`` of ``body``; None when that line
    is not one, or cannot be decoded within the bounds."""
    if not isinstance(body, str):
        return None
    if line == "first":
        found = body.split("\n", 1)[0].strip()
    else:
        found = body.rstrip().rsplit("\n", 1)[-1].strip()
    head, tail = f"<!-- repromatrix:{kind} ", " -->"
    if len(found) > COMMENT_LIMIT or not (found.startswith(head) and found.endswith(tail)):
        return None
    data = found[len(head) : -len(tail)]
    if not _DATA.fullmatch(data):
        return None
    try:
        packed = base64.b64decode(data, validate=True)
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_JSON_BYTES + 1)
        if len(raw) > MAX_JSON_BYTES or inflater.unconsumed_tail or not inflater.eof:
            return None
        text = raw.decode("utf-8")
    except (binascii.Error, zlib.error, ValueError):
        return None
    if not within_bounds(text):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def within_bounds(text: str, *, depth: int = MAX_DEPTH, items: int = MAX_ITEMS) -> bool:
    """Whether JSON ``text`` nests at most ``depth`` deep and holds at most ``items``
    values (containers and the commas between members), in one pass over it."""
    level = count = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            count += 1
            if level > depth or count > items:
                return False
        elif char in "]}":
            level -= 1
        elif char == ",":
            count += 1
            if count > items:
                return False
    return True
