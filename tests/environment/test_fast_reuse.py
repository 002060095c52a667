"""Fast reuse: an all-exact request finds its environment before resolving; a
floating one (latest, a range, a branch) is always resolved again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repromatrix.environment import store
from repromatrix.environment.identity import is_exact
from repromatrix.environment.lock import lock_of_venv, lock_versions
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.store import EnvStore
from repromatrix.matrix.pins import parse_pin

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("specs", "exact"),
    [
        ({"torch": "2.13.0", "peft": "0.13.2"}, True),
        ({"torch": "system", "unsloth": None}, True),
        ({"tinylib": f"git+file:///r@{SHA}"}, True),
        ({"tinylib": "git+file:///r@main"}, False),
        ({"peft": "latest"}, False),
        ({"peft": ">=0.13"}, False),
    ],
)
def test_which_requests_are_exact(specs, exact) -> None:
    pins = tuple(parse_pin(k, v) for k, v in specs.items())
    assert is_exact(EnvRequest(pins=pins)) is exact


def testlock_versions() -> None:
    lock = "--find-links /w\ntorch==2.13.0+cpu\nTyping_Extensions==4.12.2\n"
    assert lock_versions(lock) == {"torch": "2.13.0+cpu", "typing-extensions": "4.12.2"}
    assert lock_versions("tinylib @ git+file:///r@abc\n") is None


def test_exact_requests_reuse_without_resolving_floating_ones_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    class Done:
        def __init__(self, stdout: str = "") -> None:
            self.returncode, self.stdout, self.stderr, self.timed_out = 0, stdout, "", False

    def fake_run(args, **kwargs):
        calls.append(" ".join(str(a) for a in args[1:3]))
        if args[1:3] == ["pip", "compile"]:
            return Done("pytest==8.3.0\npeft==0.13.2\n")
        if args[1:2] == ["venv"]:
            Path(args[-1], "bin").mkdir(parents=True)
        if args[1:3] == ["pip", "install"]:  # what it installs: read back from the venv
            site = Path(args[args.index("--python") + 1]).parent.parent / "lib/python3.11"
            for folder in ("peft-0.13.2.dist-info", "pytest-8.3.0.dist-info"):
                (site / "site-packages" / folder).mkdir(parents=True)
        return Done()

    monkeypatch.setattr(store.procs, "run", fake_run)
    env_store = EnvStore(tmp_path)
    exact = EnvRequest(pins=(parse_pin("peft", "0.13.2"),))
    first = env_store.build(exact)
    assert not first.reused and first.resolved == {"peft": "0.13.2", "pytest": "8.3.0"}
    # New and exact: built as raw uv builds it (one resolve, inside `uv pip install`).
    assert calls == ["venv --quiet", "pip install"], "its lock is read, not asked of uv"
    left = [p.name for p in (tmp_path / "_staging").iterdir() if p.suffix != ".lock"]
    assert left == [], "the staging slot was moved and emptied"
    calls.clear()
    again = env_store.build(exact)
    assert again.reused and again.identity == first.identity
    assert calls == [], "no resolve, no child process at all"

    floating = EnvRequest(pins=(parse_pin("peft", "latest"),))
    env_store.build(floating)
    calls.clear()
    moved = env_store.build(floating)
    assert moved.reused and calls == ["pip compile"], "a floating pin is resolved again"
    saved = list((tmp_path / "_requests").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["identity"] == first.identity


def test_a_distribution_from_a_url_leaves_the_lock_to_uv(tmp_path: Path) -> None:
    # Read from the venv, a git install would be `name==version`: two commits of one
    # version would share a cell. Its PEP 610 record sends the lock to `uv pip freeze`.
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "Typing_Extensions-4.12.2.dist-info").mkdir(parents=True)
    (site / "six-1.16.0.dist-info").mkdir()
    assert lock_of_venv(tmp_path) == "six==1.16.0\ntyping-extensions==4.12.2\n"
    (site / "tinylib-0.1.0.dist-info").mkdir()
    (site / "tinylib-0.1.0.dist-info" / "direct_url.json").write_text("{}")
    assert lock_of_venv(tmp_path) is None
