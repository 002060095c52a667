"""tests/support/act.py's own parts that need no act run: what it says is missing, and
how it reads act's log and artifact folder."""

from __future__ import annotations

import zipfile
from pathlib import Path

from support import act

LOG = """\
[nightly/setup] ⭐ Run Main Install repromatrix
[nightly/setup]   ✅  Success - Main Install repromatrix [3.013003429s]
[slice_0/nightly combination/a-1]   ✅  Success - Main Install repromatrix [440.5ms]
[slice_0/nightly combination/b-2]   ❌  Failure - Main Run b [2m55.25s]
[nightly/gather ]   ✅  Success - Main Reports (summary.md) [453.588342ms]
[nightly/gather ]   ⚙  Summary - ## repromatrix: ✅ 2 PASS

**Exit status 0**: nothing regressed.
[nightly/gather ] ⭐ Run Main Upload the nightly results
"""


def test_the_log_gives_step_seconds_and_the_step_summary(tmp_path: Path) -> None:
    (tmp_path / "act.log").write_text(LOG)
    run = act.ActRun(0, tmp_path / "act.log", tmp_path / "artifacts")
    assert run.step_seconds("Install repromatrix") == [3.013003429, 0.4405]
    assert run.step_seconds("Run b") == [175.25]
    assert run.summary().strip() == (
        "## repromatrix: ✅ 2 PASS\n\n**Exit status 0**: nothing regressed."
    )


def test_artifacts_are_listed_and_unzipped(tmp_path: Path) -> None:
    folder = tmp_path / "artifacts" / "1" / "nightly-results"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "nightly-results.zip", "w") as archive:
        archive.writestr("results.json", "{}")
    (tmp_path / "act.log").write_text("")
    run = act.ActRun(0, tmp_path / "act.log", tmp_path / "artifacts")
    assert run.artifact_names() == ["nightly-results"]
    assert (run.artifact("nightly-results") / "results.json").read_text() == "{}"


def test_missing_names_the_actions_folder_and_its_variable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(act.ACTIONS_VARIABLE, str(tmp_path))
    line = act.missing()
    assert line is not None and "\n" not in line
    assert f"in {tmp_path} (set {act.ACTIONS_VARIABLE} to their folder)" in line
    assert "checkout, setup-python, upload-artifact, download-artifact" in line
