"""Quoted Markdown, made inert: read once (github/reading.py), written again from its
syntax tree with the builders of github/markdown.py, so that what shows is what was
written and nothing in it acts.

    inert(markdown, limit=None, note="")

- Kept as they were: paragraphs, headings, emphasis, lists, block quotes, tables,
  thematic breaks, code spans and code blocks (each fence longer than any backtick run
  it holds, so no line of it, indented by a tab or by spaces, can close it).
- Shown as text: every character that could open Markdown is escaped; a mention, an
  issue reference or an autolink is broken (github.markdown.broken); a link is its
  text and its target as inline code; an image is its alt text and its source as
  inline code; inline HTML is its source, escaped.
- Raw HTML: an HTML block at the top level that holds nothing but ``<details>``,
  ``</details>`` and ``<summary>TEXT</summary>`` tags is kept (the summary's text
  escaped), balanced: a ``</details>`` nothing opened is dropped, and what is left open
  is closed at the end. Any other HTML block (an HTML comment, ``<details>`` with
  content on its lines, ``<img>``) is shown as a code block of its source.
- ``limit``: the text fits in ``limit`` characters with ``note`` after it: whole
  top-level blocks while they fit, then as much of the next as fits when it is a code
  block, a table, a list or a paragraph (whole lines, rows or items), then the note.

The output is checked before it is returned (``problems``: read again, it must hold
no link, image or HTML but the kept tags, and no mention, reference or autolink in its
text); should that ever fail, the whole text is shown as one code block instead.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection

from markdown_it.tree import SyntaxTreeNode

from repromatrix.github.markdown import (
    RENDERED_LANGUAGES,
    broken,
    code_block,
    code_span,
    escaped,
    html_text,
    is_plain_url,
    line_start,
)
from repromatrix.github.reading import parsed
from repromatrix.redact import redact_text

_TAG = re.compile(
    r"\s*(?:(?P<open><details(?:\s+open)?\s*>)|(?P<close></details\s*>)"
    r"|<summary>(?P<summary>(?:[^<]|<code>[^<]*</code>)*)</summary>)",
    re.IGNORECASE,
)
_CODE_TAG = re.compile(r"(<code>[^<]*</code>)", re.IGNORECASE)
# What GitHub would link in shown text (as github.markdown.broken breaks it).
_LIVE = re.compile(r"[@＠][A-Za-z0-9]|[#＃][0-9０-９]|(?i:gh)-\d|://|(?i:www)\.")
_KEPT_TAG = re.compile(
    r"(?:\s*(?:<details>|</details>|<summary>(?:[^<]|<code>[^<]*</code>)*</summary>))+"
)
_BREAKS = {"softbreak": "\n", "hardbreak": "\\\n"}
_EMPHASIS = {"em": "*", "strong": "**", "s": "~~"}  # kept: emphasis opens nothing
MAX_SOURCE = 4_000_000  # characters read of a text given no limit


def inert(
    markdown: str, *, limit: int | None = None, note: str = "", links: Collection[str] = ()
) -> str:
    """``markdown`` as GitHub shows it, nothing in it acting (see the module's
    docstring), with no newline at its end; within ``limit`` characters when given,
    ``note`` (a paragraph of its own) included where something was left out.
    ``links``: the targets of links repromatrix wrote itself (its run, a comment of its
    own), kept as links when they are plain http(s) URLs; no other link is."""
    if limit is not None and limit <= len(note) + 2:
        return note.strip("\n")[: max(limit, 0)]
    room = None if limit is None else limit - len(note) - 2
    # Text beyond what could fit is not read (escapes only lengthen what is shown).
    source = markdown[: MAX_SOURCE if room is None else min(MAX_SOURCE, 4 * room + 4096)]
    source = redact_text(source)  # once, before any text is broken (github.markdown.broken)
    written, cut = rewrite(source, room=room, links=links)
    if problems(written, links=links):  # never expected: the writer has a bug; show it all as code
        written, cut = _fitted_block(source, room)
    written = written.rstrip("\n")
    if not (cut or len(source) < len(markdown)) or not note:
        return written
    return f"{written}\n\n{note.strip(chr(10))}" if written else note.strip("\n")


def rewrite(
    markdown: str, *, room: int | None = None, links: Collection[str] = ()
) -> tuple[str, bool]:
    """``markdown`` written again from its syntax tree, inert, within ``room``
    characters when given; whether something was left out. (``inert`` checks it.)"""
    return _Writer(room, frozenset(u for u in links if is_plain_url(u))).document(parsed(markdown))


def _fitted_block(source: str, room: int | None) -> tuple[str, bool]:
    block = code_block(source)
    if room is None or len(block) <= room:
        return block, False
    overhead = len(block) - len(source)
    return code_block(source[: max(room - 2 * overhead, 0)]), True


def problems(markdown: str, *, links: Collection[str] = ()) -> list[str]:
    """What in ``markdown``, read by the one reading, would act: a link (but those in
    ``links``), an image, HTML other than the kept <details>/<summary> tags, a
    mention, an issue reference or an autolink in its text, a code block GitHub draws
    (mermaid, geojson, ...). Empty when it is inert."""
    found: list[str] = []
    for node in parsed(markdown).walk():
        kind = node.type
        if kind == "link" and node.attrs.get("href") in links and node.markup != "autolink":
            continue
        if kind in ("link", "image", "html_inline"):
            found.append(kind)
        elif kind == "html_block" and not _KEPT_TAG.fullmatch(node.content.strip()):
            found.append(f"html_block {node.content[:40]!r}")
        elif kind in ("text", "text_special") and _LIVE.search(node.content):
            found.append(f"text {node.content[:40]!r}")
        elif kind == "fence" and node.info.strip().split(" ")[0].lower() in RENDERED_LANGUAGES:
            found.append(f"fence {node.info[:40]!r}")  # GitHub draws it: no code
    return found


class _Writer:
    """Writes a syntax tree back as inert Markdown, top-level block by block."""

    def __init__(self, room: int | None, links: frozenset[str] = frozenset()) -> None:
        self.room = room
        self.links = links
        self.depth = 0  # <details> opened and not closed

    def document(self, root: SyntaxTreeNode) -> tuple[str, bool]:
        """The tree's blocks while they fit, then what fits of the next; the closers
        of what is left open. Whether something was left out."""
        out: list[str] = []
        used, cut = 0, False
        for node in root.children:
            depth = self.depth
            block = self.top(node)
            if not block:
                continue
            if self.room is None or used + len(block) + len(_closers(self.depth)) <= self.room:
                out.append(block)
                used += len(block)
                continue
            self.depth, cut = depth, True
            out.append(_partial(node, self, self.room - used - len(_closers(depth))))
            break
        out.append(_closers(self.depth))
        return "".join(out), cut

    def top(self, node: SyntaxTreeNode) -> str:
        """One top-level block and the blank line after it."""
        if node.type == "html_block":
            tags = self.tags(node.content)
            if tags is not None:
                return f"{tags}\n\n" if tags else ""
        return self.block(node) + "\n\n"

    def tags(self, source: str) -> str | None:
        """The kept <details>/<summary> tags of an HTML block, balanced; None when the
        block holds anything else."""
        out, at = [], 0
        depth = self.depth
        while at < len(source.rstrip()):
            found = _TAG.match(source, at)
            if found is None:
                return None
            if found["open"]:
                depth += 1
                out.append("<details>")
            elif found["close"]:
                if depth:
                    depth -= 1
                    out.append("</details>")
            else:
                out.append(f"<summary>{_summary(found['summary'])}</summary>")
            at = found.end()
        self.depth = depth
        return "".join(out)

    def block(self, node: SyntaxTreeNode) -> str:
        """A block (no blank line after it), at any depth."""
        kind = node.type
        if kind == "paragraph":
            return _lines(self.inline(node.children[0]))
        if kind == "heading":
            level = max(1, min(6, int(node.tag[1:]))) if node.tag[1:].isdigit() else 1
            return "#" * level + " " + self.inline(node.children[0], one_line=True)
        if kind in ("fence", "code_block"):
            info = node.info.strip().split(" ")[0] if kind == "fence" else ""
            return code_block(node.content, info).rstrip("\n")
        if kind == "hr":
            return "***"
        if kind == "blockquote":
            inner = "\n\n".join(self.block(child) for child in node.children)
            return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
        if kind in ("bullet_list", "ordered_list"):
            return self.listed(node, node.children)
        if kind == "table":
            return "\n".join(self.rows(node))
        if kind == "html_block":
            return code_block(node.content, "html").rstrip("\n")
        return code_block(node.content or "", "text").rstrip("\n")  # a block never seen

    def listed(self, node: SyntaxTreeNode, items: list[SyntaxTreeNode]) -> str:
        ordered = node.type == "ordered_list"
        number = int(node.attrs.get("start", 1) or 1) if ordered else 0
        bullet = node.markup if node.markup in ("-", "*", "+") else "-"
        tight = all(p.hidden for i in items for p in i.children if p.type == "paragraph")
        out = []
        for item in items:
            marker = f"{number}. " if ordered else f"{bullet} "
            number += 1
            inner = ("\n" if tight else "\n\n").join(self.block(c) for c in item.children)
            lines = inner.split("\n") if inner else [""]
            indent = " " * len(marker)
            shown = [marker + lines[0]] + [indent + line if line else "" for line in lines[1:]]
            out.append("\n".join(shown).rstrip(" "))
        return ("\n" if tight else "\n\n").join(out)

    def rows(self, table: SyntaxTreeNode) -> list[str]:
        """A table's header, delimiter and rows."""
        rows = [row for part in table.children for row in part.children]
        if not rows:
            return []
        header = rows[0].children
        aligns = [_align(cell.attrs.get("style")) for cell in header]
        out = [self.row(rows[0]), "| " + " | ".join(aligns) + " |"]
        out += [self.row(row) for row in rows[1:]]
        return out

    def row(self, row: SyntaxTreeNode) -> str:
        cells = [
            self.inline(cell.children[0], cell=True) if cell.children else ""
            for cell in row.children
        ]
        return "| " + " | ".join(cells) + " |"

    def inline(self, node: SyntaxTreeNode, *, cell: bool = False, one_line: bool = False) -> str:
        return "".join(
            self.span(child, cell=cell, one_line=cell or one_line) for child in node.children
        )

    def span(self, node: SyntaxTreeNode, *, cell: bool, one_line: bool) -> str:
        kind = node.type
        inner: Callable[[], str] = lambda: "".join(  # noqa: E731
            self.span(child, cell=cell, one_line=one_line) for child in node.children
        )
        if kind in ("text", "text_special", "html_inline"):
            return _text_of(node.content)
        if kind == "code_inline":
            return code_span(node.content, cell=cell)
        if kind in _BREAKS:
            return " " if one_line else _BREAKS[kind]
        if kind in _EMPHASIS:
            return f"{_EMPHASIS[kind]}{inner()}{_EMPHASIS[kind]}"
        if kind == "link":
            target = str(node.attrs.get("href", ""))
            if node.markup == "autolink":
                return code_span(target, cell=cell)
            if target in self.links:
                return f"[{inner()}]({target})"
            return f"{inner()} ({code_span(target, cell=cell)})" if target else inner()
        if kind == "image":
            source = str(node.attrs.get("src", ""))
            return f"image {inner()} ({code_span(source, cell=cell)})".replace("  ", " ")
        return _text_of(node.content or "")


