"""The run job's bisect and check through real cells (the act scenarios cover the sweep
and the watch): what answer.json says, from an offline wheelhouse of packaging releases
(LegacyVersion, removed in packaging 22.0)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.pip import PIP

from repromatrix.issue.answer import artifact_name, read_result
from repromatrix.issue.plan import Job, Plan
from repromatrix.issue.run import run_plan

pytestmark = pytest.mark.e2e

REPRO = "# repromatrix: packaging\nfrom packaging.version import LegacyVersion\n"


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    house = tmp_path_factory.mktemp("issue-wheels")
    pip = [*PIP, "download", "-d", str(house)]
    # The cell's runner (pytest 8.3.5 takes packaging 21), and the releases bisected.
    for requirement in ("pytest==8.3.5", "pytest-xdist", "packaging==21.3", "packaging==22.0"):
        subprocess.run([*pip, requirement], check=True)
    return house


@pytest.fixture
def offline(
    wheelhouse: Path, shared_env_store: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    saved = dict(os.environ)  # run_plan takes token-like variables out of this process
    for name in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_FIND_LINKS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheelhouse))
    monkeypatch.setenv("REPROMATRIX_ENV_DIR", str(shared_env_store))
    monkeypatch.setenv("GH_TOKEN", "must-not-reach-the-repro")
    yield
    os.environ.clear()
    os.environ.update(saved)


def _run(tmp_path: Path, job: Job, monkeypatch: pytest.MonkeyPatch):
    plan = tmp_path / "plan"
    plan.mkdir()
    (plan / job.repro_name()).write_text(REPRO)
    monkeypatch.chdir(tmp_path)
    run_plan(
        Plan(event="issue_comment", repository="o/r", jobs=[job]),
        plan,
        tmp_path / "answers" / artifact_name(job.issue),  # as post downloads it
        tmp_path / "cases",
        say=lambda _line: None,
    )
    return read_result(tmp_path / "answers", job.issue)


def test_a_bisect_answers_the_first_bad_release(
    offline: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = Job(
        issue=3, comment=1, kind="bisect", line="/repromatrix bisect packaging 21.3 22.0",
        package="packaging", start="21.3", end="22.0", timeout=300,
    )  # fmt: skip
    result = _run(tmp_path, job, monkeypatch)
    assert not isinstance(result, str), result
    assert result.status == "done"
    assert result.headline.startswith("first bad: packaging 22.0 (last good: 21.3)")
    assert "- error (packaging 22.0): `exit 1: ImportError: cannot import name" in result.markdown
    assert "### Bisect of packaging: first-bad" in result.markdown
    assert "GH_TOKEN" not in os.environ  # taken out before any cell was built


def test_a_check_answers_good_or_bad_with_the_versions(
    offline: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = Job(
        issue=4, comment=1, kind="check", line="/repromatrix check --pin packaging==22.0",
        pins=["packaging==22.0"], watched=["packaging"], timeout=300,
    )  # fmt: skip
    result = _run(tmp_path, job, monkeypatch)
    assert not isinstance(result, str), result
    assert (result.status, result.outcome, result.versions) == (
        "done",
        "bad",
        {"packaging": "22.0"},
    )
    assert result.headline.startswith("bad with packaging 22.0 (exit 1: ImportError:")
    assert "- environment: Python 3." in result.markdown
