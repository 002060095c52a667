"""``repromatrix init`` scaffolds a project of one's own into an existing folder and
never overwrites a file without --force."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix import __version__, cli
from repromatrix.cli.init import FILES, scaffold
from repromatrix.matrix import CaseIndex, load_matrix

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"


def test_init_writes_a_project_that_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init"]) == 0
    # This repromatrix runs from a source checkout (an editable install): CI gets a
    # wheel of it, with its SHA256SUMS and the lock (test_init_source.py).
    shipped = [
        f".github/repromatrix/{name}"
        for name in (
            "SHA256SUMS",
            "requirements.txt",
            f"repromatrix-{__version__}-py3-none-any.whl",
        )
    ]
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == (
        sorted([*FILES.values(), ".gitignore", *shipped])
    )
    matrix = load_matrix(tmp_path / "matrix.yaml")
    (smoke,) = matrix.tier("smoke")
    assert smoke.requested()["torch"] == "2.13.0" and "transformers" in smoke.requested()
    ids = CaseIndex(tmp_path / "cases").ids()
    assert ids == [
        "test_example.py::test_a_linear_layer_trains_one_step",
        "test_example.py::test_the_same_step_on_a_gpu",
    ]
    example = (tmp_path / "cases" / "test_example.py").read_text()
    assert "@pytest.mark.gpu" in example and "@pytest.mark.requires(" in example
    capsys.readouterr()
    assert cli.main(["list", "--cases", "--tier", "smoke"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [f"  {i}" for i in ids]


def test_init_overwrites_nothing_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_example.py").write_text("# mine\n")
    assert cli.main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "test_example.py: exists" in err and "--force" in err
    assert (tmp_path / "cases" / "test_example.py").read_text() == "# mine\n"
    assert not (tmp_path / "matrix.yaml").exists()  # nothing written: checked up front
    assert cli.main(["init", str(tmp_path), "--force"]) == 0
    assert "@pytest.mark.gpu" in (tmp_path / "cases" / "test_example.py").read_text()


def test_init_needs_an_existing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["init", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err


# release.yml publishes repromatrix itself: not a user's.
@pytest.mark.parametrize(
    "name", sorted(p.name for p in WORKFLOWS.glob("*.yml") if p.name != "release.yml")
)
def test_init_writes_this_repositorys_workflows(name: str, tmp_path: Path) -> None:
    # One source: what init writes is what this repository runs (and
    # tests/nightly/test_workflows.py lints); from a source checkout it reads
    # .github/workflows itself, from a wheel the copy packed there (test_release.py).
    assert FILES[f"workflows/{name}"] == f".github/workflows/{name}"
    scaffold(tmp_path)
    assert (tmp_path / ".github" / "workflows" / name).read_text() == (WORKFLOWS / name).read_text()


def test_no_second_copy_of_the_workflows_is_committed() -> None:
    assert not (Path(cli.__file__).parent.parent / "scaffold" / "workflows").exists()


def test_init_gives_a_smoke_tier_with_cpu_torch_and_a_nightly_tier(tmp_path: Path) -> None:
    scaffold(tmp_path)
    matrix = load_matrix(tmp_path / "matrix.yaml")
    (smoke,) = matrix.tier("smoke")
    # torch alone from the CPU index (an explicit index), not every package
    assert smoke.package_indexes == (("torch", "https://download.pytorch.org/whl/cpu"),)
    assert not smoke.extra_index_urls
    (nightly,) = matrix.tier("nightly")  # the nightly's default tier exists
    assert nightly.device == "cuda" and nightly.pin("torch").spec == "system"
    assert not nightly.extra_index_urls and not nightly.package_indexes


def test_init_pins_the_folder_s_own_package_in_every_combination(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "LoraPlus_Lite"\nversion = "0.1"\n')
    scaffold(tmp_path)
    matrix = load_matrix(tmp_path / "matrix.yaml")
    assert matrix.packages == ("torch", "transformers", "loraplus-lite")
    for combination in matrix.combinations():  # smoke and nightly: defaults reach both
        assert combination.pin("loraplus-lite").spec == "."
    ids = CaseIndex(tmp_path / "cases").ids()
    assert "test_package.py::test_loraplus_lite_is_installed_from_this_folder" in ids
    assert (
        'metadata.version("loraplus-lite")' in (tmp_path / "cases" / "test_package.py").read_text()
    )


def test_a_folder_without_a_package_gets_the_example_alone(tmp_path: Path) -> None:
    scaffold(tmp_path)
    assert not (tmp_path / "cases" / "test_package.py").exists()
    assert load_matrix(tmp_path / "matrix.yaml").packages[:2] == ("torch", "transformers")
