"""README's instructions run as written: every file a command there names is shipped
(a `--script repro.py` that no one has cannot run), the first ten minutes' `check`
gives the verdict the README prints, and every nox session those minutes name is one a
repository scaffolded by `repromatrix init` has too (its noxfile listed by nox itself)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from repromatrix.cli.init import scaffold
from repromatrix.matrix import load_matrix

# Files a command reads; FILE.py-like placeholders (capitals) are the reader's own.
FILE_OPTIONS = re.compile(r"--(?:script|good-lock|bad-lock|known-issues)\s+([^\s`)]+)")


def _instructions(readme: str) -> str:
    """README without the quoted bot comments (````markdown blocks: another job's files)."""
    return re.sub(r"(?ms)^````markdown\n.*?^````$", "", readme)


def test_every_file_a_readme_command_names_is_shipped(repo_root: Path) -> None:
    named = FILE_OPTIONS.findall(_instructions((repo_root / "README.md").read_text()))
    assert named, "the README names files in its commands"
    missing = [n for n in named if not re.fullmatch(r"[A-Z_.]+(\.py)?", n) and not (
        repo_root / n).is_file()]  # fmt: skip
    assert not missing, f"README commands name files that are not shipped: {missing}"


def _first_ten_minutes_check(readme: str) -> tuple[list[str], str]:
    section = readme.split("## Your first ten minutes", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```bash\n(.*?)```", section, re.S)[1]
    command, said = re.search(r"(python3 -m nox -s check .*?)\n# (.*?)\n", block, re.S).groups()
    return shlex.split(command.replace("\\\n", " ")), said


@pytest.mark.e2e
def test_the_first_ten_minutes_check_gives_the_verdict_the_readme_prints(
    repo_root: Path, shared_env_store: Path
) -> None:
    words, said = _first_ten_minutes_check((repo_root / "README.md").read_text())
    assert words[:5] == ["python3", "-m", "nox", "-s", "check"]
    env = {**os.environ, "REPROMATRIX_ENV_DIR": str(shared_env_store)}
    done = subprocess.run([sys.executable, *words[1:]], cwd=repo_root, env=env,
                          capture_output=True, text=True, timeout=1200)  # fmt: skip
    output = done.stdout + done.stderr
    assert "failed with exit code 1" in output, output[-3000:]  # bad: git bisect run's 1
    verdict = said.rsplit(", ", 1)[0]  # the seconds differ from run to run
    assert verdict in output, output[-3000:]


def test_the_sessions_the_first_ten_minutes_name_are_a_scaffolded_repository_s_too(
    repo_root: Path, tmp_path: Path
) -> None:
    """`nox -s check` in a repository `repromatrix init` made ("Sessions not found:
    check" was the first thing a new user met); a combination id of this repository's
    matrix.yaml is the one session name that is this repository's own."""
    section = (repo_root / "README.md").read_text().split("## Your first ten minutes", 1)[1]
    named = set(re.findall(r"nox -s ([\w.-]+)", section.split("\n## ", 1)[0]))
    ours = {c.id for c in load_matrix(repo_root / "matrix.yaml").combinations()}
    assert named - ours, "the first ten minutes name sessions"
    scaffold(tmp_path)
    tools = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=tmp_path, env=tools,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    sessions = set(re.findall(r"^[*-] (\S+)", listed.stdout, re.M))  # selected or not
    assert named - ours <= sessions, sorted(named - ours - sessions)
    assert {"check", "sweep", "bisect", "atlas", "report", "matrix"} <= sessions
