"""execution/cell.py's run_in_cell: the one place a cell is built and an install error
is handled (the matrix run's and every probe's): the install log written either way,
the work run only in a built cell."""

from __future__ import annotations

import sys
from pathlib import Path

from repromatrix.environment import EnvRequest, InstallError
from repromatrix.environment.gc import in_use
from repromatrix.environment.request import Environment
from repromatrix.environment.store import EnvStore
from repromatrix.environment.uv import Interpreter
from repromatrix.execution.cell import run_in_cell


class Store:
    def __init__(self, env: Environment | None = None) -> None:
        self.env = env

    def build(self, request, *, timeout, log=None):
        log("resolving with token=hf_CellCanary0123456789abcdef")
        if self.env is None:
            raise InstallError("resolve", "No solution found", "uv says why")
        return self.env


def test_a_cell_that_cannot_be_built_is_the_error_with_its_log(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_CellCanary0123456789abcdef")
    ran: list = []
    log = tmp_path / "logs" / "install.log"
    got = run_in_cell(Store(), EnvRequest(pins=()), ran.append, timeout=1, install_log=log)
    assert isinstance(got, InstallError) and got.stage == "resolve"
    assert ran == [], "no work without a cell"
    text = log.read_text()
    assert "uv says why" in text and "resolving with" in text
    assert "hf_CellCanary" not in text


def test_a_built_cell_runs_the_work(tmp_path: Path) -> None:
    env = Environment(
        root=tmp_path,
        identity="ab" * 32,
        python=Path(sys.executable),
        resolved={},
        system={},
        reused=True,
        seconds=0.0,
        interpreter=Interpreter(sys.executable, "3.11.0", "CPython"),
    )
    (tmp_path / "complete").write_text("x")
    log = tmp_path / "install.log"

    def work(cell: Environment) -> str:
        with in_use(tmp_path / "store", cell.identity, wait=False) as free:
            assert not free, "the cell is held in use while its work runs: gc leaves it"
        return cell.identity

    class Stored(EnvStore):  # the real store's use, its build stood in
        def build(self, request, *, timeout, log=None):
            return Store(env).build(request, timeout=timeout, log=log)

    got = run_in_cell(
        Stored(tmp_path / "store"), EnvRequest(pins=()), work, timeout=1, install_log=log
    )
    assert got == "ab" * 32
    assert "resolving with" in log.read_text()
    assert (tmp_path / "used").exists()  # its last use, for gc's order
    with in_use(tmp_path / "store", env.identity, wait=False) as free:
        assert free
