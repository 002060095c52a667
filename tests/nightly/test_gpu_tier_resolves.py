"""The GPU tier, ready on a CPU host.

1. Every combination of matrix.yaml's `nightly` tier resolves for Linux x86_64 with
   PyPI's CUDA torch wheels: `uv pip compile --python-platform x86_64-manylinux_2_28`
   against PyPI, metadata only (nothing downloaded), the combination's requirements as
   the harness hands them to the resolver (its pins, overrides and the cells' tooling),
   `torch: system` standing for the image's CUDA torch. A GPU pin that no CUDA machine
   could install fails here, on a CPU host, not at 2 a.m. on the runner.
2. `torch: system` on a `cuda` device, the nightly tier's shape, through `repromatrix
   run`: a stand-in base interpreter whose torch is a small package calling itself
   2.9.1+cu128 with a CUDA device, and an `nvidia-smi` that lists one GPU. The cell
   links that torch (and nothing else of the base interpreter) and its cases see it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pytest
from support.wheels import pure_wheel

from repromatrix.environment.request import EnvRequest
from repromatrix.environment.uv import uv_binary
from repromatrix.matrix import load_matrix
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import PinKind, parse_pin

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PYPI = "https://pypi.org/simple"
# The GPU runners' platform: glibc 2.28+ x86_64, PyPI's CUDA torch wheels.
PLATFORM = "x86_64-manylinux_2_28"
PYTHON = "3.11"
NIGHTLY = load_matrix(REPO / "matrix.yaml").tier("nightly")


def _reachable(url: str) -> bool:
    host = urlparse(url.split("+", 1)[-1]).hostname or ""
    try:
        with socket.create_connection((host, 443), timeout=5):
            return True
    except OSError:
        return False


def _offline_of_pip() -> dict[str, str]:
    """This process's environment without the machine's own index settings (a CPU
    torch in a find-links folder would answer for PyPI's CUDA one)."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_INDEX", "UV_EXTRA_INDEX", "UV_FIND_LINKS"))
        and k not in ("UV_DEFAULT_INDEX", "UV_NO_INDEX", "UV_OFFLINE")
    }


def _compile(combo, folder: Path) -> subprocess.CompletedProcess:
    """The combination's requirements, as the harness hands them to the resolver,
    resolved for the GPU runners' platform against PyPI (metadata only)."""
    cell = CellSpec.of(combo)
    request = EnvRequest.for_cell(cell, _no_user_index().for_cell(cell))
    requirements = [r for p in request.pins if (r := p.requirement())]
    # The image's CUDA torch: any release PyPI has for the platform (the resolver picks
    # one that the other pins accept).
    requirements += ["torch", *request.tooling]
    command = [
        uv_binary(), "pip", "compile", "-", "--no-header", "--no-annotate", "--quiet",
        "--python-version", PYTHON, "--python-platform", PLATFORM, "--index-url", PYPI,
    ]  # fmt: skip
    if request.exclude_newer:
        command += ["--exclude-newer", request.exclude_newer]
    if request.overrides:
        overrides = folder / "overrides.txt"
        overrides.write_text("\n".join(request.overrides) + "\n")
        command += ["--override", str(overrides)]
    return subprocess.run(
        command,
        input="\n".join(requirements) + "\n",
        capture_output=True,
        text=True,
        env=_offline_of_pip(),
        timeout=600,
    )


@pytest.mark.parametrize("combo", NIGHTLY, ids=[c.id for c in NIGHTLY])
def test_every_nightly_combination_resolves_for_linux_with_cuda_wheels(combo, tmp_path) -> None:
    assert combo.device == "cuda" and combo.pin("torch").kind is PinKind.SYSTEM
    direct = [p for p in combo.pins if p.kind is PinKind.DIRECT]
    if direct and not all(_reachable(p.spec) for p in direct):
        pytest.skip(f"{combo.id}: {direct[0].spec} is not reachable from here (no GitHub)")
    done = _compile(combo, tmp_path)
    assert done.returncode == 0, f"{combo.id}: {done.stderr[-3000:]}"
    lock = dict(
        line.split("==", 1)
        for line in done.stdout.splitlines()
        if "==" in line and " @ " not in line
    )
    assert "torch" in lock
    # PyPI's Linux x86_64 torch is the CUDA build: its CUDA runtime comes with it.
    assert any(name.startswith("nvidia-") for name in lock), sorted(lock)
    for pin in combo.pins:
        if pin.kind is PinKind.EXACT:
            assert lock.get(pin.package) == pin.spec, (pin.package, lock.get(pin.package))
        if pin.kind is PinKind.LATEST:
            assert pin.package in lock


