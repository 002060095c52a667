"""Commands run from a subfolder of a project use its places as they use its
matrix.yaml (found upward, like git's .git): run, report and triage read and write
reports/latest/ beside matrix.yaml, bisect, sweep and culprit write under its
reports/, and a probe's --case is in its cases/. A place typed on the command line
stays relative to the working directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.reportdata import demo_results

from repromatrix import cli
from repromatrix.cli.app import _beside_the_matrix, build_parser
from repromatrix.matrix import find_matrix
from repromatrix.results import load_results, write_json_atomic

CASE = "test_work.py::test_it_works"


@pytest.fixture
def deep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory: two folders below a project's matrix.yaml."""
    project = tmp_path / "project"
    (project / "cases" / "deep").mkdir(parents=True)
    (project / "cases" / "test_work.py").write_text("def test_it_works():\n    pass\n")
    (project / "matrix.yaml").write_text(
        'schema: 1\npackages: [iniconfig]\ntiers:\n  smoke:\n    - {id: ini, iniconfig: "2.0.0"}\n'
    )
    monkeypatch.chdir(project / "cases" / "deep")
    return project / "cases" / "deep"


def _places(argv: list[str]) -> dict[str, str]:
    parser = build_parser()
    args, _ = parser.parse_known_args(argv)
    found = find_matrix()
    if found is not None:
        _beside_the_matrix(parser, args, found)
    return {k: str(getattr(args, k)) for k in ("results", "out", "cases") if hasattr(args, k)}


PROBE = ["--script", "probe.py"]


@pytest.mark.parametrize(
    ("argv", "places"),
    [
        (["run"], {"results": "../../reports/latest", "cases": "None"}),
        (["report"], {"results": "../../reports/latest", "cases": "None"}),
        (["triage"], {"results": "../../reports/latest", "cases": "None"}),
        (["bisect", "--package", "p", "--good", "1", "--bad", "2", *PROBE],
         {"out": "../../reports/bisect", "cases": ".."}),
        (["sweep", "--package", "p", "--from", "1", "--to", "2", *PROBE],
         {"out": "../../reports/sweep", "cases": ".."}),
        (["culprit", *PROBE], {"out": "../../reports/culprit", "cases": ".."}),
        (["check", *PROBE, "--pin", "p==1"], {"cases": ".."}),
        # typed: relative to here, even when it spells the default
        (["run", "--results", "reports/latest"], {"results": "reports/latest", "cases": "None"}),
        (["bisect", "--package", "p", "--good", "1", "--bad", "2", *PROBE, "--out", "o",
          "--cases", "reports/../cases"], {"out": "o", "cases": "reports/../cases"}),
    ],
)  # fmt: skip
def test_default_places_are_beside_the_matrix(
    deep: Path, argv: list[str], places: dict[str, str]
) -> None:
    assert _places(argv) == places


def test_an_explicit_matrix_leaves_the_places_here(deep: Path) -> None:
    parser = build_parser()
    args, _ = parser.parse_known_args(["run", "--matrix", "../../matrix.yaml"])
    assert str(args.results) == "reports/latest"


def test_report_from_a_subfolder_renders_the_projects_results(
    deep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = deep.parent.parent / "reports" / "latest"
    write_json_atomic(latest / "results.json", demo_results().dump())
    cli.main(["report"])
    out = capsys.readouterr().out
    assert (latest / "summary.md").is_file() and (latest / "index.html").is_file()
    assert load_results(latest).summary is not None
    assert "reports in ../../reports/latest" in out
    assert sorted(os.listdir(deep)) == []  # nothing written here


@pytest.mark.e2e
def test_run_and_check_from_a_subfolder(
    deep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envs = str(tmp_path / "envs")
    assert cli.main(["run", "--env-dir", envs]) == 0
    latest = deep.parent.parent / "reports" / "latest"
    data = json.loads((latest / "results.json").read_text())
    assert [c["verdict"] for c in data["combinations"]] == ["PASS"]
    assert [c["id"] for c in data["combinations"][0]["cases"]] == [CASE]
    # check's --case is a case of the project's cases/, the cell the run built
    assert cli.main(["check", "--case", CASE, "--pin", "iniconfig==2.0.0", "--env-dir", envs]) == 0
    assert f"good: case {CASE}" in capsys.readouterr().out
    assert sorted(os.listdir(deep)) == []
