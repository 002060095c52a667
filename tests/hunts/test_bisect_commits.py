"""A commit bisect on a local git repository (file://, offline apart from the
build backend uv fetches once): a tiny package, tags, and a known bad commit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.history import git
from support.wheels import project_toml

from repromatrix import cli
from repromatrix.errors import UserError
from repromatrix.hunts.bisect.commits import Commit, history
from repromatrix.hunts.bisect.run import BISECT, BisectOptions
from repromatrix.hunts.hunt import Voice, run_hunt
from repromatrix.probe.prober import CellProber
from repromatrix.probe.spec import Probe

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def commit(repo: Path, subject: str, *, answer: int, version: str = "0.1.0") -> str:
    (repo / "pyproject.toml").write_text(project_toml(version=version))
    package = repo / "src" / "tinylib"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(f"def answer():\n    return {answer}\n")
    (repo / "NOTES").write_text(subject + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """v0.1.0, eight commits (one a merge of a side branch), v0.2.0; the answer
    changes from 42 to 41 in the commit "Make answer configurable (#17)"."""
    root = tmp_path_factory.mktemp("tinylib")
    git(root, "init", "-q", "-b", "main")
    shas = {"v0.1.0": commit(root, "Initial release", answer=42)}
    git(root, "tag", "v0.1.0")
    commit(root, "Docs (#11)", answer=42)
    commit(root, "Refactor (#12)", answer=42)
    git(root, "checkout", "-q", "-b", "side")
    commit(root, "side work 1", answer=42)
    commit(root, "side work 2", answer=42)
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "side", "-m", "Merge pull request #13 from x/side")
    commit(root, "Tests (#14)", answer=42)
    shas["bad"] = commit(root, "Make answer configurable (#17)", answer=41)
    commit(root, "More docs (#18)", answer=41)
    shas["v0.2.0"] = commit(root, "Release 0.2.0", answer=41, version="0.2.0")
    git(root, "tag", "v0.2.0")
    return root, shas


def test_history_is_first_parent_between_the_refs(repo, tmp_path: Path) -> None:
    root, shas = repo
    found = history(root.as_uri(), "v0.1.0", "v0.2.0", tmp_path)
    subjects = [c.subject for c in found.commits]
    assert subjects[0] == "Initial release" and subjects[-1] == "Release 0.2.0"
    assert "side work 1" not in subjects, "a merged branch is one step: its merge"
    assert "Merge pull request #13 from x/side" in subjects
    assert found.good.sha == shas["v0.1.0"] and found.bad.sha == shas["v0.2.0"]
    assert [c.pr for c in found.commits if c.pr] == ["11", "12", "13", "14", "17", "18"]
    assert all(len(c.sha) == 40 and c.date for c in found.commits)


def test_unknown_refs_are_one_line(repo, tmp_path: Path) -> None:
    root, _ = repo
    with pytest.raises(UserError, match=r"--bad v9\.9: no such tag, branch or commit"):
        history(root.as_uri(), "v0.1.0", "v9.9", tmp_path)


def test_pr_numbers_from_subjects() -> None:
    assert Commit(0, "a" * 40, "Fix thing (#123)").pr == "123"
    assert Commit(0, "a" * 40, "Merge pull request #7 from a/b").pr == "7"
    assert Commit(0, "a" * 40, "No number here #12 in the middle").pr is None


def answer_bisect(tmp_path: Path, root: Path, good: str, bad: str, **kw) -> BisectOptions:
    """A bisect of tinylib in the git repository ROOT from GOOD to BAD, probed by
    whether tinylib.answer() is 42; reports and environments under TMP_PATH."""
    script = tmp_path / "probe.py"
    script.write_text("import sys, tinylib\nsys.exit(0 if tinylib.answer() == 42 else 1)\n")
    return BisectOptions(
        package="tinylib",
        good=good,
        bad=bad,
        probe=Probe(script=script),
        out=tmp_path / "reports",
        env_dir=tmp_path / "envs",
        git=root.as_uri(),
        **kw,
    )


@pytest.mark.e2e
def test_a_commit_bisect_finds_the_bad_commit(repo, tmp_path: Path) -> None:
    root, shas = repo
    options = answer_bisect(tmp_path, root, "v0.1.0", "v0.2.0", jobs=2)
    env_dir = options.env_dir
    lines: list[str] = []
    record, code = run_hunt(BISECT, options, CellProber(env_dir=env_dir), Voice(say=lines.append))
    assert code == 0, record.reason
    assert record.mode == "commits"
    assert record.first_bad == shas["bad"]
    assert record.commits["first"]["subject"] == "Make answer configurable (#17)"
    assert record.commits["first"]["pr"] == "17"
    assert "Make answer configurable (#17) (PR #17)" in lines[0]
    folder = tmp_path / "reports" / "tinylib-v0.1.0-v0.2.0"
    data = json.loads((folder / "bisect.json").read_text())
    assert data["first_bad"] == shas["bad"] and len(data["last_good"]) == 40
    assert data["mode"] == "commits" and data["rounds"] == record.rounds
    text = (folder / "bisect.md").read_text()
    assert "- mode: commits;" in text and f"`{shas['bad']}`" in text

    # Again: every commit tested before reuses its environment (keyed on the sha).
    again, _ = run_hunt(BISECT, options, CellProber(env_dir=env_dir), Voice(say=lines.append))
    assert again.first_bad == shas["bad"]
    assert all(step.reused for step in again.steps)


def test_bad_git_input_exits_2(repo, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root, _ = repo
    script = tmp_path / "probe.py"
    script.write_text("pass\n")
    code = cli.main(
        [
            *["bisect", "--package", "tinylib", "--git", root.as_uri()],
            *["--good", "v0.1.0", "--bad", "nope", "--script", str(script)],
            *["--env-dir", str(tmp_path / "e")],
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--bad nope: no such tag, branch or commit" in err
    assert err.count("\n") == 1


@pytest.mark.e2e
def test_a_release_bisect_goes_on_into_commits(repo, tmp_path: Path) -> None:
    from repromatrix.environment.request import CELL_TOOLING
    from repromatrix.environment.uv import uv_binary

    root, shas = repo
    wheels = tmp_path / "wheels"
    for tag in ("v0.1.0", "v0.2.0"):
        checkout = tmp_path / tag
        subprocess.run(["git", "clone", "-q", "-b", tag, str(root), str(checkout)], check=True)
        subprocess.run(
            [uv_binary(), "build", "-q", "--wheel", "-o", str(wheels), str(checkout)],
            check=True,
        )
    # The cell's tooling and the build backend, offline beside the two releases. pip
    # from the base interpreter: a uv-made venv (nox's) has none of its own.
    subprocess.run(
        [
            getattr(sys, "_base_executable", None) or sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "-d",
            str(wheels),
            *CELL_TOOLING,
            "hatchling",
        ],
        check=True,
    )
    options = answer_bisect(tmp_path, root, "0.1.0", "0.2.0", wheelhouse=wheels)
    record, code = run_hunt(
        BISECT, options, CellProber(env_dir=tmp_path / "envs"), Voice(say=lambda _: None)
    )
    assert code == 0, record.reason
    assert record.mode == "releases+commits"
    assert record.commits["releases"]["first_bad"] == "0.2.0"
    assert (record.commits["good_ref"], record.commits["bad_ref"]) == ("v0.1.0", "v0.2.0")
    assert record.first_bad == shas["bad"]
    assert record.commits["first"]["pr"] == "17"
