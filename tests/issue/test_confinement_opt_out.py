"""The maintainer's opt-out from the confined repro, said in matrix.yaml (issue 35: "unless
the maintainer opts out in matrix.yaml"): the project's own file, beside its tiers, read by
the issue bot and accepted by every other command that loads matrix.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix.errors import UserError
from repromatrix.issue.config import load_settings
from repromatrix.matrix import load_matrix

TIERS = 'packages: [packaging]\ntiers:\n  smoke:\n    - {id: a, packaging: "24.0"}\n'


def _settings(tmp_path: Path, matrix: str, config: str = "") -> str:
    (tmp_path / "matrix.yaml").write_text(matrix)
    (tmp_path / "repromatrix.yml").write_text(config)
    settings = load_settings(tmp_path / "repromatrix.yml", {}, tmp_path / "matrix.yaml")
    return settings.confinement


def test_confinement_is_required_unless_a_file_opts_out(tmp_path: Path) -> None:
    assert _settings(tmp_path, TIERS) == "required"
    assert _settings(tmp_path, TIERS + "issue: {confinement: optional}\n") == "optional"
    assert _settings(tmp_path, TIERS, "issue: {confinement: optional}\n") == "optional"
    # matrix.yaml saying "required" does not overrule the other file's opt-out: either opts out.
    both = _settings(tmp_path, TIERS + "issue: {confinement: required}\n",
                     "issue: {confinement: optional}\n")  # fmt: skip
    assert both == "optional"


def test_no_matrix_yaml_is_no_opt_out(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "absent.yml", {}, tmp_path / "matrix.yaml")
    assert settings.confinement == "required"


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ("issue: {confinement: maybe}\n", "issue.confinement"),
        ("issue: {confinment: optional}\n", "issue.confinment"),
        ("issue: optional\n", "issue"),
    ],
)
def test_a_bad_opt_out_is_one_line_naming_file_key_and_value(
    tmp_path: Path, block: str, said: str
) -> None:
    with pytest.raises(UserError) as raised:
        _settings(tmp_path, TIERS + block)
    message = str(raised.value)
    assert "matrix.yaml" in message and said in message and "\n" not in message
    # The matrix loader (run, report, the hunts) says the same of the same file.
    with pytest.raises(UserError) as loaded:
        load_matrix(tmp_path / "matrix.yaml")
    assert said in str(loaded.value)


def test_the_matrix_loader_accepts_the_block(tmp_path: Path) -> None:
    (tmp_path / "matrix.yaml").write_text(TIERS + "issue: {confinement: optional}\n")
    assert [c.id for c in load_matrix(tmp_path / "matrix.yaml").combinations()] == ["a"]
