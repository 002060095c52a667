"""Commands find matrix.yaml upward from the working directory (like git's .git), and
the run facts and repro lines say what works where the user is."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix import cli
from repromatrix.matrix import find_matrix, load_matrix
from repromatrix.matrix.locate import shown
from repromatrix.pipeline import repro_command

MATRIX = 'schema: 1\ntiers:\n  smoke:\n    - {id: cpu-a, torch: "2.13.0"}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj" / "cases" / "deep").mkdir(parents=True)
    (tmp_path / "proj" / "matrix.yaml").write_text(MATRIX)
    return tmp_path / "proj"


def test_the_nearest_matrix_upward(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = project / "cases" / "deep"
    assert find_matrix(deep) == (project / "matrix.yaml").resolve()
    monkeypatch.chdir(deep)
    assert shown(find_matrix()) == "../../matrix.yaml"
    (deep / "matrix.yaml").write_text(MATRIX)
    assert find_matrix() == (deep / "matrix.yaml").resolve()


def test_no_matrix_anywhere(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    found = find_matrix(tmp_path / "empty")
    assert found is None or not found.is_relative_to(tmp_path)


def test_list_from_a_subfolder_uses_the_projects_matrix(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project / "cases" / "deep")
    assert cli.main(["list"]) == 0
    assert "cpu-a" in capsys.readouterr().out


def test_repro_is_nox_only_beside_a_noxfile(project: Path) -> None:
    matrix = load_matrix(project / "matrix.yaml")
    combo = matrix.find("cpu-a")
    assert repro_command(combo, "test_a.py::test_b[x]", matrix=matrix.path) == (
        "repromatrix run --update --combination cpu-a -- 'test_a.py::test_b[x]'"
    )
    # A noxfile without per-combination sessions: `nox -s cpu-a` would not be found.
    (project / "noxfile.py").write_text("import nox\n\n@nox.session\ndef lint(session): ...\n")
    assert repro_command(combo, matrix=matrix.path) == (
        "repromatrix run --update --combination cpu-a"
    )
    (project / "noxfile.py").write_text(
        "import nox\n\n"
        "def run_one(session): ...\n\n"
        "for combination_id in ['cpu-a']:\n"
        "    nox.session(run_one, name=combination_id, python=False)\n"
    )
    assert repro_command(combo, matrix=matrix.path) == "nox -s cpu-a"


def test_repro_names_a_matrix_that_is_not_found_by_default(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = project / "nightly.yaml"
    other.write_text(MATRIX)
    monkeypatch.chdir(project)
    combo = load_matrix(other).find("cpu-a")
    assert repro_command(combo, matrix=other) == (
        "repromatrix run --update --combination cpu-a --matrix nightly.yaml"
    )
