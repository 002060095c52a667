"""Fixtures shared by the harness's own tests.

Tests marked ``e2e`` build real cell environments with uv (torch 2.13.0 CPU through
the user's PIP_FIND_LINKS, everything else from PyPI); they share one environment
store per test session so that a cell is built once.
"""

from __future__ import annotations

import os
import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def confinable() -> None:
    """The repro's sandbox can be made here (bubblewrap, root); else skip with the
    reason, or with CI set fail: CI must prove each property (.ci/run installs it)."""
    from repromatrix.issue.confine import unavailable

    why = unavailable()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{why}; CI must run the confinement tests (.ci/run installs bubblewrap)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def shared_env_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment store for every e2e test of this session (or the user's
    REPROMATRIX_TEST_ENV_DIR, to keep built cells between sessions)."""
    keep = os.environ.get("REPROMATRIX_TEST_ENV_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        return Path(keep)
    return tmp_path_factory.getbasetemp().parent / "repromatrix-envs"


@pytest.fixture
def write_matrix(tmp_path: Path):
    """write_matrix(yaml_text) -> path of a matrix.yaml in a fresh folder."""

    def write(text: str, name: str = "matrix.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def sighup_as_in_a_terminal() -> Iterator[None]:
    """SIGHUP at its default, as a terminal leaves it: a suite run under nohup has it
    ignored, and stop_signals keeps an ignored signal ignored (by design, tested apart),
    so a test of what SIGHUP does would read nohup's choice as a failure."""
    saved = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, saved)
