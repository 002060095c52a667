"""Shared machinery of the repro cases (runs inside a cell: torch and friends only).

Requirement markers turn into ``skipped: <reason>`` where unmet, never into a
pass or a failure:

    @pytest.mark.gpu                          a CUDA device
    @pytest.mark.requires("peft>=0.14")       installed versions
"""

from __future__ import annotations

import importlib.metadata

import pytest
from packaging.requirements import Requirement


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def unmet_requirement(spec: str) -> str | None:
    """Why ``spec`` (a PEP 508 requirement) is not met here, or None."""
    requirement = Requirement(spec)
    version = _installed(requirement.name)
    if version is None:
        return f"needs {spec}; {requirement.name} is not installed"
    if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
        return f"needs {spec}; {requirement.name} {version} is installed"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("requires"):
        for spec in marker.args:
            reason = unmet_requirement(spec)
            if reason:
                pytest.skip(reason)
    if item.get_closest_marker("gpu"):
        import torch

        if not torch.cuda.is_available():
            pytest.skip("requires a CUDA GPU; this host has none")
