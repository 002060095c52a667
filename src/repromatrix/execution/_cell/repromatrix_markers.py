"""The requirement markers every cell knows, wherever its cases come from.

Loaded with the cell plugin (its ``pytest_plugins``), so a project's own cases/ need
no conftest.py and no pytest.ini for them. An unmet requirement is a *skip* with the
reason, never a pass or a failure:

    @pytest.mark.gpu                          a CUDA device (torch.cuda.is_available())
    @pytest.mark.requires("peft>=0.14")       installed versions (PEP 508 requirements)
    @pytest.mark.unsloth                      an installed unsloth
    @pytest.mark.distributed                  starts several processes (a label only)

Inside a cell only the standard library and pytest are certain; packaging comes with
pytest (a dependency of it), and torch is imported only for a case marked gpu.
"""

from __future__ import annotations

import importlib.metadata

import pytest

MARKERS = (
    "gpu: needs a CUDA device; skipped (with the reason) on a host without one",
    "requires(*specs): needs installed packages matching PEP 508 specs, "
    'e.g. requires("transformers>=4.50"); skipped otherwise',
    "unsloth: needs an installed unsloth; skipped otherwise",
    "distributed: starts several processes (torch.distributed, gloo)",
)


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def unmet_requirement(spec: str) -> str | None:
    """Why ``spec`` (a PEP 508 requirement) is not met here, or None."""
    from packaging.requirements import Requirement

    requirement = Requirement(spec)
    version = installed(requirement.name)
    if version is None:
        return f"needs {spec}; {requirement.name} is not installed"
    if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
        return f"needs {spec}; {requirement.name} {version} is installed"
    return None


def no_gpu() -> str | None:
    """Why a case marked gpu cannot run here, or None."""
    try:
        import torch
    except ImportError:
        return "requires a CUDA GPU; torch is not installed"
    if not torch.cuda.is_available():
        return "requires a CUDA GPU; this host has none"
    return None


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("requires"):
        for spec in marker.args:
            reason = unmet_requirement(spec)
            if reason:
                pytest.skip(reason)
    if item.get_closest_marker("gpu") and (reason := no_gpu()):
        pytest.skip(reason)
    if item.get_closest_marker("unsloth") and installed("unsloth") is None:
        pytest.skip("needs unsloth; it is not installed")
