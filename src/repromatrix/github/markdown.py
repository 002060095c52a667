"""Markdown for GitHub comments and issue bodies.

Two kinds of text meet in a comment: what repromatrix writes (headings, tables,
collapsed sections) and what it quotes (an error message, a repro's output, a report
that a job running someone else's code wrote). ``inert`` makes quoted Markdown safe to
show: outside code, a mention cannot notify (``@user``, ``@org/team``), an issue
reference cannot link (``#12``), HTML cannot render (``<img>``, ``<!-- -->``) and
neither can a link or an autolink; code spans and fenced blocks are left as written
(GitHub renders nothing inside them) and a fence left open is closed, so quoted text
can never swallow what follows it.

GitHub refuses a comment or an issue body over ``COMMENT_LIMIT`` characters; ``cut``
shortens Markdown to a limit at a line boundary and closes what it leaves open.
"""

from __future__ import annotations

import re

COMMENT_LIMIT = 65_536  # GitHub's limit on an issue body and on a comment

_ZWSP = "\u200b"  # breaks a mention, a reference or an autolink; shows as nothing
_OPENING = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ALLOWED_TAGS = ("<details>", "</details>", "<summary>", "</summary>")
_TAG = re.compile(r"</?(?:details|summary)>")
_BACKTICKS = re.compile(r"`+")
# What renders as a link, a reference or a mention outside code: "@", "#123", "GH-123",
# "://", "www.", "[", "]".
_LINKISH = re.compile(r"@|#(?=\d)|(?i:gh)(?=-\d)|:(?=//)|(?i:www)(?=\.)|[\[\]]")


def code_span(text: str, *, cell: bool = False, limit: int | None = None) -> str:
    """Inline code that survives backticks in ``text`` (a longer backtick fence, padded
    where the text starts or ends with one); on one line. ``cell``: pipes escaped, for
    a table cell. ``limit``: at most that many characters of ``text``."""
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    if cell:
        text = text.replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, language: str = "text") -> str:
    """A fenced block longer than any backtick run in ``text``, so it cannot be closed
    from inside."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}\n"


def details(summary: str, body: str) -> str:
    """A collapsed section; ``summary`` is made inert (it is shown as text)."""
    shown = inert(one_line(summary))
    return f"<details><summary>{shown}</summary>\n\n{body.rstrip()}\n\n</details>\n"


def table_cell(text: str) -> str:
    """Text inside a Markdown table cell: pipes escaped, one line."""
    return text.replace("|", "\\|").replace("\n", " ")


def one_line(text: str, limit: int | None = None) -> str:
    line = " ".join(str(text).split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    return line


def inert(markdown: str) -> str:
    """``markdown`` as GitHub shows it, minus everything that acts: outside fenced
    blocks and code spans, mentions, issue references, autolinks and link brackets
    are broken (a zero-width space, or a backslash), ``&`` and ``<`` are escaped except
    in bare ``<details>``/``<summary>`` tags, whose ``</details>`` are balanced; a fence
    left open is closed. Linear in the text."""
    out: list[str] = []
    depth = 0  # <details> opened and not closed
    lines, fence = _fenced(markdown)
    for line, code in lines:
        if code:
            out.append(line)
        else:
            text, depth = _inert_line(line, depth)
            out.append(text)
    if fence is not None:
        out.append(fence)
    out += ["</details>"] * depth
    return "\n".join(out)


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and len(stripped) >= len(fence)
        and stripped == fence[0] * len(stripped)
    )


def _inert_line(line: str, depth: int) -> tuple[str, int]:
    """One line outside fenced blocks: code spans kept, the rest neutralised."""
    out: list[str] = []
    at = 0
    plain_from = 0
    while at < len(line):
        char = line[at]
        if char == "\\" and at + 1 < len(line):
            at += 2  # an escaped character is literal, a backtick included
            continue
        if char != "`":
            at += 1
            continue
        run = _BACKTICKS.match(line, at)
        assert run is not None
        closing = _matching_run(line, run.end(), len(run.group()))
        if closing is None:
            at = run.end()  # no span: the backticks are literal text
            continue
        plain, depth = _neutral(line[plain_from:at], depth)
        out += [plain, line[at:closing]]
        at = plain_from = closing
    plain, depth = _neutral(line[plain_from:], depth)
    out.append(plain)
    return "".join(out), depth


def _matching_run(line: str, start: int, length: int) -> int | None:
    """The end of the next run of exactly ``length`` backticks at or after ``start``."""
    for found in _BACKTICKS.finditer(line, start):
        if len(found.group()) == length:
            return found.end()
    return None


def _neutral(text: str, depth: int) -> tuple[str, int]:
    """Text outside code: the allowed tags kept (and counted), everything else inert."""
    out: list[str] = []
    at = 0
    for tag in _TAG.finditer(text):
        out.append(_escaped(text[at : tag.start()]))
        name = tag.group()
        if name == "<details>":
            depth += 1
            out.append(name)
        elif name == "</details>":
            if depth:
                depth -= 1
                out.append(name)
            else:
                out.append("&lt;/details>")
        else:
            out.append(name)
        at = tag.end()
    out.append(_escaped(text[at:]))
    return "".join(out), depth


def _escaped(text: str) -> str:
    text = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
    return _LINKISH.sub(_broken, text)


def _broken(found: re.Match[str]) -> str:
    mark = found.group()
    if mark in "[]":
        return "\\" + mark
    return mark + _ZWSP


def cut(text: str, limit: int, note: str = "") -> str:
    """``text`` when it fits in ``limit`` characters; else its longest run of whole
    lines that fits with the closers of what those lines leave open (a fenced block,
    <details>) and ``note``, then those closers and the note."""
    if len(text) <= limit:
        return text
    budget = limit - len(note)
    kept = _whole_lines(text[: max(budget, 0)])
    while kept:
        closers = _closers(kept)
        if len(kept) + len(closers) <= budget:
            return kept + closers + note
        kept = _whole_lines(kept[: max(budget - len(closers), 0)])  # strictly shorter
    return note[:limit]


def _whole_lines(text: str) -> str:
    return text[: text.rindex("\n") + 1] if "\n" in text else ""


def _closers(text: str) -> str:
    """What closes the fenced block and the <details> ``text`` (whole lines) leaves open."""
    lines, fence = _fenced(text)
    depth = sum(
        line.count("<details>") - line.count("</details>") for line, code in lines if not code
    )
    closers = f"{fence}\n" if fence is not None else ""
    return closers + "\n</details>\n" * max(depth, 0)


def _fenced(markdown: str) -> tuple[list[tuple[str, bool]], str | None]:
    """Each line of ``markdown`` and whether it is inside a fenced block (its fences
    count as inside), and the fence still open at the end (None when none is)."""
    lines: list[tuple[str, bool]] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        if fence is not None:
            lines.append((line, True))
            if _closes(line, fence):
                fence = None
            continue
        opening = _OPENING.match(line)
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = opening["fence"]
        lines.append((line, fence is not None))
    return lines, fence
