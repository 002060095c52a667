"""Measuring instruments shared by the torch-level cases (torch and the stdlib only).

- ``SavedTensors``: which tensors autograd still holds for a backward pass, counted
  through ``torch.autograd.graph.saved_tensors_hooks``.
- ``graph_nodes``: how many autograd nodes a value keeps alive.
- ``observe``: put what torch actually said into the case's result.
- ``frames``: the (file, function) frames an exception went through.
- ``assert_close``: tensors equal up to float32 rounding (``torch.testing.assert_close``
  costs seconds of imports on its first call; this costs nothing).
"""

from __future__ import annotations

import traceback
import weakref
from collections.abc import Callable

import torch

# The stable part of torch's message; the rest of it changes across versions.
SECOND_BACKWARD = "backward through the graph a second time"


class _Packed:
    """What autograd stores in place of a saved tensor while ``SavedTensors`` is active:
    it lives exactly as long as autograd keeps the saved value."""

    __slots__ = ("__weakref__", "tensor")

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


class SavedTensors:
    """Counts the tensors saved for backward inside ``with tracker.track():`` that
    autograd still holds.

    The pack hook stores a *detached* alias: holding the tensor itself would let a saved
    output keep its own grad_fn alive (a reference cycle through C++ that the garbage
    collector cannot see), so the instrument would leak what it measures.
    """

    def __init__(self) -> None:
        self._refs: list[weakref.ref[_Packed]] = []

    def _pack(self, tensor: torch.Tensor) -> _Packed:
        packed = _Packed(tensor.detach())
        self._refs.append(weakref.ref(packed))
        return packed

    @staticmethod
    def _unpack(packed: _Packed) -> torch.Tensor:
        return packed.tensor

    def track(self) -> torch.autograd.graph.saved_tensors_hooks:
        return torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def _alive(self) -> list[_Packed]:
        return [packed for ref in self._refs if (packed := ref()) is not None]

    @property
    def count(self) -> int:
        return len(self._alive())

    @property
    def bytes(self) -> int:
        return sum(p.tensor.numel() * p.tensor.element_size() for p in self._alive())


def graph_nodes(value: object) -> int:
    """The number of autograd nodes reachable from ``value`` (0 for a number or a
    tensor without history): what keeping ``value`` keeps alive."""
    root = getattr(value, "grad_fn", None)
    seen: set[object] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return len(seen)


def observe(record_property: Callable[[str, object], None], error: BaseException) -> None:
    """Keep torch's own words in the result: the harness reports a passing case's
    recorded properties as its message (texts change across torch versions)."""
    record_property("torch_error", f"{type(error).__name__}: {error}")


def frames(error: BaseException) -> list[tuple[str, str]]:
    """(path, function) of each frame the exception went through, innermost last;
    paths from site-packages on, so they compare across machines."""
    return [
        (frame.filename.replace("\\", "/").split("site-packages/")[-1], frame.name)
        for frame in traceback.extract_tb(error.__traceback__)
    ]


def assert_close(got: torch.Tensor, want: torch.Tensor, what: str = "tensor") -> None:
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-6), (
        f"{what}: differs by up to {(got - want).abs().max().item():.3g}"
    )
