"""GitHub text: inert quoted Markdown (nothing in it notifies, renders HTML or links
outside code), code spans and blocks that cannot be broken out of, and cutting to a
limit that never leaves a block open."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.github.markdown import (
    COMMENT_LIMIT,
    code_block,
    code_span,
    cut,
    details,
    inert,
    table_cell,
)

ZWSP = "\u200b"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def outside_code(markdown: str) -> str:
    """The text of ``markdown`` outside fenced blocks and same-line code spans."""
    kept, fence = [], None
    for line in markdown.split("\n"):
        opening = _FENCE.match(line)
        if fence is not None:
            if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        kept.append(re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", line))
    return "\n".join(kept)


def test_mentions_references_html_and_links_outside_code_are_inert() -> None:
    hostile = (
        "ping @alice and @octo-org/maintainers, see #12 and https://evil.example/x "
        "www.evil.example [click](https://evil.example) ![](https://t.example/p.png) "
        "<img src=x onerror=alert(1)> <!-- repromatrix:state AAAA --> &#64;bob \\`@carol\\`"
    )
    text = inert(hostile)
    assert "@alice" not in text and f"@{ZWSP}alice" in text
    assert f"@{ZWSP}octo-org/maintainers" in text
    assert f"#{ZWSP}12" in text and f"GH{ZWSP}-7" in inert("GH-7")
    assert "://" not in text and "www." not in text
    assert "](" not in text.replace("\\](", "")  # no link brackets left unescaped
    assert "<img" not in text and "<!--" not in text and "&lt;!--" in text
    assert "&#64;" not in text  # an entity cannot spell an @ either
    assert f"@{ZWSP}carol" in text  # escaped backticks open no code span


def test_code_spans_and_fenced_blocks_are_kept_as_written() -> None:
    quoted = "run `pip install x@https://y` then:\n\n```python\nprint('@here <b>')\n```\n"
    assert inert(quoted) == quoted


def test_an_unclosed_fence_is_closed_and_details_are_balanced() -> None:
    text = inert("<details><summary>s</summary>\n\n</details>\n</details>\n```\n@x <b>")
    assert text.count("<details>") == text.count("</details>") == 1
    assert text.endswith("```")
    assert inert("<details>\nopen") == "<details>\nopen\n</details>"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("a@#:/w.[]()<>&!`~\\ \n-|123gGhH")), max_size=300))
def test_no_generated_text_renders_a_mention_tag_or_link_outside_code(text: str) -> None:
    shown = outside_code(inert(text))
    assert not re.search(r"@[A-Za-z0-9]", shown)
    assert not re.search(r"#\d|(?i:gh)-\d", shown)
    assert "://" not in shown
    assert not re.search(r"<(?!/?(details|summary)>)", shown)


def test_code_spans_and_blocks_survive_backticks() -> None:
    assert code_span("a ``b`` c") == "``` a ``b`` c ```"
    assert code_span("x|y", cell=True) == "`x\\|y`"
    assert code_span("x" * 50, limit=10) == "`xxxxxxxxx…`"
    block = code_block("```\n@x\n```", "text")
    assert block.startswith("````text\n") and block.endswith("\n````\n")
    assert table_cell("a|b\nc") == "a\\|b c"
    assert details("@team <b>", "body").startswith(f"<details><summary>@{ZWSP}team &lt;b>")


def test_cut_keeps_whole_lines_and_closes_what_it_leaves_open() -> None:
    text = "head\n<details>\n\n```\n" + "line\n" * 20_000 + "```\n\n</details>\n"
    shown = cut(text, COMMENT_LIMIT, "\n(cut)\n")
    assert len(shown) <= COMMENT_LIMIT
    assert shown.endswith("```\n\n</details>\n\n(cut)\n")
    assert cut("short", 10) == "short"
    assert len(cut("x" * 100, 10, "(cut)")) <= 10
