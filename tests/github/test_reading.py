"""The one reading of a comment (github/reading.py, markdown-it-py): a command is a
line GitHub shows as plain paragraph text of the comment itself, a repro is a code
block GitHub shows. Each hostile input here was taken before (a regex over lines)."""

from __future__ import annotations

import pytest

from repromatrix.github.reading import code_blocks, commands
from repromatrix.issue.command import parse_comment
from repromatrix.issue.repro import find_repro

PREFIX = "/repromatrix"
REPRO = "```python\n# repromatrix: packaging\nimport evil\n```\n"


@pytest.mark.parametrize(
    "comment",
    [
        # A log pasted in a fence that a tab-indented or a 4-space-indented "closer"
        # does not close (four columns of indent make it content): still code.
        "```\nlog line\n\t```\n/repromatrix approve\n```\n",
        "```\nlog line\n    ```\n/repromatrix approve\n```\n",
        # A backtick in the info string: no fence, so the next ``` opens the real one.
        "```a`b\n```\n/repromatrix approve\n```\n",
        # A list item (its lazy continuation too) or a quote: not the comment's own text.
        "- /repromatrix approve\n",
        "- a log\n/repromatrix approve\n",
        "1. /repromatrix approve\n",
        "> /repromatrix approve\n",
        # A form feed, vertical tab, NEL, U+2028 or U+2029 is no line end in CommonMark.
        "log line\f/repromatrix approve\n",
        "log line\v/repromatrix approve\n",
        "log line\x85/repromatrix approve\n",
        "log line\u2028/repromatrix approve\n",
        "log line\u2029/repromatrix approve\n",
        # ... nor whitespace before a command (markdown-it-py trims it at a paragraph's start).
        "\f/repromatrix approve\n",
        "\u2028/repromatrix approve\n",
        "\x85/repromatrix approve\n",
        # Raw HTML: an HTML comment, a <details> with no blank line after it.
        "<!--\n/repromatrix approve\n-->\n",
        "<details>\n/repromatrix approve\n</details>\n",
        "text <!--\n/repromatrix approve -->\n",
        # Inline code, an indented code block, a heading (setext), a table cell.
        "`\n/repromatrix approve`\n",
        "    /repromatrix approve\n",
        "/repromatrix approve\n---\n",
        "| /repromatrix approve |\n| --- |\n",
        # Not at the line's start, or not the command word.
        "I ran /repromatrix sweep yesterday\n",
        "/repromatrixapprove\n",
    ],
)
def test_no_command_where_github_shows_no_plain_line(comment: str) -> None:
    assert commands(comment, PREFIX) == []
    assert parse_comment(comment) is None


@pytest.mark.parametrize(
    ("comment", "line"),
    [
        ("/repromatrix approve", "/repromatrix approve"),
        ("Please run it:\n/repromatrix check --pin a==1\n", "/repromatrix check --pin a==1"),
        ("   /repromatrix approve  \n", "/repromatrix approve"),
        ("```\n/repromatrix check\n```\n\n/repromatrix approve\n", "/repromatrix approve"),
        ("\t```\n/repromatrix approve\n", "/repromatrix approve"),  # an indented block first
        ("<details>\n\n/repromatrix approve\n\n</details>\n", "/repromatrix approve"),
        ("/repromatrix\tcheck\r\n", "/repromatrix\tcheck"),
    ],
)
def test_a_command_is_a_plain_paragraph_line(comment: str, line: str) -> None:
    assert commands(comment, PREFIX)[:1] == [line]


def test_the_command_is_read_as_shown() -> None:
    # An escape shows as its character: the command is what a reader sees.
    assert commands("/repromatrix check --pin a\\_b==1\n", PREFIX) == [
        "/repromatrix check --pin a_b==1"
    ]


@pytest.mark.parametrize(
    "body",
    [
        f"<!--\n{REPRO}-->\n",  # hidden in an HTML comment
        f"<!-- a --!>\n{REPRO}-->\n",  # `--!>` ends it for a browser, not for CommonMark
        f"<details>\n{REPRO}</details>\n",  # raw HTML: the fences are text in it
        f"<style>\n\n{REPRO}\n</style>\n",  # an HTML block that blank lines do not end
        f"<div hidden>\n{REPRO}</div>\n",
    ],
)
def test_code_inside_html_is_never_a_repro(body: str) -> None:
    assert [b for b in code_blocks(body) if b.info == "python"] == []
    assert find_repro(body, "issue") is None


def test_a_repro_is_a_code_block_github_shows() -> None:
    shown = f"<details>\n\n{REPRO}\n</details>\n"  # collapsed, but rendered as code
    assert find_repro(shown, "issue").code == "# repromatrix: packaging\nimport evil\n"
    # A tab-indented closer does not end the block: the whole of it is the repro.
    tabbed = "```python\n# repromatrix: packaging\ns = '''\n\t```\n'''\n```\n"
    assert find_repro(tabbed, "issue").code == "# repromatrix: packaging\ns = '''\n\t```\n'''\n"
    assert [(b.info, b.line) for b in code_blocks("x\n\n~~~ py\na\n~~~\n\n    b\n")] == [
        ("py", 2),
        ("", 6),
    ]
