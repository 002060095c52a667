"""Fixtures of the workflow tests: the real workflows, run under act (tests/support/act.py).

Where act, node or the actions folder is missing they skip with one line naming what;
with CI set they fail with that line instead: CI must run them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import act
from support.issue_act import make_wheelhouse
from support.nights import Scenario


@pytest.fixture(scope="session")
def act_ready() -> None:
    lacking = act.missing()
    if lacking is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{lacking}; CI must run the act workflow tests")
    pytest.skip(lacking)


@pytest.fixture
def scenario(act_ready: None, tmp_path: Path, shared_env_store: Path) -> Scenario:
    """A throw-away repository with the real workflows (support/nights.py); its cells
    go to the session's environment store, as a runner keeps its own between nights."""
    return Scenario(tmp_path, env={"REPROMATRIX_ENV_DIR": str(shared_env_store)})


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The issue bot's runner's only package index, made once a session
    (support/issue_act.py)."""
    return make_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))
