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
if os.environ.get("GH_FAIL") and args[0] == os.environ["GH_FAIL"]:
    sys.exit("HTTP 401: Bad credentials (https://api.github.com/graphql)")
if args[:1] == ["api"]:
    print("[]")
elif args[:2] == ["issue", "list"]:
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

    def run(
        *extra: str, issues: str = "[]", fail: str = ""
    ) -> tuple[list[list[str]], dict[str, str], str]:
        env = {
            "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
            "PYTHONPATH": str(REPO / "src"),
            "GH_LOG": str(log),
            "GH_ISSUES": issues,
            "GITHUB_OUTPUT": str(outputs),
            "GH_FAIL": fail,
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
        assert done.returncode == (1 if fail else 0), done.stderr
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
        return calls, written, done.stderr if fail else done.stdout

    return run, tonight, baseline


def _fields(call: list[str]) -> dict[str, str]:
    return dict(call[i + 1].split("=", 1) for i, a in enumerate(call) if a == "-f")


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
        "--run-url",
        "https://github.com/o/r/actions/runs/9",
    )
    assert calls[0][:4] == ["issue", "list", "--state", "all"]
    assert calls[1][:3] == ["label", "create", "nightly-regression"]
    assert calls[2][:2] == ["issue", "create"]
    body = Path(calls[2][calls[2].index("--body-file") + 1]).read_text()
    assert "1 new, 0 still failing, 0 fixed" in body
    # "New tonight": one line per cause, naming the combinations it covers
    assert f": 1 failed: `tf-latest` `{CASE}`" in body
    assert "transformers 4.57.0..4.58.0 (first-bad)" in body  # the hunt, awaiting its answer
    assert "# Nightly" in body  # summary.md, collapsed below
    dispatch = calls[3]
    assert dispatch[:5] == ["workflow", "run", "bisect.yml", "--ref", "main"]
    fields = _fields(dispatch)
    assert fields.pop("hunt") == f"bisect:transformers:4.57.0:4.58.0:tf-latest:{CASE}"
    assert fields == {
        "package": "transformers",
        "good": "4.57.0",
        "bad": "4.58.0",
        "find": "first-bad",
        "case": CASE,
        "pins": "peft==0.17.1",
        "cell": "",  # tf-latest is in no matrix here
        "issue": "77",
    }
    assert outputs == {
        "new": "true",
        "regressed": "true",
        "issue": "77",
        "bisects": "1",
        "culprits": "0",
    }
    assert "regressed: tf-latest" in stdout
    written = json.loads((tonight / "triage.json").read_text())
    assert written["bisects"][0]["package"] == "transformers"
    assert written["tracking"]["new"][0]["since_run"] == "https://github.com/o/r/actions/runs/9"


def test_an_open_tracking_issue_is_updated_not_duplicated(nightly) -> None:
    run, tonight, baseline = nightly
    issues = json.dumps([{"number": 5, "title": "Nightly: regressions", "state": "OPEN"}])
    calls, outputs, _ = run(
        "--baseline", str(baseline), "--summary", str(tonight / "summary.md"), issues=issues
    )
    assert [c[:3] for c in calls] == [
        ["issue", "list", "--state"],
        ["api", "repos/{owner}/{repo}/issues/5/comments?per_page=100", "--paginate"],
        ["issue", "edit", "5"],
    ]
    assert outputs["issue"] == "5"


def test_a_failure_that_failed_last_night_too_is_tracked_but_not_new(
    nightly, tmp_path: Path
) -> None:
    """No issue says what was failing, so last night's results do: the failure is
    still failing (the issue lists it), and the run is not red for it."""
    run, tonight, _ = nightly
    same = _results(tmp_path / "same", "4.58.0", "failed")
    calls, outputs, _ = run(
        "--baseline", str(same), "--summary", str(tonight / "summary.md"), "--dispatch"
    )
    assert [c[:2] for c in calls] == [["issue", "list"], ["label", "create"], ["issue", "create"]]
    body = Path(calls[2][calls[2].index("--body-file") + 1]).read_text()
    assert "0 new, 1 still failing" in body and "before tracking" in body
    assert outputs["new"] == "false" and outputs["bisects"] == "0"


