"""docs/nightly.md's dry-run command, run as printed, in a copy of this checkout whose
smoke tier is two tiny combinations (the real one takes minutes of torch)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import act
from support.nights import packaging_matrix

pytestmark = [pytest.mark.act, pytest.mark.e2e]


def _documented_command(repo_root: Path) -> list[str]:
    text = (repo_root / "docs" / "nightly.md").read_text()
    section = text.split("## Dry-run the nightly locally", 1)[1]
    [command] = re.findall(r"```bash\n(.+?)\n```", section.split("\n## ", 1)[0], re.S)
    words = shlex.split(command)
    assert words[:3] == ["python3", "-m", "nox"], command
    return [sys.executable, *words[1:]]


def test_the_documented_dry_run_runs_night_1_and_shows_what_gh_was_asked(
    act_ready: None, repo_root: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in tracked:
        if name.startswith(("reports/", "cases/")) or not (repo_root / name).is_file():
            continue
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo_root / name, project / name)
    smoke = packaging_matrix({"pk21.3": "21.3", "pk21.2": "21.2"}, tier="smoke")
    (project / "matrix.yaml").write_text(smoke)
    (project / "cases").mkdir()
    (project / "cases" / "pytest.ini").write_text("[pytest]\n")
    (project / "cases" / "known_issues.yaml").write_text("[]\n")
    (project / "cases" / "test_version.py").write_text(
        "def test_version_parses():\n"
        "    from packaging.version import Version\n\n"
        "    assert Version('1.0') < Version('1.1')\n"
    )
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "project"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *step],
                       cwd=project, check=True, capture_output=True)  # fmt: skip
    env = {**os.environ, act.ACTIONS_VARIABLE: str(act.actions_dir())}
    env.pop("NOX_SCRIPT_MODE", None)

    done = subprocess.run(
        [*_documented_command(repo_root), "--", "--work", str(tmp_path / "dry-run")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )

    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert re.search(r"^  PASS +pk21\.3$", output, re.M), output[-3000:]
    assert re.search(r"^  PASS +pk21\.2$", output, re.M), output[-3000:]
    assert "gh run list --workflow nightly.yml" in output
    assert "act exit status 0" in output
    assert "nothing reached GitHub" in output


def test_the_dry_run_without_the_actions_says_why_in_one_line(
    act_ready: None, tmp_path: Path
) -> None:
    """Offline with no --actions, act cannot clone the first action it needs: the
    console says so, and the fix, not only act's exit status (seconds: it stops there)."""
    from repromatrix.cli.init import scaffold

    scaffold(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != act.ACTIONS_VARIABLE}
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "dry-run", "--repromatrix", ".", "--work",
         str(tmp_path / "dry")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    (why,) = [line for line in output.splitlines() if line.startswith("why: ")]
    assert re.fullmatch(
        r"why: act could not clone actions/([\w-]+) \(no network\); run offline with --actions "
        r"DIR, a folder holding a copy of each action the workflows use \(\1: "
        r"DIR/\1/action\.yml\), or set REPROMATRIX_ACT_ACTIONS=DIR",
        why,
    ), why
    assert output.rstrip().splitlines()[-1].startswith("act exit status 1; full log: ")
