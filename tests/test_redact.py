"""repromatrix.redact: the three nets, on the shapes that matter."""

from __future__ import annotations

import pytest

from repromatrix.redact import redact, redact_text, redactor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:pass@host/simple", "https://***@host/simple"),
        ("git+https://tok@github.com/o/r", "git+https://***@github.com/o/r"),
        ("(see https://u:p@h.example)", "(see https://***@h.example)"),
        ("https://host/path@v1 and me@example.org", "https://host/path@v1 and me@example.org"),
        ("hf_" + "a" * 20, "***"),
        ("token=hf_" + "a" * 20 + ".", "token=***."),
        ("xhf_" + "a" * 20, "xhf_" + "a" * 20),  # not at a word start: not a token
        ("hf_short", "hf_short"),
        ("ghp_" + "b" * 36, "***"),
        ("gho_" + "b" * 36, "***"),
        ("github_pat_" + "c" * 30, "***"),
        ("glpat-" + "e" * 20, "***"),
        ("AKIA" + "D" * 16, "***"),
        ("xoxb-" + "1" * 12, "***"),
        ("graph hidden github gh_ x", "graph hidden github gh_ x"),
    ],
)
def test_shapes(text, expected):
    assert redact_text(text, environ={}) == expected


def test_secret_named_variables_are_masked_wherever_their_values_appear():
    environ = {"MY_API_KEY": "value-of-the-key", "PATH": "/usr/bin", "SHORT_TOKEN": "abc"}
    assert redact_text("k=value-of-the-key p=/usr/bin abc", environ) == "k=*** p=/usr/bin abc"
    scrub = redactor(environ)
    assert scrub("value-of-the-key") == "***"
    assert redact({"a": ["value-of-the-key", 1], "b": None}, environ) == {
        "a": ["***", 1],
        "b": None,
    }


def test_a_long_word_is_scanned_linearly():
    """A 3 MB word used to backtrack quadratically in the URL pattern: now instant
    (this would take hours, not a timing threshold)."""
    assert redact_text("x" * 3_000_000 + "://u:p@h", environ={}).endswith("://***@h")
