"""The environment builder: identity, reuse, install errors, 'system' pins.

These build real (small) environments with uv from PyPI: a cell with only
`iniconfig` still gets pytest, and builds in about a second with a warm cache.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repromatrix.environment.request import EnvRequest
from repromatrix.environment.store import EnvStore
from repromatrix.environment.uv import InstallError, uv_binary
from repromatrix.matrix.pins import parse_pin

pytestmark = pytest.mark.e2e


def request(env=(), **pins: object) -> EnvRequest:
    return EnvRequest(pins=tuple(parse_pin(k, v) for k, v in pins.items()), env=env)


def test_same_request_is_reused_and_a_changed_pin_is_rebuilt(tmp_path):
    store = EnvStore(tmp_path)
    first = store.build(request(iniconfig="2.0.0"))
    again = store.build(request(iniconfig="2.0.0"))
    other = store.build(request(iniconfig="2.1.0"))

    assert not first.reused and again.reused
    assert again.identity == first.identity and again.python == first.python
    assert other.identity != first.identity and not other.reused
    assert first.resolved["iniconfig"] == "2.0.0" and other.resolved["iniconfig"] == "2.1.0"
    assert "pytest" in first.resolved  # the runner's tooling comes with every cell
    # The other environment is untouched by the rebuild.
    assert store.build(request(iniconfig="2.0.0")).reused
    # The lock is read from the venv (no `uv pip freeze`): it says what freeze says.
    home = tmp_path / first.identity[:16]
    frozen = subprocess.run(
        [uv_binary(), "pip", "freeze", "--python", str(home / "venv" / "bin" / "python")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (home / "lock.txt").read_text() == "".join(f"{x}\n" for x in sorted(frozen.split()))
    assert "pytest-xdist==" in frozen  # a name whose folder spells it pytest_xdist


def test_cell_variables_are_part_of_the_identity(tmp_path):
    store = EnvStore(tmp_path)
    plain = store.build(request(iniconfig="2.0.0"))
    with_env = store.build(request(env=(("HF_HUB_OFFLINE", "1"),), iniconfig="2.0.0"))
    assert with_env.identity != plain.identity


def test_null_pin_keeps_a_dependency_out(tmp_path):
    env = EnvStore(tmp_path).build(request(iniconfig=None, pluggy="latest"))
    assert "pluggy" in env.resolved
    assert "iniconfig" not in env.resolved  # pytest depends on it, null wins


def test_unresolvable_pin_is_an_install_error_with_the_resolvers_words(tmp_path):
    with pytest.raises(InstallError) as err:
        EnvStore(tmp_path).build(request(iniconfig="99.0.0"))
    assert err.value.stage == "resolve"
    assert "iniconfig==99.0.0" in err.value.message
    assert "\n" not in err.value.message


def test_an_interrupted_build_is_started_over(tmp_path):
    store = EnvStore(tmp_path)
    env = store.build(request(iniconfig="2.0.0"))
    (env.root / "complete").unlink()  # as if killed before the end
    again = store.build(request(iniconfig="2.0.0"))
    assert not again.reused and (again.root / "complete").exists()


def _base_interpreter(folder: Path, *packages: str) -> Path:
    """A stand-in for a GPU image's interpreter: a venv with some packages."""
    uv = uv_binary()
    subprocess.run([uv, "venv", "-q", str(folder)], check=True)
    python = folder / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), *packages], check=True)
    return python


def test_system_pin_shows_that_package_and_nothing_else_of_the_base(tmp_path):
    base = _base_interpreter(tmp_path / "base", "six==1.16.0", "idna==3.10")
    env = EnvStore(tmp_path / "store").build(
        EnvRequest(pins=(parse_pin("six", "system"),), python=str(base))
    )
    assert env.resolved["six"] == "1.16.0"
    assert env.system == {"six": "1.16.0"}
    assert "idna" not in env.resolved

    def imports(module: str) -> bool:
        done = subprocess.run([str(env.python), "-c", f"import {module}"], capture_output=True)
        return done.returncode == 0

    assert imports("six")
    assert not imports("idna")  # installed in the base, not asked for: invisible


def test_system_pin_missing_from_the_base_is_an_install_error(tmp_path):
    base = _base_interpreter(tmp_path / "base", "idna==3.10")
    with pytest.raises(InstallError, match="'system' pin: six is not installed"):
        EnvStore(tmp_path / "store").build(
            EnvRequest(pins=(parse_pin("six", "system"),), python=str(base))
        )


def test_system_torch_with_a_local_version_satisfies_peft(tmp_path, shared_env_store):
    """The GPU-tier shape: torch from the image (2.13.0+cpu here, 2.x+cu12x there),
    peft resolved and installed against it."""
    base = _base_interpreter(tmp_path / "base", "torch==2.13.0")
    env = EnvStore(shared_env_store).build(
        EnvRequest(
            pins=(
                parse_pin("torch", "system"),
                parse_pin("transformers", "4.56.2"),
                parse_pin("peft", "0.17.1"),
            ),
            python=str(base),
        )
    )
    assert env.system["torch"].startswith("2.13.0")
    assert env.resolved["peft"] == "0.17.1"
    done = subprocess.run(
        [str(env.python), "-c", "import torch, peft; print(torch.__file__)"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "system-site" in done.stdout