def test_a_gpu_pin_no_cuda_machine_could_install_fails_here(tmp_path) -> None:
    # The seed combination with a trl its unsloth refuses (it needs trl 0.18.2 .. 0.23.0).
    seed = next(c for c in NIGHTLY if c.id.startswith("gpu-seed"))
    broken = replace(
        seed, pins=(*(p for p in seed.pins if p.package != "trl"), parse_pin("trl", "0.7.0")),
        overrides=(), tags=(),
    )  # fmt: skip
    done = _compile(broken, tmp_path)
    assert done.returncode != 0
    assert "trl==0.7.0" in done.stderr


def _no_user_index():
    from repromatrix.environment.indexes import IndexSettings

    return IndexSettings()


# --------------------------------------------------------------------------- system torch

STAND_IN_VERSION = "2.9.1+cu128"
STAND_IN = f'''\
"""A stand-in for a GPU image's CUDA torch: its version and a CUDA device, no more."""

__version__ = "{STAND_IN_VERSION}"


class cuda:  # noqa: N801 (torch's own name)
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1
'''


def _stand_in_wheel(folder: Path) -> Path:
    return pure_wheel(folder, "torch", STAND_IN_VERSION, {"torch/__init__.py": STAND_IN})


def test_torch_system_on_a_cuda_device_runs_with_a_stand_in_image(tmp_path) -> None:
    uv = uv_binary()
    base = tmp_path / "image"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(base)], check=True)
    python = base / "bin" / "python"
    wheel = _stand_in_wheel(tmp_path)
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), str(wheel)], check=True)
    subprocess.run(  # in the image, not asked for by the cell: must stay invisible
        [uv, "pip", "install", "-q", "--python", str(python), "six==1.16.0"], check=True
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA Stand-in (UUID: GPU-00000000)'\n")
    smi.chmod(0o755)

    project = tmp_path / "project"
    (project / "cases").mkdir(parents=True)
    (project / "cases" / "test_image_torch.py").write_text(
        textwrap.dedent(
            f"""
            from importlib import metadata

            import pytest


            @pytest.mark.gpu
            def test_the_images_torch_is_the_one_the_cell_sees():
                import torch

                assert torch.__version__ == "{STAND_IN_VERSION}"
                assert torch.cuda.is_available()
                assert metadata.version("torch") == "{STAND_IN_VERSION}"


            def test_the_rest_of_the_image_is_invisible():
                with pytest.raises(ImportError):
                    import six  # noqa: F401
            """
        )
    )
    # The nightly tier's shape, as matrix.yaml's tier_defaults give it.
    nightly = NIGHTLY[0]
    assert (nightly.device, nightly.pin("torch").kind) == ("cuda", PinKind.SYSTEM)
    (project / "matrix.yaml").write_text(
        textwrap.dedent(
            f"""
            schema: 1
            packages: [torch, packaging]
            defaults: {{python: "{python}"}}
            tier_defaults:
              nightly: {{device: cuda, torch: system}}
            tiers:
              nightly:
                - {{id: gpu-packaging, packaging: "24.1"}}
            """
        )
    )
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO / "src"),
        "REPROMATRIX_ENV_DIR": str(tmp_path / "envs"),
    }
    env.pop("REPROMATRIX_DEVICE", None)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    done = subprocess.run(
        [sys.executable, "-m", "repromatrix", "run", "--tier", "nightly", "--results", "out"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((project / "out" / "results.json").read_text())
    [combination] = results["combinations"]
    assert combination["verdict"] == "PASS", combination
    assert {c["id"].split("::")[1]: c["status"] for c in combination["cases"]} == {
        "test_the_images_torch_is_the_one_the_cell_sees": "passed",  # not skipped: a GPU
        "test_the_rest_of_the_image_is_invisible": "passed",
    }
    assert combination["environment"]["system"] == {"torch": STAND_IN_VERSION}
    assert combination["resolved"]["torch"] == STAND_IN_VERSION
    assert combination["resolved"]["packaging"] == "24.1"
    assert results["run"]["host"]["gpus"] == ["GPU 0: NVIDIA Stand-in (UUID: GPU-00000000)"]
