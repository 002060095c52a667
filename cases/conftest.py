"""Shared machinery of the repro cases (runs inside a cell: torch and friends only).

Requirement markers turn into ``skipped: <reason>`` where unmet, never into a
pass or a failure:

    @pytest.mark.gpu                          a CUDA device
    @pytest.mark.requires("peft>=0.14")       installed versions
    @pytest.mark.unsloth                      an installed unsloth; a case that finds it
                                              cannot start here (no accelerator and no CPU
                                              backend) skips with unsloth's own words

The tiny models and synthetic data live in tiny.py (plain functions, also used by the
scripts/ that run in a fresh interpreter); the fixtures here build them once per
interpreter where building is not free (tokenizer files, saved checkpoints).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from recipes import OFFLINE, UNSLOTH_UNUSABLE, installed

os.environ.update(OFFLINE)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def unmet_requirement(spec: str) -> str | None:
    """Why ``spec`` (a PEP 508 requirement) is not met here, or None."""
    requirement = Requirement(spec)
    version = installed(requirement.name)
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
    if item.get_closest_marker("unsloth"):
        if installed("unsloth") is None:
            pytest.skip("needs unsloth; it is not installed")
        if "reason" in UNSLOTH_UNUSABLE:
            pytest.skip(UNSLOTH_UNUSABLE["reason"])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def whisper_processor(tmp_path_factory):
    """The real WhisperFeatureExtractor + a tiny byte-level WhisperTokenizer."""
    import tiny

    return tiny.whisper_processor(tmp_path_factory.mktemp("whisper-tokenizer"))


@pytest.fixture(scope="session")
def whisper_checkpoint(tmp_path_factory, whisper_processor) -> Path:
    """A tiny Whisper saved with save_pretrained, with the processor files a loader needs."""
    import tiny

    folder = tmp_path_factory.mktemp("tiny-whisper")
    tiny.save_whisper_checkpoint(folder, whisper_processor)
    return folder


@pytest.fixture(scope="session")
def llama_checkpoint(tmp_path_factory) -> Path:
    """A tiny Llama saved with save_pretrained, with a tokenizer AutoTokenizer can load."""
    import tiny

    folder = tmp_path_factory.mktemp("tiny-llama")
    tiny.save_llama_checkpoint(folder)
    return folder
