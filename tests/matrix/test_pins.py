from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repromatrix.matrix.pins import PinKind, is_version, parse_pin


@pytest.mark.parametrize(
    ("raw", "kind", "requirement"),
    [
        ("4.56.2", PinKind.EXACT, "transformers==4.56.2"),
        ("5.0.0rc1", PinKind.EXACT, "transformers==5.0.0rc1"),
        (">=4.50,<4.53", PinKind.RANGE, "transformers>=4.50,<4.53"),
        ("~=4.52.0", PinKind.RANGE, "transformers~=4.52.0"),
        ("latest", PinKind.LATEST, "transformers"),
        (
            "git+https://github.com/huggingface/transformers@main",
            PinKind.DIRECT,
            "transformers @ git+https://github.com/huggingface/transformers@main",
        ),
        ("system", PinKind.SYSTEM, None),
        (None, PinKind.ABSENT, None),
    ],
)
def test_each_form_of_pin_gives_its_requirement(raw, kind, requirement):
    pin = parse_pin("Transformers", raw)
    assert pin.package == "transformers"
    assert pin.kind is kind
    assert pin.requirement() == requirement


def test_range_keeps_the_users_clause_order():
    assert str(parse_pin("peft", ">= 0.15 , <0.18")) == ">=0.15,<0.18"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("4.5x", "'4.5x' is not a version or specifier"),
        (">>4.5", "'>>4.5' is not a version or specifier"),
        ("", "'' is not a version or specifier"),
        (4.5, "4.5 is a number; quote it: '4.5'"),
        (2, "2 is a number; quote it: '2'"),
        (True, "True is not a version, specifier, 'latest', 'system' or null"),
        (["4.5"], "['4.5'] is not a version, specifier, 'latest', 'system' or null"),
    ],
)
def test_bad_specs_say_what_is_wrong(raw, problem):
    with pytest.raises(ValueError) as err:
        parse_pin("transformers", raw)
    assert str(err.value) == problem


def test_floating_pins_are_the_ones_that_can_move():
    assert parse_pin("x", "latest").floating
    assert parse_pin("x", ">=1").floating
    assert parse_pin("x", "git+https://example.org/x@main").floating
    assert not parse_pin("x", "1.0").floating
    assert not parse_pin("x", "system").floating


# Version-like text: release segments, pre/post/dev/local parts, epochs, spaces, and
# the near misses (leading dots, letters, non-ASCII digits).
_VERSION_LIKE = st.from_regex(
    r"\A\s?(?:[0-9]!)?[0-9٣]{1,3}(?:\.[0-9a-z]{0,3}){0,3}(?:(?:rc|a|b|\.post|\.dev|-)[0-9]?)?"
    r"(?:\+[a-z0-9.]{0,4})?\s?\Z"
)


@given(_VERSION_LIKE)
def test_is_version_answers_as_packaging_does(text: str) -> None:
    # is_version tells plain releases without packaging.version; what it answers must
    # be what packaging answers, for every text.
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
        expected = True
    except InvalidVersion:
        expected = False
    assert is_version(text) is expected


def test_plain_pins_load_no_version_grammar() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom repromatrix.matrix.pins import parse_pin\n"
            "parse_pin('torch', '2.13.0'); parse_pin('six', '1.16.0')\n"
            "assert 'packaging.version' not in sys.modules, 'loaded'\n"
            "parse_pin('torch', '2.13.0+cpu')\n"
            "assert 'packaging.version' in sys.modules, 'a local version needs the grammar'\n",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("raw", [".", "./pkgs/mylib", "../mylib", "/abs/mylib"])
def test_a_folder_is_a_path_pin_relative_to_its_base(raw, tmp_path):
    pin = parse_pin("MyLib", raw, base=tmp_path)
    assert pin.kind is PinKind.PATH
    assert str(pin) == raw  # as written: what results and reports show
    assert pin.location == (tmp_path / raw).resolve()
    assert pin.requirement() == f"mylib @ {(tmp_path / raw).resolve().as_uri()}"


def test_a_bare_relative_folder_is_refused_with_the_spelling_that_works():
    with pytest.raises(ValueError, match=r"a folder starts with './': './pkgs/mylib'"):
        parse_pin("mylib", "pkgs/mylib")


def test_matrix_folder_pins_are_relative_to_the_matrix_file(write_matrix, tmp_path, monkeypatch):
    from repromatrix.matrix import load_matrix

    path = write_matrix(
        """
        packages: [torch, mylib]
        tiers:
          smoke: [{id: mine, torch: "2.13.0", mylib: "./pkgs/mylib"}]
        """
    )
    (tmp_path / "pkgs" / "mylib").mkdir(parents=True)
    (tmp_path / "pkgs" / "mylib" / "pyproject.toml").write_text("[project]\nname = 'mylib'\n")
    monkeypatch.chdir("/")
    (combo,) = load_matrix(path).tier("smoke")
    assert combo.pin("mylib").location == tmp_path / "pkgs" / "mylib"
    assert combo.requested() == {"torch": "2.13.0", "mylib": "./pkgs/mylib"}


def test_pin_option_takes_a_folder_relative_to_the_working_directory(tmp_path, monkeypatch):
    from repromatrix.errors import UserError
    from repromatrix.matrix.pins import parse_pin_option, pin_text

    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.py").write_text("")
    pin = parse_pin_option("mylib=.")
    assert (pin.kind, pin.location, pin_text(pin)) == (PinKind.PATH, tmp_path, "mylib=.")
    with pytest.raises(UserError, match="or a folder"):
        parse_pin_option("mylib=pkgs/mylib")


def test_a_cell_carries_a_folder_pin_relative_to_the_working_directory(tmp_path, monkeypatch):
    from repromatrix.matrix.cell import cell_json, parse_cell
    from repromatrix.matrix.model import Combination

    pin = parse_pin("mylib", "./pkgs/mylib", base=tmp_path)
    (tmp_path / "pkgs" / "mylib").mkdir(parents=True)
    (tmp_path / "pkgs" / "mylib" / "pyproject.toml").write_text("[project]\nname = 'mylib'\n")
    monkeypatch.chdir(tmp_path)
    text = cell_json(Combination(id="mine", tier="smoke", pins=(pin,)))
    assert '"mylib":"./pkgs/mylib"' in text
    assert parse_cell(text, "--cell").pin("mylib").location == tmp_path / "pkgs" / "mylib"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("./nope", "'./nope' is no folder (nothing there)"),
        ("./empty", "'./empty' holds no pyproject.toml or setup.py (not a Python project)"),
    ],
)
def test_a_folder_pin_that_cannot_be_built_is_bad_input(
    write_matrix, tmp_path, monkeypatch, spec, said
):
    """One line naming the file, the key and the value (exit 2), never an install-error
    verdict; --pin says the same of the working directory."""
    from repromatrix.errors import UserError
    from repromatrix.matrix import load_matrix
    from repromatrix.matrix.pins import parse_pin_option

    (tmp_path / "empty").mkdir()
    path = write_matrix(
        f"packages: [torch, mylib]\ntiers:\n  smoke: [{{id: mine, mylib: '{spec}'}}]\n"
    )
    with pytest.raises(UserError) as refused:
        load_matrix(path)
    where = f"{path.name}: tiers.smoke[0].mylib"
    assert str(refused.value) == f"{where}: {said}, relative to {path.name}"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as refused:
        parse_pin_option(f"mylib={spec}")
    assert str(refused.value) == f"--pin 'mylib={spec}': {said}, relative to the working directory"
