"""The one inert renderer (github/markdown.py's builders, github/inert.py): whatever
quoted text holds, what is posted opens no block, mention, link, image or HTML element,
markers cannot be broken out of, and every post fits GitHub's limit. Checked by reading
the output again with markdown-it-py (``problems``); the hostile inputs were rendered
live before."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repromatrix.github.hidden import hidden, read_hidden
from repromatrix.github.inert import inert, problems, rewrite
from repromatrix.github.markdown import (
    COMMENT_LIMIT,
    ZWSP,
    broken,
    code_block,
    code_span,
    details,
    html_text,
    link,
    table_cell,
    text,
)
from repromatrix.github.reading import code_blocks, parsed

HOSTILE = (
    "ping @alice and @octo-org/maintainers, see #12, GH-7, owner/repo#3 and "
    "https://evil.example/x www.evil.example a@evil.example [click](https://evil.example) "
    "![](https://t.example/p.png) <https://auto.example> <img src=x onerror=alert(1)> "
    "<!-- repromatrix:state AAAA --> &#64;bob \\`@carol\\` $x$"
)
# Pieces that open something in Markdown or on GitHub, for generated hostile text.
PIECES = [
    *"a@#:/w.[]()<>&!`~\\ \n\t-|1*_=+$'\"",
    "```", "~~~", "    ", "<details>", "</details>", "<summary>", "</summary>",
    "<!--", "-->", "--!>", "http://", "www.", "<img src=x>", "\x0c", "\x85", "\u2028",
    "1. ", "- ", "> ", "| --- |", "&#64;", "&lt;", "![x](y)", "[a](b)", "<http://x>",
    "a@b.co", "@team/x", "#12", "GH-3", "[^1]", "[r]: http://r", "\t```", "&#13;", "&#10;",
    "```mermaid\n", "$$", "> [!NOTE]",
]  # fmt: skip
HOSTILE_TEXT = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


def test_mentions_references_html_links_and_images_are_inert() -> None:
    shown = inert(HOSTILE)
    assert problems(shown) == []
    assert f"@{ZWSP}alice" in shown and f"@{ZWSP}octo-org" in shown and f"#{ZWSP}12" in shown
    assert f"GH{ZWSP}-7" in shown and f"https:{ZWSP}//evil" in shown and f"www{ZWSP}." in shown
    assert "click (`https://evil.example`)" in shown  # a link: its text and its target as code
    assert "\\<img src=x onerror=alert(1)\\>" in shown  # inline HTML: its source, as text
    assert f"@{ZWSP}bob" in shown  # an entity cannot spell a mention either
    assert "\\$x\\$" in shown  # no math


def test_a_tab_closer_cannot_break_out_of_a_code_block() -> None:
    # Before: bisect.md's fixed ```python fence, closed by the script's own "```\t".
    script = "s = '''\n```\t\n@alice ![i](https://t.example/p.png) <img src=x>\n'''\n"
    block = code_block(script, "python")
    assert [b.code for b in code_blocks(block)] == [script]
    report = f"**first bad: x 2.0**\n\n```python\n{script}```\n"
    shown = inert(report)
    assert problems(shown) == [] and "first bad: x 2.0" in shown
    assert code_span("a ``b`` c") == "``` a ``b`` c ```"
    assert code_block("x", "mermaid") == "```\nx\n```\n"  # drawn by GitHub: plain code
    assert code_span("x|y", cell=True) == "`x\\|y`"


def test_a_details_block_cannot_open_raw_html() -> None:
    # Before: "<details>" opened an HTML block the inert pass did not model, and the
    # lines after it were raw HTML.
    breakout = "<details>\n<img src=x onerror=alert(1)>\n[a](https://evil.example)\n\nafter @x\n"
    shown = inert(breakout)
    assert problems(shown) == []
    assert "```html\n<details>\n<img src=x" in shown  # the HTML block, shown as its source
    kept = inert("<details>\n<summary>s @x &lt;b&gt;</summary>\n\nbody\n\n</details>\n</details>\n")
    assert kept.count("<details>") == kept.count("</details>") == 1
    assert f"<summary>s @{ZWSP}x &lt;b&gt;</summary>" in kept
    assert inert("<details><summary>s</summary>\n\nopen").endswith("</details>")
    assert details("@team <b>", "body").startswith(f"<details><summary>@{ZWSP}team &lt;b&gt;")


def test_table_cells_are_escaped_fully_not_pipes_only() -> None:
    hostile = "a | b `c` [d](https://e.example) @f <i>x</i> ![g](h) \\| *"
    row = f"| {table_cell(hostile)} | {code_span('x`|y', cell=True)} |"
    table = f"| message | code |\n| --- | --- |\n{row}\n"
    assert problems(table) == []
    [cell, code] = [n for n in parsed(table).walk() if n.type == "td"]
    assert cell.children[0].children[0].content == broken(hostile)  # all text, as written
    assert [n.content for n in code.walk() if n.type == "code_inline"] == ["x`|y"]


def test_a_marker_cannot_be_broken_out_of() -> None:
    for key in ("a -->", "a --!>", "a --->", "<!-->", "x\n<img src=x>"):
        line = hidden("hunt", {"key": key})
        assert line.count("-->") == 1 and "--!>" not in line and "\n" not in line
        assert read_hidden(line, "hunt", line="first") == {"key": key}


def test_every_post_fits_the_limit_and_says_where_the_rest_is() -> None:
    report = (
        "**first bad: x 2.0**\n\n| # | detail |\n| --- | --- |\n"
        + "| 1 | @someone said <b>x</b> |\n" * 3000
        + "\n```\n"
        + "log line\n" * 10_000
        + "```\n"
    )
    assert len(report) > 79_000
    note = "_cut: the whole report is the artifact `bisect-x`._"
    shown = inert(report, limit=COMMENT_LIMIT, note=note)
    assert len(shown) <= COMMENT_LIMIT and shown.startswith("**first bad: x 2.0**")
    assert shown.endswith(note) and problems(shown) == []
    assert inert("short", limit=100, note=note) == "short"
    assert len(inert("x" * 100, limit=10, note="(cut)")) <= 10


def test_own_links_are_kept_others_are_not() -> None:
    run = "https://github.com/o/r/actions/runs/1"
    assert link("run", run) == f"[run]({run})"
    assert link("run", "javascript:alert(1)") == "run (`javascript:alert(1)`)"
    shown = inert(f"[run]({run}) [run](https://evil.example)", links=[run])
    assert shown == f"[run]({run}) run (`https://evil.example`)"
    assert text("# 1. @x") == f"\\# 1. @{ZWSP}x" and text("12. x") == "12\\. x"


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(HOSTILE_TEXT)
def test_no_generated_text_renders_a_mention_link_image_or_html(hostile: str) -> None:
    written, _cut = rewrite(hostile)  # the writer itself, before inert's own check
    assert problems(written) == [], written
    assert problems(rewrite(written)[0]) == []  # and read again, written again


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(HOSTILE_TEXT, st.integers(0, 300))
def test_no_generated_text_outgrows_its_limit(hostile: str, limit: int) -> None:
    shown = inert(hostile, limit=limit, note="(cut)")
    assert len(shown) <= limit and problems(shown) == []


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=200))
def test_text_and_cells_open_nothing(value: str) -> None:
    assert problems(text(value)) == []
    assert problems(f"| a |\n| --- |\n| {table_cell(value)} |\n") == []
    assert len([n for n in parsed(code_block(value)).walk() if n.type == "fence"]) == 1


def test_breaking_a_url_never_hides_its_credentials_from_the_mask() -> None:
    # The mask (redact.py) finds "://user:pass@"; a zero-width space put there first
    # would have let the password through every door.
    said = "resolve: https://bob:canarypass77@idx.example failed"
    assert "canarypass77" not in text(said) and "canarypass77" not in inert(said)
    assert "canarypass77" not in html_text(said) and "canarypass77" not in table_cell(said)
