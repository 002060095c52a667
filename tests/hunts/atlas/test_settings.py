"""matrix.yaml's atlas: block: read with the matrix; a bad value is one line naming
key and value, exit 2, from any command that loads the matrix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from planted import STACK

from repromatrix.cli import app
from repromatrix.errors import UserError
from repromatrix.matrix import load_matrix

BASE = STACK


def write(tmp_path: Path, atlas: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(BASE + textwrap.dedent(atlas))
    return path


def test_the_block_is_read_with_its_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        atlas:
          axes: {transformers: ">=4.52,<5.3", PEFT: ">=0.15", trl: all}
          pins: {torch: "2.13.0"}
        """,
    )
    atlas = load_matrix(path).atlas
    assert atlas is not None
    assert atlas.axes == {"transformers": ">=4.52,<5.3", "peft": ">=0.15", "trl": ""}
    assert (atlas.releases, atlas.strength, atlas.budget, atlas.audit) == (
        "latest-patch", 2, 300, 0.1,
    )  # fmt: skip
    assert atlas.held() == {"torch": "2.13.0"}
    assert load_matrix(write(tmp_path, "")).atlas is None


def test_an_optional_axis(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        atlas:
          axes: {transformers: ">=4.52", trl: {versions: ">=0.22", optional: true}}
        """,
    )
    atlas = load_matrix(path).atlas
    assert atlas is not None
    assert atlas.axes == {"transformers": ">=4.52", "trl": ">=0.22"}
    assert atlas.optional == ("trl",)


@pytest.mark.parametrize(
    ("block", "line"),
    [
        ("atlas: {axes: {transformers: '>=4.5', trl: {versions: '>=0.2', optional: 1}}}",
         "matrix.yaml: atlas.axes.trl.optional: 1 is not true or false"),
        ("atlas: {axes: {transformers: '>=4.5', trl: {version: '>=0.2'}}}",
         "matrix.yaml: atlas.axes.trl.version: unknown key"),
        ("atlas: {axes: {transformers: '>=4.5x', peft: '>=0.15'}}",
         "matrix.yaml: atlas.axes.transformers: '>=4.5x' is not a version specifier"),
        ("atlas: {axes: {transformers: 4.50, peft: '>=0.15'}}",
         "matrix.yaml: atlas.axes.transformers: 4.50 is a number"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, strength: 4}",
         "matrix.yaml: atlas.strength: Input should be 2 or 3 (got 4)"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, budget: 0}",
         "matrix.yaml: atlas.budget: Input should be greater than or equal to 1 (got 0)"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, audit: 0.9}",
         "matrix.yaml: atlas.audit: Input should be less than or equal to 0.5 (got 0.9)"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, releases: every}",
         "matrix.yaml: atlas.releases: Input should be 'latest-patch' or 'all' (got 'every')"),
        ("atlas: {axes: {transformers: '>=4.5'}}",
         "matrix.yaml: atlas.axes: {'transformers': '>=4.5'}: name at least two packages"),
        ("atlas: {axes: {transfomers: '>=4.5', peft: '>=0.15'}}",
         "matrix.yaml: atlas.axes.transfomers: unknown package"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, pins: {torch: '2.x'}}",
         "matrix.yaml: atlas.pins.torch: '2.x' is not a version or specifier"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, pins: {peft: '0.17.1'}}",
         "matrix.yaml: atlas.pins.peft: '0.17.1': peft is an axis"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, cases: [../x.py]}",
         "matrix.yaml: atlas.cases[0]: '../x.py' is not a case in the cases folder"),
        ("atlas: {axes: {transformers: '>=4.5', peft: '>=0.15'}, budgt: 3}",
         "matrix.yaml: atlas.budgt: unknown key"),
        ("atlas: [transformers]",
         "matrix.yaml: atlas: must be a mapping with an 'axes' key"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_key_and_value(
    tmp_path: Path, block: str, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, block)
    with pytest.raises(UserError) as raised:
        load_matrix(path)
    assert str(raised.value).startswith(line)
    code = app.main(["atlas", "plan", "--matrix", str(path), "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [f"repromatrix: error: {raised.value}"]
    assert "Traceback" not in err and not (tmp_path / "a").exists()


def test_a_case_the_cases_folder_lacks_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_a.py").write_text("def test_a():\n    pass\n")
    path = write(tmp_path, "atlas: {axes: {transformers: '>=4.5', peft: all}, cases: [test_b.py]}")
    with pytest.raises(UserError, match=r"atlas\.cases\[0\]: 'test_b.py'"):
        load_matrix(path)


def test_no_atlas_block_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "")
    assert app.main(["atlas", "run", "--matrix", str(path)]) == 2
    assert "matrix.yaml: atlas: no atlas block" in capsys.readouterr().err
