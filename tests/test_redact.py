"""repromatrix.redact: the three nets, on the shapes that matter."""

from __future__ import annotations

import pytest

from repromatrix.redact import machine_places, redact, redact_text, redactor, shorten_paths


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


def test_a_custom_env_dir_is_shortened_to_env_however_pytest_spells_it(tmp_path):
    """REPROMATRIX_ENV_DIR beside the checkout: pytest (working directory cases/)
    writes the env's files relative to cases/, which is shorter than the absolute path."""
    env = tmp_path / "custom-envs" / "0123456789abcdef"
    cases = tmp_path / "work" / "repo" / "cases"
    places = machine_places(env=env, cases=cases, seen_from=cases)
    site = "venv/lib/python3.11/site-packages/torch/_tensor.py:630: in backward"
    traceback = "\n".join(
        [
            f"../../../custom-envs/0123456789abcdef/{site}",  # as pytest writes it
            f"{env}/{site}",
            "test_lora.py:41: in test_lora ../../x stays",
        ]
    )
    assert shorten_paths(traceback, places).splitlines() == [
        f"<env>/{site}",
        f"<env>/{site}",
        "test_lora.py:41: in test_lora ../../x stays",
    ]
    assert "../../.." not in places  # a bare run of '..' is never a place
