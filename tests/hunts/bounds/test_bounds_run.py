"""``repromatrix bounds`` end to end on a planted universe of tiny wheels (support/
planted_bounds.py): real uv cells, a script probe, a wheelhouse alone; seconds.

Every shape answered right through ``bounds NAME==VERSION --script FILE --wheelhouse
DIR --json``, in a bounded number of cells; markers, extras, a dependency with no
release in its range; a right range exits 0; the repro lines and the diff work."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from support import planted_bounds as planted

from repromatrix.cli import app


@pytest.fixture(scope="module")
def universe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bounds")
    planted.wheelhouse(folder / "wheels")
    planted.probe(folder / "probe.py")
    return folder


def bounds(universe: Path, *args: str) -> list[str]:
    return [
        "bounds", *args, "--script", str(universe / "probe.py"),
        "--wheelhouse", str(universe / "wheels"), "--env-dir", str(universe / "envs"),
        "--out", str(universe / "reports"),
    ]  # fmt: skip


def test_every_shape_answered_through_the_command_line(
    universe: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(universe)
    argv = bounds(universe, "bf-app==1.0", "--json", "--extra", "more", "--extra", "gee")
    assert app.main(argv) == 1, "a declared bound is wrong"
    out = capsys.readouterr().out
    data = json.loads(out)
    assert data["target"] == "bf-app==1.0" and data["python"].startswith("3.")
    got = {d["name"]: (d["verdict"], d["suggested"]) for d in data["dependencies"]}
    assert got == planted.EXPECTED
    # Four dependencies of 4-6 releases, a broken newest set: about 20 cells.
    assert data["cells"] == len(data["runs"]) <= 20
    by_name = {d["name"]: d for d in data["dependencies"]}
    assert {d["name"]: d["declared"] for d in data["dependencies"]}["bf-b"] == ">=2.0,<2.3"
    assert by_name["bf-g"]["floor"]["reason"].startswith("no release of bf-g satisfies >=9")
    assert [x["requirement"] for x in data["left_out"]] == ['bf-e>=1; python_version < "3"']
    assert data["working_set"]["bf-c"] == "3.3", "floors judged beside a set that works"
    # The floor's evidence: the cell that fails at 1.0 and the one that works at 1.2.
    floor = by_name["bf-a"]["floor"]
    assert (floor["tested"], floor["fails"], floor["works"]) == ("1.0", "1.1", "1.2")
    failing = next(c for c in floor["cells"] if c["pins"]["bf-a"] == "1.0")
    assert failing["outcome"] == "bad" and failing["error"].endswith("bf_a 1.0 lacks total()")
    # What it died of, as every record says it (execution/_cell/signature.py): the
    # version masked, so bf_a 1.0 and 1.1 share one cause.
    signature = failing["signature"]
    assert (signature["exception"], signature["message"]) == ("exit 1", "bf_a <n> lacks total()")
    other = next(c for c in floor["cells"] if c["pins"]["bf-a"] == "1.1")
    assert other["signature"]["key"] == signature["key"]
    # A shut-out release's cell reruns as a user types it: the override travels in --cell.
    shut = next(c for c in by_name["bf-b"]["ceiling"]["cells"] if c["pins"]["bf-b"] == "2.5")
    assert '"overrides":["bf-b==2.5"]' in shut["repro"]
    repro = shlex.split(shut["repro"])
    assert repro[:2] == ["repromatrix", "check"]
    assert app.main([*repro[1:], "--env-dir", str(universe / "envs")]) == 1
    assert "bf_b 2.5 removed mean()" in capsys.readouterr().err

    folder = universe / "reports" / "bf-app-1.0"
    summary = (folder / "summary.md").read_text()
    assert "| `bf-a` | `>=1.0` | ⬇️ floor-too-low | `>=1.2` |" in summary
    assert "cell" in summary and "repromatrix check --script probe.py" in summary
    for written in (summary, (folder / "bounds.json").read_text()):
        assert str(universe) not in written, "no path of this machine"
    diff = (folder / "pyproject.diff").read_text()
    assert diff.startswith("--- a/pyproject.toml\n+++ b/pyproject.toml\n")
    for before, after in (("bf-a>=1.0", "bf-a>=1.2"), ("bf-b>=2.0,<2.3", "bf-b>=2.0,<2.5")):
        assert f'\n-    "{before}",\n' in diff and f'\n+    "{after}",\n' in diff
    assert '\n+    "bf-c>=3.0,<3.4",\n' in diff and '\n     "bf-d>=4.0,<4.3",\n' in diff


def test_right_ranges_exit_zero(
    universe: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(universe)
    assert app.main(bounds(universe, "bf-ok==1.0")) == 0
    captured = capsys.readouterr()
    assert "bf-ok 1.0: every declared bound holds (4 dependencies)" in captured.out
    data = json.loads((universe / "reports" / "bf-ok-1.0" / "bounds.json").read_text())
    # newest and all floors, each floor beside the newest, each cap's first victim
    assert data["cells"] == 2 + 4 + 3 and not data["diff"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["bf-app"], "TARGET 'bf-app': give a release as NAME==VERSION"),
        (["bf-app>=1.0"], "TARGET 'bf-app>=1.0': give a release as NAME==VERSION"),
        (["./nowhere"], "TARGET ./nowhere: no such folder"),
        (["bf-app==1.0", "--only", "bf-z"], "--only bf-z: not a direct dependency of bf-app"),
        (["bf-app==1.0", "--extra", "nope"], "--extra nope: bf-app has no such extra"),
        (["bf-app==1.0", "--pin", "bf-a==1.2"], "--pin bf-a: its declared range is what"),
        (["bf-app==9.9"], "TARGET bf-app==9.9: cannot fetch its metadata"),
        (["bf-app==1.0", "--jobs", "0"], "--jobs 0: give 1 or more"),
    ],
)
def test_bad_input_is_one_line_and_exit_two(
    universe: Path, capsys: pytest.CaptureFixture, args: list[str], said: str
) -> None:
    assert app.main(bounds(universe, *args)) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_folder_target_is_read_from_its_pyproject_and_built_from_source(
    universe: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder's static [project] dependencies, its cells keyed on its source; the diff
    edits its own pyproject.toml."""
    project = tmp_path / "mylib"
    (project / "src" / "mylib").mkdir(parents=True)
    (project / "src" / "mylib" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "mylib"\nversion = "0.1"\n'
        'dependencies = [\n    "bf-a>=1.0",  # the floor\n    "bf-d>=4.0,<4.3",\n]\n'
    )
    (tmp_path / "probe.py").write_text(
        "import bf_a, bf_d\nif bf_a.VERSION < '1.2':\n    raise SystemExit('bf_a too old')\n"
    )
    monkeypatch.chdir(tmp_path)
    # hatchling from the user's index; the universe from the folder of wheels.
    monkeypatch.setenv("UV_FIND_LINKS", str(universe / "wheels"))
    argv = [
        "bounds", "./mylib", "--script", "probe.py", "--only", "bf-a",
        "--env-dir", str(universe / "envs"), "--out", str(tmp_path / "reports"),
    ]  # fmt: skip
    assert app.main(argv) == 1
    data = json.loads((tmp_path / "reports" / "mylib-tree" / "bounds.json").read_text())
    [dependency] = data["dependencies"]
    assert (dependency["verdict"], dependency["suggested"]) == ("floor-too-low", ">=1.2")
    assert data["source"]["path"] == "./mylib" and data["source"]["digest"].startswith("sha256:")
    diff = data["diff"]
    assert '-    "bf-a>=1.0",  # the floor\n+    "bf-a>=1.2",  # the floor' in diff
    assert "--pin mylib=./mylib" in data["runs"][0]["repro"]
    capsys.readouterr()