def _text_of(content: str) -> str:
    """Text as written, spaces kept, on one line (inline HTML's source may span lines,
    and an entity can spell a line ending: ``&#13;``)."""
    return escaped(content.replace("\r", " ").replace("\n", " "), masked=True)


def _summary(source: str) -> str:
    """A <summary>'s text and <code> spans, each escaped again as HTML (spaces between
    them kept)."""
    parts = _CODE_TAG.split(" ".join(source.split()))
    return "".join(
        f"<code>{html_text(html.unescape(part[6:-7]), masked=True)}</code>"
        if index % 2
        else broken(html.escape(html.unescape(part), quote=False), masked=True)
        for index, part in enumerate(parts)
    )


def _lines(paragraph: str) -> str:
    """A paragraph's lines, each safe at a line's start."""
    return "\n".join(line_start(line) for line in paragraph.split("\n"))


def _align(style: object) -> str:
    said = str(style or "")
    if "center" in said:
        return ":---:"
    if "right" in said:
        return "---:"
    if "left" in said:
        return ":---"
    return "---"


def _closers(depth: int) -> str:
    return "</details>\n\n" * depth


def _partial(node: SyntaxTreeNode, writer: _Writer, room: int) -> str:
    """As much of ``node`` as fits in ``room`` characters (whole lines, rows or items),
    with the blank line after it; "" when nothing does."""
    kind = node.type
    if kind in ("fence", "code_block"):
        info = node.info.strip().split(" ")[0] if kind == "fence" else ""
        lines = node.content.split("\n")
        return _longest(lambda n: code_block("\n".join(lines[:n]), info) + "\n", len(lines), room)
    if kind == "table":
        rows = writer.rows(node)
        found = _longest(lambda n: "\n".join(rows[: n + 2]) + "\n\n", len(rows) - 2, room)
        return found
    if kind in ("bullet_list", "ordered_list"):
        items = node.children
        return _longest(lambda n: writer.listed(node, items[:n]) + "\n\n", len(items), room)
    if kind == "paragraph":
        lines = writer.block(node).split("\n")
        return _longest(lambda n: "\n".join(lines[:n]) + "\n\n", len(lines), room)
    return ""


def _longest(render: Callable[[int], str], total: int, room: int) -> str:
    """``render(n)`` for the largest ``n`` in 1..total that fits in ``room`` (found by
    halving: a few renders); "" when not even one does."""
    low, high = 0, total
    while low < high:
        middle = (low + high + 1) // 2
        if len(render(middle)) <= room:
            low = middle
        else:
            high = middle - 1
    return render(low) if low else ""
