"""What a reader sees of posted Markdown: its text and code, as markdown-it-py reads it
(escapes resolved, the renderer's zero-width spaces dropped), one line per block."""

from __future__ import annotations

from repromatrix.github.markdown import ZWSP
from repromatrix.github.reading import parsed

_SHOWN = ("text", "text_special", "code_inline", "fence", "code_block")


def shown(markdown: str) -> str:
    lines, line = [], []
    for node in parsed(markdown).walk():
        if node.type in _SHOWN:
            line.append(node.content)
        elif node.type in ("softbreak", "hardbreak"):
            line.append(" ")
        elif node.type in ("paragraph", "heading", "td", "th", "html_block") and line:
            lines.append("".join(line))
            line = []
    lines.append("".join(line))
    return "\n".join(lines).replace(ZWSP, "")
