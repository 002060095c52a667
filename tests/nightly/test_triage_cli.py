"""`repromatrix triage` as the nightly job runs it, against a fake `gh` on PATH
that records its calls: tracking issue opened or updated, bisects dispatched
with the tracking issue's number, step outputs written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repromatrix.results import CaseResult, CombinationResult, Results, write_json_atomic

REPO = Path(__file__).resolve().parents[2]
CASE = "test_a.py::test_x"

FAKE_GH = """\
#!{python}
import json, os, sys
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if args[:2] == ["issue", "list"]:
    print(os.environ.get("GH_ISSUES", "[]"))
elif args[:2] == ["issue", "create"]:
    print("https://github.com/o/r/issues/77")
"""


def _results(folder: Path, transformers: str, outcome: str) -> Path:
    combo = CombinationResult(
        id="tf-latest",
        tier="nightly",
        requested={"transformers": "latest", "peft": "0.17.1"},
        resolved={"transformers": transformers, "peft": "0.17.1"},
        status="passed" if outcome == "passed" else "failed",
        cases=[CaseResult(id=CASE, status=outcome, outcome=outcome)],
    )
    write_json_atomic(folder / "results.json", Results(combinations=[combo]).dump())
    return folder


@pytest.fixture
def nightly(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.format(python=sys.executable))
    gh.chmod(0o755)
    tonight = _results(tmp_path / "merged", "4.58.0", "failed")
    baseline = _results(tmp_path / "baseline", "4.57.0", "passed")
    (tonight / "summary.md").write_text("# Nightly\n| combination | verdict |\n")
    log, outputs = tmp_path / "gh.log", tmp_path / "outputs"

    def run(*extra: str, issues: str = "[]") -> tuple[list[list[str]], dict[str, str], str]:
        env = {
            "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
            "PYTHONPATH": str(REPO / "src"),
            "GH_LOG": str(log),
            "GH_ISSUES": issues,
            "GITHUB_OUTPUT": str(outputs),
        }
        log.unlink(missing_ok=True)
        outputs.unlink(missing_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "repromatrix", "triage", "--results", str(tonight), *extra],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
        return calls, written, done.stdout

    return run, tonight, baseline


def test_a_regression_opens_the_tracking_issue_and_dispatches_the_bisect(nightly) -> None:
    run, tonight, baseline = nightly
    calls, outputs, stdout = run(
        "--baseline",
        str(baseline),
        "--summary",
        str(tonight / "summary.md"),
        "--dispatch",
        "--ref",
        "main",
    )
    assert calls[0][:2] == ["issue", "list"]
    assert calls[1][:3] == ["label", "create", "nightly-regression"]
    assert calls[2][:2] == ["issue", "create"]
    assert calls[2][calls[2].index("--body-file") + 1] == str(tonight / "summary.md")
    dispatch = calls[3]
    assert dispatch[:5] == ["workflow", "run", "bisect.yml", "--ref", "main"]
    fields = dict(dispatch[i + 1].split("=", 1) for i, a in enumerate(dispatch) if a == "-f")
    assert fields == {
        "package": "transformers",
        "good": "4.57.0",
        "bad": "4.58.0",
        "find": "first-bad",
        "case": CASE,
        "pins": "peft==0.17.1",
        "issue": "77",
    }
    assert outputs == {"regressed": "true", "issue": "77", "bisects": "1", "culprits": "0"}
    assert "regressed: tf-latest" in stdout
    written = json.loads((tonight / "triage.json").read_text())
    assert written["bisects"][0]["package"] == "transformers"


def test_an_open_tracking_issue_is_updated_not_duplicated(nightly) -> None:
    run, tonight, baseline = nightly
    issues = json.dumps([{"number": 5, "title": "Nightly: regressions"}])
    calls, outputs, _ = run(
        "--baseline", str(baseline), "--summary", str(tonight / "summary.md"), issues=issues
    )
    assert [c[:3] for c in calls] == [
        ["issue", "list", "--state"],
        ["issue", "edit", "5"],
    ]
    assert outputs["issue"] == "5"


def test_nothing_regressed_touches_nothing(nightly, tmp_path: Path) -> None:
    run, tonight, _ = nightly
    same = _results(tmp_path / "same", "4.58.0", "failed")
    calls, outputs, _ = run(
        "--baseline", str(same), "--summary", str(tonight / "summary.md"), "--dispatch"
    )
    assert calls == []
    assert outputs == {"regressed": "false", "issue": "", "bisects": "0", "culprits": "0"}


def test_without_gh_the_commands_are_printed(nightly, tmp_path: Path) -> None:
    run, tonight, baseline = nightly
    (tmp_path / "bin" / "gh").unlink()
    calls, _, stdout = run(
        "--baseline", str(baseline), "--summary", str(tonight / "summary.md"), "--dispatch"
    )
    assert calls == []
    assert "gh is not installed; run: gh issue list" in stdout
    assert "run: gh workflow run bisect.yml -f package=transformers" in stdout
    assert "dispatched" not in stdout  # nothing was started


def test_a_failure_the_registry_knows_is_not_a_regression(nightly, tmp_path: Path) -> None:
    """triage judges as `report` does: with the known-issue registry."""
    run, tonight, baseline = nightly
    registry = tmp_path / "known_issues.yaml"
    registry.write_text(
        f"- case: '{CASE}'\n  when: {{transformers: '>=4.58'}}\n  link: https://x/issues/1\n"
    )
    summary = str(tonight / "summary.md")
    calls, outputs, stdout = run(
        *("--baseline", str(baseline), "--summary", summary, "--dispatch"),
        *("--known-issues", str(registry)),
    )
    assert calls == [] and "regressed:" not in stdout
    assert outputs == {"regressed": "false", "issue": "", "bisects": "0", "culprits": "0"}
