"""A tensor with history reaching reentrant checkpoints through keywords or closures.

A torch-level mechanism that reproduces "backward through the graph a second time" in
encoder-decoder fine-tuning with reentrant gradient checkpointing, with the traceback
shape of seed 003 (https://github.com/unslothai/unsloth/issues/3592: Whisper + LoRA,
unsloth's reentrant checkpoint, transformers 4.56.2, failing on the first step). Whether
it is *the* cause of that report is for the Whisper cases to show across transformers
versions; the mechanism itself is pinned here.

The reentrant checkpoint (``use_reentrant=True``, and unsloth's
``UnslothCheckpointFunction``, which follows it) recomputes the segment in backward and
runs a nested ``torch.autograd.backward`` over the recomputed graph. It detaches the
*positional* tensor inputs first, so the nested backward stops at the segment's
boundary. A tensor that reaches the segment any other way - a keyword bound with
``functools.partial``, a closure - is not detached: the nested backward runs on into the
graph that produced it and frees it. When several checkpointed layers share that tensor
(every decoder layer's cross-attention reads the encoder output), the second layer's
nested backward walks the already-freed producer graph: RuntimeError. If the producer is
compiled, the error comes from AOT autograd's backward wrapper, with the seed's frames:

    (reentrant checkpoint) backward -> torch.autograd.backward
    torch/_functorch/_aot_autograd/runtime_wrappers.py backward -> saved tensors

transformers' ``GradientCheckpointingLayer`` calls
``checkpoint(partial(layer.__call__, **kwargs), *args)``. In transformers 4.52.4 Whisper's
decoder still called the checkpoint function itself with ``encoder_hidden_states``
positional; in 4.56.2 (the seed's version) its layers are GradientCheckpointingLayers and
``encoder_hidden_states=`` is a keyword, so the shared tensor reaches every checkpointed
decoder layer through the partial (the same error with transformers 4.53.2:
https://github.com/unslothai/unsloth/issues/2972). The layer's docstring warns that
inputs requiring gradients must be positional for ``use_reentrant=True``; transformers
later made non-reentrant the default
(https://github.com/huggingface/transformers/pull/43203). Related:
https://github.com/pytorch/pytorch/issues/81296 (a closure-captured parameter's gradient
hook firing twice under reentrant checkpoint; non-reentrant fixes it).

The cases pin the mechanism in torch (the error, and where it is raised) and check the two
fixes: pass the shared tensor positionally, or use the non-reentrant checkpoint. Both
must give the gradients of the model without checkpointing (up to float rounding).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import pytest
import torch
from _torch_helpers import SECOND_BACKWARD, assert_close, frames, observe
from torch.utils.checkpoint import checkpoint

CHECKPOINT_BACKWARD = ("torch/utils/checkpoint.py", "backward")
AOT_RUNTIME_WRAPPER = ("torch/_functorch/_aot_autograd/runtime_wrappers.py", "backward")


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class EncoderDecoder(torch.nn.Module):
    """An encoder whose output every decoder layer reads (cross-attention in miniature)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.encoder = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh())
        self.embed = torch.nn.Linear(5, 8)
        self.layers = torch.nn.ModuleList(torch.nn.Bilinear(8, 8, 8) for _ in range(2))
        self.head = torch.nn.Linear(8, 1)

    @staticmethod
    def layer(bilinear: torch.nn.Bilinear, hidden, memory):
        return hidden + torch.tanh(bilinear(hidden, memory))

    def forward(self, audio, tokens, *, checkpointing: str | None, compiled_encoder=None):
        memory = (compiled_encoder or self.encoder)(audio)
        hidden = self.embed(tokens)
        for bilinear in self.layers:
            step = functools.partial(self.layer, bilinear)
            if checkpointing is None:
                hidden = step(hidden, memory)
            elif checkpointing == "reentrant-keyword":  # GradientCheckpointingLayer's way
                hidden = checkpoint(
                    functools.partial(step, memory=memory), hidden, use_reentrant=True
                )
            elif checkpointing == "reentrant-positional":
                hidden = checkpoint(step, hidden, memory, use_reentrant=True)
            elif checkpointing == "non-reentrant-keyword":
                hidden = checkpoint(step, hidden, memory=memory, use_reentrant=False)
            else:
                raise ValueError(checkpointing)
        return self.head(hidden).pow(2).mean()


def _batch():
    generator = torch.Generator().manual_seed(1)
    return torch.randn(3, 6, generator=generator), torch.randn(3, 5, generator=generator)


def _grads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.grad.clone() for name, p in model.named_parameters()}


@pytest.mark.parametrize("encoder", ["eager", "compiled"])
def test_shared_keyword_input_of_reentrant_checkpoints_raises(encoder, record_property):
    model = EncoderDecoder()
    compiled = torch.compile(model.encoder, backend="aot_eager") if encoder == "compiled" else None
    loss = model(*_batch(), checkpointing="reentrant-keyword", compiled_encoder=compiled)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD) as caught:
        loss.backward()
    observe(record_property, caught.value)
    path = frames(caught.value)
    record_property("frames", " > ".join(f"{file}:{name}" for file, name in path[-5:]))
    # Raised inside a checkpoint's nested backward, i.e. in the shared producer's graph.
    assert CHECKPOINT_BACKWARD in path
    if encoder == "compiled":
        assert path.index(CHECKPOINT_BACKWARD) < path.index(AOT_RUNTIME_WRAPPER)


@pytest.mark.parametrize("fix", ["reentrant-positional", "non-reentrant-keyword"])
@pytest.mark.parametrize("encoder", ["eager", "compiled"])
def test_fixed_checkpointing_gives_the_gradients_of_no_checkpointing(fix, encoder):
    reference = EncoderDecoder()
    reference(*_batch(), checkpointing=None).backward()
    want = _grads(reference)

    model = EncoderDecoder()
    compiled = torch.compile(model.encoder, backend="aot_eager") if encoder == "compiled" else None
    model(*_batch(), checkpointing=fix, compiled_encoder=compiled).backward()
    got = _grads(model)

    assert got.keys() == want.keys()
    assert all(g.abs().sum() > 0 for g in got.values()), "a parameter got no gradient"
    for name in want:
        assert_close(got[name], want[name], name)
