"""Importing unsloth_zoo 2025.11.x on a CPU-only host, with as little pretence as possible.

Plain functions, for scripts/unsloth_zoo_whisper_lora.py (a fresh interpreter: unsloth_zoo
patches torch and transformers globally). What unsloth_zoo 2025.11.x needs at import time,
and what is done about it here:

- the ``unsloth`` package installed (unsloth_zoo only looks it up with find_spec; it is
  never imported here) and ``UNSLOTH_IS_PRESENT=1`` (unsloth sets it before importing zoo);
- an accelerator: device_type.get_device_type() raises "Unsloth cannot find any torch
  accelerator? You need a GPU." without one, and temporary_patches, loss_utils and
  compiler ask torch.cuda for the device capability and free memory at import. While
  those modules import (and only then), torch.cuda answers as a 15 GiB compute-capability
  7.5 device - the seed's Colab T4 - and is restored right after;
- pinned host memory: initialize_unsloth_gradient_checkpointing allocates its offload
  buffers with pin_memory=True, which needs the CUDA allocator. Inside
  patch_unsloth_smart_gradient_checkpointing, and nowhere else, torch.empty drops
  pin_memory; the buffers are only ever used for checkpoint inputs above MINIMUM_SIZE
  (2 MiB), which a tiny model never has;
- torch.compile: TORCHDYNAMO_DISABLE=1 (set by the script before torch is imported) makes
  the compiled cache's torch.compile calls run eagerly.

Nothing on the autograd path is stubbed: UnslothCheckpointFunction's forward and backward,
the rewritten WhisperDecoder, peft's LoRA layers and transformers' GradientCheckpointingLayer
run as released.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
from collections.abc import Iterator
from types import ModuleType

import torch

# What unsloth sets before it imports unsloth_zoo; and never the network.
ENVIRONMENT = {
    "UNSLOTH_IS_PRESENT": "1",
    "TORCHDYNAMO_DISABLE": "1",
    "UNSLOTH_DISABLE_STATISTICS": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}

# The seed's GPU (Colab T4): compute capability 7.5, 15 GiB.
CAPABILITY = (7, 5)
MEMORY = 15 * 1024**3

# The modules the chain uses, imported (with everything they import) under the shim.
MODULES = (
    "unsloth_zoo",
    "unsloth_zoo.gradient_checkpointing",
    "unsloth_zoo.compiler",
    "unsloth_zoo.loss_utils",  # imported by the compiled cache module
    "unsloth_zoo.training_utils",
    "unsloth_zoo.peft_utils",
)


@contextlib.contextmanager
def accelerator_presence() -> Iterator[None]:
    """torch.cuda reports a device (is_available, capability, free memory) inside the
    block; the original functions are back afterwards."""
    fakes = {
        (torch.cuda, "is_available"): lambda: True,
        (torch.cuda, "get_device_capability"): lambda *a, **k: CAPABILITY,
        (torch.cuda, "mem_get_info"): lambda *a, **k: (MEMORY, MEMORY),
        (torch.cuda.memory, "mem_get_info"): lambda *a, **k: (MEMORY, MEMORY),
    }
    saved = {key: getattr(*key) for key in fakes}
    try:
        for (owner, name), fake in fakes.items():
            setattr(owner, name, fake)
        yield
    finally:
        for (owner, name), original in saved.items():
            setattr(owner, name, original)


def import_unsloth_zoo() -> dict[str, ModuleType]:
    """Import the modules of MODULES under accelerator_presence; returns them by name."""
    os.environ.update(ENVIRONMENT)
    real = torch.cuda.is_available()
    with accelerator_presence():
        modules = {name: importlib.import_module(name) for name in MODULES}
    assert torch.cuda.is_available() == real, "torch.cuda was not restored"
    return modules


@contextlib.contextmanager
def _unpinned_empty() -> Iterator[None]:
    original = torch.empty

    @functools.wraps(original)
    def empty(*args, **kwargs):
        kwargs.pop("pin_memory", None)
        return original(*args, **kwargs)

    torch.empty = empty
    try:
        yield
    finally:
        torch.empty = original


def patch_smart_gradient_checkpointing(gradient_checkpointing: ModuleType, dtype) -> None:
    """unsloth_zoo's patch_unsloth_smart_gradient_checkpointing(dtype), as the loader calls
    it; on a CPU-only host its offload buffers are allocated unpinned."""
    patch = gradient_checkpointing.patch_unsloth_smart_gradient_checkpointing
    if torch.cuda.is_available():
        patch(dtype=dtype)
        return
    with _unpinned_empty():
        patch(dtype=dtype)
