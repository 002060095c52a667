"""One rule finds the known-issue registry for run, report and triage: the one given
with --known-issues, else known_issues.yaml in the cases folder beside the matrix,
wherever the matrix is and wherever the command runs from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.reportdata import CASE_A, demo_results

from repromatrix import cli
from repromatrix.pipeline import RunOptions, reporting_for
from repromatrix.results import load_results, write_json_atomic
from repromatrix.verdicts.knownissues import RegistryLocation

LINK = "https://github.com/huggingface/transformers/issues/40000"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project in another folder, and a working directory with no cases/ of its own."""
    other = tmp_path / "elsewhere"
    (other / "cases").mkdir(parents=True)
    (other / "matrix.yaml").write_text("schema: 1\ntiers: {smoke: [{id: a}]}\n")
    # The case the entry names (an entry naming no case is an error).
    (other / "cases" / "test_lora.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('x', ['default', 'reentrant'])\n"
        "def test_lora_gets_gradients(x):\n    pass\n"
    )
    (other / "cases" / "known_issues.yaml").write_text(
        f"- case: '{CASE_A}'\n  when: {{transformers: '>=4.53'}}\n  link: {LINK}\n"
    )
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    return other


def _stored(folder: Path) -> Path:
    write_json_atomic(folder / "results.json", demo_results().dump())
    return folder


def test_run_reads_the_registry_beside_the_matrix(project: Path) -> None:
    reporting = reporting_for(RunOptions(matrix=project / "matrix.yaml"))
    assert [issue.case for issue in reporting.registry.issues] == [CASE_A]


def test_report_reads_the_registry_beside_the_matrix(project: Path) -> None:
    folder = _stored(Path("latest"))
    cli.main(["report", "--results", str(folder), "--matrix", str(project / "matrix.yaml")])
    assert load_results(folder).find("tf4.53.0").verdict == "KNOWN-BROKEN"


def test_report_without_a_matrix_beside_it_finds_no_registry(project: Path) -> None:
    folder = _stored(Path("latest"))
    cli.main(["report", "--results", str(folder)])  # ./matrix.yaml: no cases/ here
    assert load_results(folder).find("tf4.53.0").verdict != "KNOWN-BROKEN"


def test_triage_reads_the_registry_beside_the_matrix(project: Path) -> None:
    yesterday = demo_results()
    for combination in yesterday.combinations:  # everything passed last night
        combination.status = "passed"
        for each in combination.cases:
            each.status = each.outcome = "passed"
    write_json_atomic(Path("baseline") / "results.json", yesterday.dump())

    def flagged(*matrix: str) -> list[str]:
        folder = _stored(Path("latest"))
        cli.main(["triage", "--results", str(folder), "--baseline", "baseline", *matrix])
        return json.loads((folder / "triage.json").read_text())["flagged"]

    assert "tf4.53.0" in flagged()  # no registry here: a regression
    assert "tf4.53.0" not in flagged("--matrix", str(project / "matrix.yaml"))


def test_an_explicit_registry_must_exist(project: Path) -> None:
    location = RegistryLocation.of(matrix=project / "matrix.yaml", explicit=Path("nope.yaml"))
    assert location.required
    assert (
        cli.main(["report", "--results", str(_stored(Path("r"))), "--known-issues", "nope.yaml"])
        == 2
    )
