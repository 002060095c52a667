"""The pieces every text repromatrix posts is built from, each inert whatever it holds.

Two kinds of text meet in a post: what repromatrix writes (headings, tables, collapsed
sections, its own links) and what it quotes (a case id, an error message, a repro's
output, a report a job running someone else's code wrote). Quoted text goes in only
through these builders, or through ``inert`` (github/inert.py) when it is Markdown
of its own:

    text(s)           plain text: every character that could open Markdown escaped,
                      a mention, issue reference or autolink broken
    html_text(s)      the same, inside an HTML element (a <summary>)
    code_span(s)      inline code, its fence longer than any backtick run in ``s``
    code_block(s)     a fenced block, its fence longer than any backtick run in ``s``
    table_cell(s)     a table cell: ``text``, on one line (pipes escaped too)
    details(s, body)  a collapsed section; ``s`` shown as text
    link(s, url)      a link repromatrix makes (its run): ``s`` as text

GitHub reads Markdown first (cmark-gfm: a backslash escape makes a character literal)
and then, on the text of the HTML, links mentions (``@user``, ``@org/team``), issue
references (``#12``, ``GH-12``, ``owner/repo#12``), autolinks (``https://``, ``www.``,
``a@b.c``): an escape cannot stop those, so each gets a zero-width space after its
``@``, ``#``, ``GH``, ``:`` or ``www``, which shows as nothing and matches no pattern.

``COMMENT_LIMIT``: GitHub refuses an issue body or a comment over 65,536 characters.
"""

from __future__ import annotations

import html
import re

from repromatrix.redact import redact_text

COMMENT_LIMIT = 65_536  # GitHub's limit on an issue body and on a comment

ZWSP = "\u200b"  # breaks a mention, a reference or an autolink; shows as nothing
# Characters that open something anywhere in a line: escapes, code, emphasis, links,
# HTML and autolinks, entities, tables, strikethrough, math.
_ANYWHERE = frozenset("\\`*_[]<>&|~$")
# What opens a block at the start of a line: a heading, a quote, a list item, a
# setext underline or a thematic break (the rest of _ANYWHERE is escaped already).
_LINE_START = re.compile(r"^(?:[#>+=:-]|\d{1,9}(?=[.)]))")
# What GitHub links in the text of the HTML (after Markdown): "@", "#12", "GH-12",
# "://", "www.", and their fullwidth look-alikes.
_LINKISH = re.compile(rf"[@＠](?!{ZWSP})|[#＃](?=[0-9０-９])|(?i:gh)(?=-\d)|:(?=//)|(?i:www)(?=\.)")
_BACKTICKS = re.compile(r"`+")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+.-]{1,30}")
# Code blocks GitHub renders as something else (a diagram with links, a map, a model,
# math): shown as plain code.
RENDERED_LANGUAGES = frozenset({"mermaid", "geojson", "topojson", "stl", "math"})
_PLAIN_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]{1,2000}")


def broken(text: str, *, masked: bool = False) -> str:
    """``text`` with a zero-width space after each mention, reference or autolink start
    (none added where one is already). Secrets are masked first (redact.py; ``masked``:
    the caller did it, once for a whole text): a space inside ``https://user:pass@``, or
    in a secret holding ``@``, would hide it from the mask every written byte passes."""
    text = text if masked else redact_text(text)
    return _LINKISH.sub(lambda found: found.group() + ZWSP, text)


def text(value: object) -> str:
    """Plain text in Markdown, on one line: shown as written, opening nothing."""
    return line_start(escaped(one_line(str(value))))


def escaped(text: str, *, masked: bool = False) -> str:
    """``text`` (spaces kept) with every character that could open Markdown escaped and
    mentions, references and autolinks broken; its line's start is ``line_start``'s."""
    marked = "".join("\\" + char if char in _ANYWHERE else char for char in text)
    return broken(marked, masked=masked)


def line_start(line: str) -> str:
    """``line`` escaped where its start would open a block (a heading, a quote, a list
    item, an underline); leading spaces and tabs dropped (four would open code)."""
    line = line.lstrip(" \t")
    found = _LINE_START.match(line)
    if found is None:
        return line
    if found.group()[0].isdigit():  # "1." or "1)": escape the dot or the parenthesis
        end = found.end()
        return line[:end] + "\\" + line[end:]
    return "\\" + line


def html_text(value: object, *, masked: bool = False) -> str:
    """Plain text inside an HTML element (a <summary>): escaped as HTML (Markdown does
    not read it there), mentions and references broken, on one line."""
    return broken(html.escape(one_line(str(value)), quote=False), masked=masked)


def code_span(text: str, *, cell: bool = False, limit: int | None = None) -> str:
    """Inline code that survives backticks in ``text`` (a longer backtick fence, padded
    where the text starts or ends with one); on one line. ``cell``: pipes escaped, for
    a table cell (GFM takes ``\\|`` in a cell's code as a pipe). ``limit``: at most that
    many characters of ``text``."""
    text = one_line(text, limit)
    if cell:
        text = text.replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, language: str = "text") -> str:
    """A fenced block whose fence is longer than any backtick run in ``text``: no line
    of it (a tab- or space-indented one included) can close it. ``language`` is kept
    when it is a plain word GitHub shows as code (not mermaid, geojson, topojson, stl
    or math, which it draws)."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    plain = _LANGUAGE.fullmatch(language or "") and language.lower() not in RENDERED_LANGUAGES
    info = language if plain else ""
    body = text.rstrip("\n")
    return f"{fence}{info}\n{body}\n{fence}\n" if body else f"{fence}{info}\n{fence}\n"


def details(summary: str, body: str) -> str:
    """A collapsed section; ``summary`` is shown as text, ``body`` is Markdown already
    made of these builders (or ``inert``'s)."""
    return f"<details><summary>{html_text(summary)}</summary>\n\n{body.rstrip()}\n\n</details>\n"


def link(label: str, url: str) -> str:
    """A link repromatrix makes to a page it names itself (its run, a comment of its
    own): ``label`` as text; a URL that is not plain http(s) shows as inline code."""
    if not is_plain_url(url):
        return f"{text(label)} ({code_span(url)})" if url else text(label)
    return f"[{text(label)}]({url})"


def is_plain_url(url: str) -> bool:
    """An http(s) URL that needs no escaping inside ``(...)``."""
    return bool(_PLAIN_URL.fullmatch(url))


def table_cell(value: object) -> str:
    """Text inside a Markdown table cell: ``text`` (pipes, and everything else that
    opens something, escaped), one line."""
    return text(value)


def one_line(value: object, limit: int | None = None) -> str:
    line = " ".join(str(value).split())
    if limit is not None and len(line) > limit:
        line = line[: max(limit - 1, 0)] + "…"
    return line
