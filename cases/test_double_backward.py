"""Backward through the same graph twice.

Symptom (seeds 000 and 002, and every framework on top of torch): ``RuntimeError: Trying
to backward through the graph a second time (or directly access saved tensors after they
have already been freed)``. Backward frees the saved tensors of the graph it walks; a
second backward over the same forward pass has nothing left to differentiate with.

The error is correct behaviour. These cases pin it down (the type and the stable key
phrase; torch's full text, which changes across versions, is kept in the result) and
check that each correct fix works and what it costs:

- a fresh forward per backward (the normal training loop);
- ``retain_graph=True`` where a second pass is truly needed (two losses on one forward):
  correct, but every saved tensor of the graph stays alive until the last pass;
- one combined loss, one backward: the same gradients, nothing kept.

"Add ``retain_graph=True``" (seed 000's quick fix) is the wrong fix when the second pass
is an accident: see test_recurrent_state_leak.py for where it leads.

Gradient checkpointing (seed 003: unsloth#3592, Whisper + LoRA, "unsloth" checkpointing)
does not change these semantics, and a user rightly expects it not to: a second
backward through a checkpointed segment fails with the same error for the reentrant
(``use_reentrant=True``) and the non-reentrant implementation, and with
``retain_graph=True`` both recompute and give the gradients plain autograd gives.
Older torch refused ``retain_graph`` through non-reentrant checkpoints
(https://github.com/pytorch/pytorch/pull/63524 removed that test's expected failure), and
libraries that cannot turn checkpointing off still hit it
(https://github.com/openai/guided-diffusion/pull/144).
"""

from __future__ import annotations

import pytest
import torch
from _torch_helpers import SECOND_BACKWARD, SavedTensors, assert_close, frames, observe
from torch.utils.checkpoint import checkpoint


def _model_and_batch():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    return model, torch.randn(4, 8), torch.randn(4, 1)


def _grads(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.grad.detach().clone() for p in model.parameters()]


def _two_losses(model, x, y):
    """Two losses sharing one forward: a task loss and an auxiliary penalty."""
    out = model(x)
    return torch.nn.functional.mse_loss(out, y), 0.1 * out.pow(2).mean()


def test_second_backward_on_one_forward_raises(record_property):
    model, x, y = _model_and_batch()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD) as caught:
        loss.backward()
    observe(record_property, caught.value)


def test_fresh_forward_per_backward_works():
    model, x, y = _model_and_batch()
    for _ in range(2):
        model.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_second_loss_on_a_shared_graph_without_retain_graph_raises(record_property):
    model, x, y = _model_and_batch()
    task, penalty = _two_losses(model, x, y)
    task.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD) as caught:
        penalty.backward()
    observe(record_property, caught.value)


def test_retain_graph_for_two_losses_is_correct_and_keeps_the_graph(record_property):
    model, x, y = _model_and_batch()
    saved = SavedTensors()
    with saved.track():
        task, penalty = _two_losses(model, x, y)
    assert saved.count > 0, "the instrument saw nothing saved: it measures nothing"
    held_before = saved.bytes

    task.backward(retain_graph=True)
    # The cost: everything saved for backward is still held after the first pass.
    assert saved.bytes == held_before > 0
    penalty.backward()
    two_passes = _grads(model)
    # The last pass (without retain_graph) frees what it walked; what only the first
    # loss needed lives as long as that loss does.
    del task, penalty
    assert saved.count == 0

    reference, _, _ = _model_and_batch()
    task, penalty = _two_losses(reference, x, y)
    (task + penalty).backward()
    for got, want in zip(two_passes, _grads(reference), strict=True):
        assert_close(got, want)
    record_property("held_between_passes_bytes", held_before)


def test_one_combined_loss_gives_the_same_gradients_and_keeps_nothing():
    model, x, y = _model_and_batch()
    saved = SavedTensors()
    with saved.track():
        task, penalty = _two_losses(model, x, y)
    (task + penalty).backward()
    assert saved.count == 0
    combined = _grads(model)

    # The same gradients from two separate forwards, one per loss.
    reference, _, _ = _model_and_batch()
    _two_losses(reference, x, y)[0].backward()
    _two_losses(reference, x, y)[1].backward()
    for got, want in zip(combined, _grads(reference), strict=True):
        assert_close(got, want)


# --- through a gradient-checkpointed segment ------------------------------------------


def _checkpointed_model():
    torch.manual_seed(0)
    embed = torch.nn.Linear(8, 16)
    block = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 16))
    return embed, block, torch.randn(4, 8)


def _checkpointed_loss(embed, block, x, use_reentrant: bool | None):
    hidden = embed(x)
    if use_reentrant is None:
        out = block(hidden)
    else:
        out = checkpoint(block, hidden, use_reentrant=use_reentrant)
    # sum() saves no tensor: a second backward first meets the checkpointed segment.
    return out.sum()


VARIANTS = pytest.mark.parametrize(
    "use_reentrant", [True, False], ids=["reentrant", "non-reentrant"]
)


@VARIANTS
def test_second_backward_through_a_checkpointed_segment_raises(use_reentrant, record_property):
    embed, block, x = _checkpointed_model()
    loss = _checkpointed_loss(embed, block, x, use_reentrant)
    loss.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD) as caught:
        loss.backward()
    observe(record_property, caught.value)
    record_property("raised_in", "{}:{}".format(*frames(caught.value)[-1]))


@VARIANTS
def test_retain_graph_through_a_checkpointed_segment_matches_plain_autograd(use_reentrant):
    embed, block, x = _checkpointed_model()
    loss = _checkpointed_loss(embed, block, x, use_reentrant)
    loss.backward(retain_graph=True)
    loss.backward()
    checkpointed = [p.grad.clone() for p in (*embed.parameters(), *block.parameters())]

    embed, block, x = _checkpointed_model()
    loss = _checkpointed_loss(embed, block, x, None)
    loss.backward(retain_graph=True)
    loss.backward()
    plain = [p.grad.clone() for p in (*embed.parameters(), *block.parameters())]

    assert all(g.abs().sum() > 0 for g in checkpointed)
    for got, want in zip(checkpointed, plain, strict=True):
        assert_close(got, want)
