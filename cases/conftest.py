"""Shared machinery of the repro cases (runs inside a cell: torch and friends only).

The requirement markers (gpu, requires("..."), unsloth) come with repromatrix: the
cell plugin loads them in every cell (execution/_cell/repromatrix_markers.py). What
stays here is this folder's own: an unsloth that a case found unable to start skips
the other unsloth cases with the same reason.

The tiny models and synthetic data live in tiny.py (plain functions, also used by the
scripts/ that run in a fresh interpreter); the fixtures here build them once per
interpreter where building is not free (tokenizer files, saved checkpoints).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from recipes import OFFLINE, UNSLOTH_UNUSABLE

os.environ.update(OFFLINE)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("unsloth") and "reason" in UNSLOTH_UNUSABLE:
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
