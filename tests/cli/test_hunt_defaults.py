"""matrix.yaml's ``defaults:`` reach every hunt of the command line (check, sweep,
bisect, culprit, the atlas) unless ``--pin`` overrides them, and each hunt says what it
took on its first line. A stand-in prober records the cells it is handed: nothing is
built."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.wheels import pure_wheel

from repromatrix.cli import app
from repromatrix.hunts.atlas.run import ATLAS, AtlasOptions
from repromatrix.matrix.pins import PinKind, pin_text
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import BuiltCell, Observation

PACKAGE = "tiny-pkg"
MATRIX = """\
packages: [torch, mylib, tiny-pkg]
defaults:
  torch: "2.13.0"
  mylib: "."
tiers:
  t:
    - {id: a, tiny-pkg: "1.0.0"}
"""
TOOK = "from matrix.yaml's defaults: torch==2.13.0, mylib=. (--pin overrides)"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "matrix.yaml").write_text(MATRIX)
    # mylib: "." is this folder, a Python project (a folder that is none is bad input)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nversion = "0.1.0"\n')
    (tmp_path / "probe.py").write_text("import sys\n")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        pure_wheel(wheels, PACKAGE, version, {"tiny_pkg.py": f"V = {version!r}\n"})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def recording(cells: list, bad_from: str = "1.2.0"):
    def prober(trial):
        cells.append(trial.cell)
        pins = {pin.package: pin for pin in trial.cell.pins}
        tiny = pins.get(PACKAGE)
        bad = tiny is not None and tiny.spec >= bad_from
        resolved = {p: pin.spec for p, pin in pins.items() if pin.kind is PinKind.EXACT}
        outcome = ProbeOutcome.BAD if bad else ProbeOutcome.GOOD
        return Observation(
            outcome, "exit 1" if bad else "exit 0", 0.1, BuiltCell("f" * 16, resolved=resolved)
        )

    return prober


def held(cell) -> dict[str, str]:
    return {pin.package: pin_text(pin) for pin in cell.pins if pin.package != PACKAGE}


def test_check_takes_the_defaults_and_says_so_first(project: Path, capsys) -> None:
    cells: list = []
    assert app.main(["check", "--script", "probe.py"], prober=recording(cells)) == 0
    [cell] = cells
    assert held(cell) == {"torch": "torch==2.13.0", "mylib": "mylib=."}
    [mylib] = [pin for pin in cell.pins if pin.package == "mylib"]
    assert mylib.location == project, "a folder of the defaults is relative to matrix.yaml"
    said = capsys.readouterr()
    assert said.err.splitlines()[0] == f"check: {TOOK}"
    assert said.out.startswith("good: script probe.py with torch==2.13.0 mylib=. (exit 0")


def test_a_pin_overrides_its_default_and_a_subfolder_finds_the_same_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    cells: list = []
    argv = ["check", "--script", "../probe.py", "--pin", "torch==2.12.0"]
    assert app.main(argv, prober=recording(cells)) == 0
    [cell] = cells
    assert held(cell) == {"mylib": "mylib=.", "torch": "torch==2.12.0"}
    [mylib] = [pin for pin in cell.pins if pin.package == "mylib"]
    assert mylib.location == project
    first = capsys.readouterr().err.splitlines()[0]
    assert first == "check: from matrix.yaml's defaults: mylib=. (--pin overrides)"


def test_without_a_matrix_nothing_is_taken_and_check_asks_for_pins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text("import sys\n")
    assert app.main(["check", "--script", "probe.py"], prober=recording([])) == 128
    assert "give the environment with --pin" in capsys.readouterr().err
    cells: list = []
    argv = ["check", "--script", "probe.py", "--pin", "six==1.16.0"]
    assert app.main(argv, prober=recording(cells)) == 0
    assert held(cells[0]) == {"six": "six==1.16.0"}
    assert "defaults" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("hunt", "ends"),
    [
        ("sweep", ["--from", "1.0.0", "--to", "1.2.0"]),
        ("bisect", ["--good", "1.0.0", "--bad", "1.2.0"]),
    ],
)
def test_the_release_hunts_take_the_defaults_but_not_for_the_searched_package(
    project: Path, capsys, hunt: str, ends: list[str]
) -> None:
    cells: list = []
    argv = [hunt, "--package", PACKAGE, *ends, "--script", "probe.py", "--as-of", "none"]
    argv += ["--wheelhouse", "wheels"]
    assert app.main(argv, prober=recording(cells)) == 0
    assert cells and all(
        held(cell) == {"torch": "torch==2.13.0", "mylib": "mylib=."} for cell in cells
    )
    assert capsys.readouterr().err.splitlines()[0] == f"{hunt}: {TOOK}"


def test_a_searched_package_pinned_in_the_defaults_gives_way(project: Path, capsys) -> None:
    (project / "matrix.yaml").write_text(MATRIX.replace('mylib: "."', 'tiny-pkg: "1.0.0"'))
    cells: list = []
    argv = ["sweep", "--package", PACKAGE, "--from", "1.0.0", "--to", "1.2.0"]
    argv += ["--script", "probe.py", "--as-of", "none", "--wheelhouse", "wheels"]
    assert app.main(argv, prober=recording(cells)) == 0
    tested = sorted(pin.spec for cell in cells for pin in cell.pins if pin.package == PACKAGE)
    assert tested == ["1.0.0", "1.1.0", "1.2.0"]
    assert "sweep: from matrix.yaml's defaults: torch==2.13.0 (" in capsys.readouterr().err


def test_culprit_takes_only_what_a_lock_cannot_carry(project: Path, capsys) -> None:
    (project / "good.txt").write_text("torch==2.13.0\ntiny-pkg==1.0.0\nmylib==0.1.0\n")
    (project / "bad.txt").write_text("torch==2.13.0\ntiny-pkg==1.2.0\nmylib==0.1.0\n")
    cells: list = []
    argv = ["culprit", "--good-lock", "good.txt", "--bad-lock", "bad.txt", "--script", "probe.py"]
    argv += ["--no-release-bisect", "--wheelhouse", "wheels"]
    assert app.main(argv, prober=recording(cells)) == 0
    for cell in cells:  # the folder from the defaults; torch as the locks have it
        assert held(cell) == {"torch": "torch==2.13.0", "mylib": "mylib=."}
    first = capsys.readouterr().err.splitlines()[0]
    assert first == "culprit: from matrix.yaml's defaults: mylib=. (--pin overrides)"


def test_a_cell_given_is_the_whole_cell(project: Path, capsys) -> None:
    cells: list = []
    argv = ["check", "--script", "probe.py", "--cell", "a"]
    assert app.main(argv, prober=recording(cells)) == 0
    assert held(cells[0]) == {"torch": "torch==2.13.0", "mylib": "mylib=."}  # a's own
    assert "defaults" not in capsys.readouterr().err


def test_the_atlas_says_which_defaults_its_cells_take(project: Path) -> None:
    atlas = "atlas:\n  axes: {tiny-pkg: '', six: ''}\n  pins: {torch: '2.13.0'}\n"
    (project / "matrix.yaml").write_text(MATRIX.replace("tiny-pkg]", "tiny-pkg, six]") + atlas)
    assert ATLAS.took(AtlasOptions.read(project / "matrix.yaml")) == (
        "from matrix.yaml's defaults: mylib=."
    )