def test_a_first_night_failure_is_new_and_red(nightly) -> None:
    """Without a baseline nothing can be bisected, but the failure is new all the same."""
    run, tonight, _ = nightly
    calls, outputs, _ = run(
        "--summary", str(tonight / "summary.md"), "--baseline-note", "no baseline: a first night"
    )
    body = Path(calls[-1][calls[-1].index("--body-file") + 1]).read_text()
    assert "> no baseline: a first night" in body
    assert outputs["new"] == "true" and outputs["regressed"] == "false"


def test_a_corrupt_baseline_is_said_and_tonight_judged_alone(nightly, tmp_path: Path) -> None:
    run, tonight, _ = nightly
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "results.json").write_text('{"schema": 1, "combinations": [')
    calls, outputs, stdout = run(
        "--baseline", str(corrupt), "--summary", str(tonight / "summary.md")
    )
    assert "no baseline:" in stdout and "not valid JSON" in stdout
    body = Path(calls[-1][calls[-1].index("--body-file") + 1]).read_text()
    assert "not valid JSON" in body and "tonight is judged without one" in body
    assert outputs["new"] == "true"


def test_gh_failing_is_one_line_after_the_triage_is_written(nightly) -> None:
    run, tonight, baseline = nightly
    done = run("--baseline", str(baseline), "--summary", str(tonight / "summary.md"), fail="issue")
    _calls, outputs, stderr = done
    assert outputs["new"] == "true"  # the step outputs are there for the red step
    assert json.loads((tonight / "triage.json").read_text())["gh_error"].startswith("gh issue")
    [line] = [x for x in stderr.splitlines() if x.strip()]
    assert "gh issue list failed: HTTP 401" in line and "Traceback" not in stderr


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
    assert [c[:2] for c in calls] == [["issue", "list"]]  # an open issue would be closed
    assert "regressed:" not in stdout
    assert outputs == {
        "new": "false",
        "regressed": "false",
        "issue": "",
        "bisects": "0",
        "culprits": "0",
    }


def test_the_hunts_run_where_the_night_ran(nightly) -> None:
    """A nightly started by hand on other runners, from another repromatrix: its hunts
    get the same, not the repository's defaults."""
    run, _tonight, baseline = nightly
    calls, _, _ = run(
        *("--baseline", str(baseline), "--dispatch"),
        *("--runner", '["self-hosted", "a100"]', "--repromatrix", "repromatrix==0.1.0"),
    )
    [dispatch] = [c for c in calls if c[:2] == ["workflow", "run"]]
    fields = _fields(dispatch)
    assert fields["runner"] == '["self-hosted", "a100"]'
    assert fields["repromatrix"] == "repromatrix==0.1.0"


def test_a_combination_with_its_own_runner_is_hunted_on_that_runner(nightly, tmp_path) -> None:
    """A 2-GPU combination's bisect runs on the 2-GPU runner matrix.yaml names for it,
    not on the nightly's default."""
    run, _tonight, baseline = nightly
    (tmp_path / "matrix.yaml").write_text(
        "schema: 1\npackages: [transformers, peft]\ntiers:\n  nightly:\n"
        '    - {id: tf-latest, transformers: latest, peft: "0.17.1",\n'
        "       runner: {group: aws-g5-12xlarge, labels: [gpu-2x]}}\n"
    )
    calls, _, _ = run(
        *("--baseline", str(baseline), "--dispatch", "--runner", '["self-hosted", "a100"]')
    )
    [dispatch] = [c for c in calls if c[:2] == ["workflow", "run"]]
    assert json.loads(_fields(dispatch)["runner"]) == {
        "group": "aws-g5-12xlarge",
        "labels": ["gpu-2x"],
    }
