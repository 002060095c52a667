"""A lock that names a release uv's cached index page does not list yet: the resolve
(`uv pip compile`) read a fresh page with packaging 26.4, `uv pip sync` a cached one
without it. Seen in CI on 2026-11-25, two days after packaging 26.4 was published; the
combination came out INSTALL-ERROR, which a nightly would call new."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix.environment import store
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.store import EnvStore
from repromatrix.environment.uv import InstallError
from repromatrix.matrix.pins import parse_pin

REFUSED = (
    "  × No solution found when resolving dependencies:\n"
    "  ╰─▶ Because there is no version of packaging==26.4 and you require\n"
    "      packaging==26.4, we can conclude that your requirements are unsatisfiable.\n"
)


class Done:
    def __init__(self, returncode: int = 0, stdout: str = "", stderr: str = "") -> None:
        self.returncode, self.stdout, self.stderr, self.timed_out = (
            returncode,
            stdout,
            stderr,
            False,
        )


def _fake_uv(stale_syncs: int, calls: list[list[str]]):
    def run(args, **kwargs):
        args = [str(a) for a in args]
        calls.append(args)
        if args[1:3] == ["pip", "compile"]:
            return Done(stdout="iniconfig==2.3.0\npackaging==26.4\n")
        if args[1:2] == ["venv"]:
            Path(args[-1], "bin").mkdir(parents=True)
        if args[1:3] == ["pip", "sync"]:
            refused = sum(c[1:3] == ["pip", "sync"] for c in calls) <= stale_syncs
            return Done(1, stderr=REFUSED) if refused else Done()
        return Done()

    return run


def _fake_uv_calls(monkeypatch: pytest.MonkeyPatch, stale_syncs: int) -> list[list[str]]:
    """uv played by _fake_uv from here on; the list it records its calls in."""
    calls: list[list[str]] = []
    monkeypatch.setattr(store.procs, "run", _fake_uv(stale_syncs, calls))
    return calls


LATEST_INICONFIG = EnvRequest(pins=(parse_pin("iniconfig", "latest"),), tooling=())


def test_a_release_newer_than_the_cached_page_is_synced_with_the_pages_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_uv_calls(monkeypatch, stale_syncs=1)
    env = EnvStore(tmp_path).build(LATEST_INICONFIG)
    syncs = [c for c in calls if c[1:3] == ["pip", "sync"]]
    assert len(syncs) == 2 and "--refresh" not in syncs[0] and syncs[1][-1] == "--refresh"
    assert env.resolved == {"iniconfig": "2.3.0", "packaging": "26.4"}
    assert "there is no version of packaging==26.4" in (env.root / "install.log").read_text()


def test_a_release_the_index_really_lacks_is_still_an_install_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_uv_calls(monkeypatch, stale_syncs=2)
    with pytest.raises(InstallError) as err:
        EnvStore(tmp_path).build(LATEST_INICONFIG)
    assert err.value.stage == "install" and "packaging==26.4" in err.value.message
    assert sum(c[1:3] == ["pip", "sync"] for c in calls) == 2, "one retry, not more"
