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


@pytest.mark.parametrize(
    "name",
    [
        "DB_PASS",
        "db_pass",
        "api_key",
        "Service_Token",
        "MYSQL_PWD",
        "PASSWD",
        "AWS_CREDENTIALS",
        "BASIC_AUTH",
        "x-auth-header",
        "HF_TOKEN",
        "SECRET",
    ],
)
def test_secret_looking_names_in_any_spelling(name):
    assert redact_text("v=secret-value-1", {name: "secret-value-1"}) == "v=***"


@pytest.mark.parametrize("name", ["PWD", "OLDPWD", "GIT_AUTHOR_NAME", "PATH", "HOME"])
def test_names_that_are_not_secrets(name):
    assert redact_text("in /home/someone/project", {name: "/home/someone/project"}) == (
        "in /home/someone/project"
    )


def test_what_a_matrix_sets_is_masked_from_then_on():
    from repromatrix.redact import forget, remember

    remember({"DB_PASS": "from-the-matrix", "OMP_NUM_THREADS": "16"}, texts=["x"])
    remember(texts=["git+https://me:p%40ss-word@host/r.git"])
    try:
        text = "from-the-matrix 16 p@ss-word p%40ss-word"
        assert redact_text(text, environ={}) == "*** 16 *** ***"
    finally:
        forget()
    assert redact_text("from-the-matrix", environ={}) == "from-the-matrix"


def test_inherited_url_credentials_are_masked_without_their_url():
    environ = {"PIP_INDEX_URL": "https://user:idx-password@host/simple"}
    assert redact_text("auth failed for idx-password", environ) == "auth failed for ***"


def test_the_console_masks_a_secret_written_in_pieces(monkeypatch):
    import io
    import sys

    from repromatrix.redact import console

    monkeypatch.setenv("DB_PASS", "console-secret")
    target = io.StringIO()
    monkeypatch.setattr(sys, "stdout", target)
    with console():
        sys.stdout.write("a console-")
        sys.stdout.write("secret b\nc console-secret")
    assert target.getvalue() == "a *** b\nc ***"


def test_a_console_stream_whose_reader_went_away_raises_nothing() -> None:
    """`repromatrix run | head -2`: writes after the reader closed the pipe go to
    /dev/null (the interpreter's last flush included) and the closing is told once."""
    import os

    from repromatrix.redact import _RedactingStream

    read_end, write_end = os.pipe()
    os.close(read_end)
    told: list[str] = []
    with open(write_end, "w", buffering=1) as raw:
        stream = _RedactingStream(raw, on_closed=lambda: told.append("closed"))
        for _ in range(3):
            stream.write("a line\n")
            stream.flush()
        raw.write("the interpreter's own last words\n")
    assert told == ["closed"]
