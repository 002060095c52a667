"""The comment command parser: every text gives nothing, a command or a refusal with the
accepted syntax; never a traceback."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.issue.command import USAGE, Command, Refusal, parse_comment

WORDS = st.sampled_from(
    [
        "/repromatrix",
        "sweep",
        "bisect",
        "check",
        "transformers",
        "4.50..5.2",
        "5.2..4.50",
        "4.52.4",
        "4.57.6",
        "--pin",
        "peft==0.17.1",
        "peft==0.17.2",
        "--releases",
        "latest-patch",
        "--find",
        "first-good",
        "--case",
        "test_x.py::test_y",
        "'",
        '"',
        "..",
        "--pin=torch==2.13.0",
        "=",
        "\\",
        "\x00",
        "é",
        "`",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_any_text_never_raises(text: str) -> None:
    parsed = parse_comment(text)
    assert parsed is None or isinstance(parsed, (Command, Refusal))
    if isinstance(parsed, Refusal):
        assert USAGE in parsed.reply() or not parsed.usage


# Text that opens no inline code, HTML, emphasis, link or escape: a line of it shows as
# plain text (github.reading decides what a command is).
PLAIN = st.text(alphabet=st.characters(blacklist_characters="`<*_[]\\&!~\n\r"), max_size=40)


@settings(max_examples=600, deadline=None)
@given(st.text(max_size=40), st.lists(WORDS.filter(lambda w: w != "`"), max_size=10), PLAIN)
def test_a_command_line_always_gets_an_answer(before: str, words: list[str], rest: str) -> None:
    # Anything after "/repromatrix " on a line of its own, in a paragraph of its own: a
    # command or a refusal whose reply names the problem and shows the syntax.
    body = f"{before}\n\n/repromatrix {' '.join(words)} {rest}\n"
    if any(opener in before for opener in ("`", "~", "<")):
        return  # an unclosed fence or HTML block runs on: the line is code or HTML
    parsed = parse_comment(body)
    assert isinstance(parsed, (Command, Refusal))
    if isinstance(parsed, Refusal):
        reply = parsed.reply()
        assert "This command cannot run: " in reply and USAGE in reply
        assert "Traceback" not in reply


def test_the_three_commands_parse() -> None:
    sweep = parse_comment(
        "please\n/repromatrix sweep transformers 4.50..5.2 --pin peft==0.17.1 "
        "--releases latest-patch\nthanks"
    )
    assert sweep == Command(
        "sweep",
        "/repromatrix sweep transformers 4.50..5.2 --pin peft==0.17.1 --releases latest-patch",
        "transformers",
        "4.50",
        "5.2",
        ("peft==0.17.1",),
        releases="latest-patch",
    )
    bisect = parse_comment("/repromatrix bisect Transformers 4.52.4 4.57.6 --find first-good")
    assert isinstance(bisect, Command)
    assert (bisect.kind, bisect.package, bisect.start, bisect.end, bisect.find) == (
        "bisect",
        "transformers",
        "4.52.4",
        "4.57.6",
        "first-good",
    )
    check = parse_comment("/repromatrix check --pin=packaging==22.0 --case test_a.py::test_b")
    assert isinstance(check, Command)
    assert (check.kind, check.pins, check.case) == (
        "check",
        ("packaging==22.0",),
        "test_a.py::test_b",
    )


def test_text_without_a_command_line_is_not_for_us() -> None:
    assert parse_comment("I ran /repromatrix sweep yesterday") is None
    assert parse_comment("```\n/repromatrix check\n```") is None  # quoted in a code block
    assert parse_comment(None) is None
    assert parse_comment(42) is None


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("/repromatrix", "no command after /repromatrix"),
        ("/repromatrix frobnicate", "unknown command 'frobnicate'"),
        (
            "/repromatrix sweep transformers 5.2..4.50",
            "the range '5.2..4.50' is reversed; write the older version first: 4.50..5.2",
        ),
        ("/repromatrix sweep transformers 4.50", "'4.50' is not a range FROM..TO"),
        ("/repromatrix sweep transformers 4.x..5", "'4.x' is not a version"),
        (
            "/repromatrix sweep transformers 4.50..5.2 --pin transformers==4.51.0",
            "transformers is the package searched",
        ),
        ("/repromatrix check --pin peft==0.17.1 --pin peft==0.17.2", "peft is pinned twice"),
        ("/repromatrix check --pin peft", "--pin 'peft': expected PACKAGE==VERSION"),
        ("/repromatrix check --pin peft@git+https://example.org/p.git", "only released versions"),
        ("/repromatrix bisect transformers 4.52.4 4.52.4", "GOOD and BAD are the same version"),
        ("/repromatrix bisect transformers 4.52.4", "bisect takes PACKAGE GOOD BAD; got 2"),
        (
            "/repromatrix sweep transformers 4.50..5.2 --releases some",
            "--releases 'some': give one of all, latest-patch, first-and-last-patch",
        ),
        ("/repromatrix check --frob", "unknown option '--frob'"),
        ("/repromatrix check --pin", "--pin needs a value"),
        ("/repromatrix check --case ../../etc/passwd.py", "give a case id of cases/"),
        ('/repromatrix check --pin "peft==1', "cannot split the command line"),
        ("/repromatrix check --find first-good", "check takes no --find"),
    ],
)
def test_each_bad_command_says_what_is_wrong(line: str, said: str) -> None:
    parsed = parse_comment(line)
    assert isinstance(parsed, Refusal)
    assert said in parsed.reason
    reply = parsed.reply()
    assert reply.splitlines()[0].startswith("> `/repromatrix")
    assert said in reply and USAGE in reply
