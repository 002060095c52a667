"""torch.compile together with gradient checkpointing.

Fine-tuning stacks compile parts of the model and checkpoint others: unsloth compiles
modules and runs its own reentrant checkpoint (seed 003, unsloth#3592); transformers
checkpoints layers that users then ``torch.compile``. The seed's error surfaced in AOT
autograd, the part of torch.compile that builds the backward:

    unsloth_zoo/gradient_checkpointing.py  backward -> torch.autograd.backward(...)
    torch/_functorch/_aot_autograd/runtime_wrappers.py  backward -> ctx.saved_tensors
    RuntimeError: Trying to backward through the graph a second time ...

i.e. a second backward through a *compiled* graph: the compiled region's saved tensors
belong to one autograd node (AOT autograd's CompiledFunction) and are freed by the first
backward that walks it, exactly like eager ones.

What a user expects, and what these cases assert:

- a compiled block inside a checkpointed training step trains, with the gradients plain
  eager autograd gives (reentrant and non-reentrant checkpoint around the compiled
  block; and checkpoint inside the compiled function, which torch.compile supports
  fully: https://github.com/pytorch/pytorch/issues/143176);
- a second backward through a compiled graph fails like an eager one, with the documented
  error, raised from AOT autograd's runtime wrapper as in the seed's traceback.

Upstream: https://github.com/pytorch/pytorch/issues/97436 (torch.compile not working with
gradient checkpointing, fixed), https://github.com/pytorch/pytorch/issues/121966
(compile + checkpoint failing in backward), https://github.com/pytorch/pytorch/issues/143176
(status of compiled autograd with checkpointing), https://github.com/pytorch/pytorch/issues/160773
(backend="eager" ignores checkpointing), https://github.com/unslothai/unsloth/issues/3592.

backend="aot_eager" runs dynamo and AOT autograd (the seed's path) and executes the
captured graphs eagerly: no C++ compiler, well under a second per compile once torch's
compile machinery is imported (its first import costs a few seconds, once per
interpreter). Inductor raises the second-backward error from the same AOT autograd
wrapper (checked by hand on torch 2.13.0) but compiles C++ on CPU, tens of seconds even
for this block, so it is left out.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from _torch_helpers import SECOND_BACKWARD, assert_close, frames, observe
from torch.utils.checkpoint import checkpoint

BACKEND = "aot_eager"
AOT_RUNTIME_WRAPPER = ("torch/_functorch/_aot_autograd/runtime_wrappers.py", "backward")
MICRO_STEPS = 3


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    """No compiled code or guard from another case leaks into this one."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _model():
    torch.manual_seed(0)
    embed = torch.nn.Linear(8, 16)
    block = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16))
    head = torch.nn.Linear(16, 1)
    batches = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(MICRO_STEPS)]
    return embed, block, head, batches


def _accumulated_grads(run_block) -> list[torch.Tensor]:
    """Gradient accumulation over MICRO_STEPS micro-batches, the block run by
    ``run_block(block, hidden)``; returns every parameter's gradient."""
    embed, block, head, batches = _model()
    for x, y in batches:
        out = head(run_block(block, embed(x)))
        loss = torch.nn.functional.mse_loss(out, y) / MICRO_STEPS
        assert torch.isfinite(loss)
        loss.backward()
    return [p.grad.clone() for m in (embed, block, head) for p in m.parameters()]


def _eager(block, hidden):
    return block(hidden)


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_compiled_block_inside_a_checkpointed_step_trains(use_reentrant):
    compiled = {}

    def checkpointed_compiled(block, hidden):
        fn = compiled.setdefault(id(block), torch.compile(block, backend=BACKEND))
        return checkpoint(fn, hidden, use_reentrant=use_reentrant)

    got = _accumulated_grads(checkpointed_compiled)
    want = _accumulated_grads(_eager)
    assert all(g.abs().sum() > 0 for g in got)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_close(g, w, f"parameter {index}")


def test_checkpoint_inside_a_compiled_function_trains():
    def checkpointed(block, hidden):
        return checkpoint(block, hidden, use_reentrant=False)

    compiled = torch.compile(checkpointed, backend=BACKEND)
    got = _accumulated_grads(compiled)
    want = _accumulated_grads(_eager)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_close(g, w, f"parameter {index}")


def test_second_backward_through_a_compiled_graph_raises_in_aot_autograd(record_property):
    embed, block, _, batches = _model()
    compiled = torch.compile(block, backend=BACKEND)
    x, _ = batches[0]
    # sum() saves nothing: the second backward meets the compiled region first.
    loss = compiled(embed(x)).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD) as caught:
        loss.backward()
    observe(record_property, caught.value)
    path = frames(caught.value)
    record_property("frames", " > ".join(f"{file}:{name}" for file, name in path[-4:]))
    assert AOT_RUNTIME_WRAPPER in path, "raised outside AOT autograd's backward wrapper"
