"""The one reading of a comment or issue body: CommonMark (markdown-it-py), as GitHub's
cmark-gfm renders it, never a regex over lines.

    parsed(text)       the syntax tree (CommonMark with GFM's tables and strikethrough)
    commands(text)     the lines GitHub shows as plain paragraph text of the comment
                       itself that start with a prefix (``/repromatrix``)
    code_blocks(text)  the fenced code blocks GitHub shows, with their info strings

Where GitHub shows code, a quote, a list, raw HTML or an HTML comment, there is no
command: a ``/repromatrix`` line inside a fence (one a tab-indented or four-space
indented closer does not close: an indent of four columns makes it content), inside
a fence whose info string holds a backtick (that is no fence but inline code), in a
list item or a block quote, or in an HTML block, is not one. CommonMark ends lines
at LF, CR and CRLF only: a form feed, a vertical tab, NEL, U+2028 or U+2029 is a
character of the line, so a command after one is no line of its own (Python's
``splitlines`` would make it one). Code inside an HTML comment or an HTML block
(``<details>`` with no blank line after it, ``<!-- -->``, ``<style>``) is raw HTML,
not a code block: it is never a repro.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

# What comes before a command on its source line: only the spaces and tabs CommonMark
# strips (markdown-it-py trims JavaScript's wider set at a paragraph's start).
_INDENT = " \t"


@cache
def parser() -> MarkdownIt:
    """CommonMark with raw HTML (as GitHub's renderer reads it; its sanitizer runs
    after) and GFM's tables and strikethrough."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def parsed(text: str) -> SyntaxTreeNode:
    return SyntaxTreeNode(parser().parse(text))


@dataclass(frozen=True)
class CodeBlock:
    info: str  # the fence's info string, stripped ("" for an indented block)
    code: str  # the content, each line ending with a newline
    line: int  # the first line of the block (0-based) in the text


def code_blocks(text: str) -> list[CodeBlock]:
    """Every code block GitHub renders, fenced or indented, in document order, at any
    depth of lists and block quotes (an unclosed fence runs to the end, as GitHub
    shows it). HTML blocks are raw HTML: code inside them is none of these."""
    found: list[CodeBlock] = []
    for node in parsed(text).walk():
        if node.type in ("fence", "code_block"):
            line = node.map[0] if node.map else 0
            info = node.info.strip() if node.type == "fence" else ""
            found.append(CodeBlock(info, node.content, line))
    return found


def commands(text: str, prefix: str) -> list[str]:
    """The lines of ``text`` that start with ``prefix`` (then a space, a tab or the
    line's end) and that GitHub shows as plain text of a paragraph of the comment
    itself: top-level paragraphs only (no list item, quote or table), the line made
    of text alone (no code span, link, emphasis or inline HTML in it), and its source
    line starting with the prefix after spaces and tabs only. Each as shown (escapes
    and entities resolved), stripped of spaces and tabs."""
    source = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found: list[str] = []
    for node in parsed(text).children:
        if node.type != "paragraph" or not node.children or node.map is None:
            continue
        start, end = node.map
        shown = _lines(node.children[0])
        if len(shown) != end - start:  # a code span or HTML spans lines: no plain line
            shown = shown[:1]
        for offset, line in enumerate(shown):
            if line is None:
                continue
            said = line.strip(_INDENT)
            raw = source[start + offset].lstrip(_INDENT) if start + offset < len(source) else ""
            if _starts(said, prefix) and _starts(raw, prefix):
                found.append(said)
    return found


def _starts(line: str, prefix: str) -> bool:
    return line == prefix or line.startswith((prefix + " ", prefix + "\t"))


def _lines(inline: SyntaxTreeNode) -> list[str | None]:
    """The paragraph's lines as shown: the text of a line made of text alone, None
    for a line that holds anything else."""
    lines: list[str | None] = [""]
    for child in inline.children:
        if child.type in ("softbreak", "hardbreak"):
            lines.append("")
        elif child.type in ("text", "text_special") and lines[-1] is not None:
            lines[-1] += child.content
        else:
            lines[-1] = None
    return lines
