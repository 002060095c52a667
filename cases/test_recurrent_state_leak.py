"""History carried from one training step into the next.

Two faces of one mistake (seed 002, "Correct Fix 3" and "When the Problem Is an
Accumulating Tensor"): a tensor that still belongs to step k's autograd graph is kept
and used in step k+1.

1. Recurrent state. ``h = cell(x, h)`` across steps without ``h.detach()``: step 2's
   backward walks into step 1's graph, already freed, and raises ``RuntimeError: Trying to
   backward through the graph a second time``. Truncated backpropagation through time
   (detach the carried state at each step) is the fix the PyTorch word-language-model
   example calls ``repackage_hidden`` (questions about it:
   https://github.com/LiyuanLucasLiu/LD-Net/issues/6,
   https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57, where
   ``retain_graph=True`` "solved" it). ``retain_graph=True`` is not a fix: every step then
   backpropagates through all previous steps, and once the optimizer has updated the
   weights a later step fails with "modified by an inplace operation"
   (https://github.com/sgadgil6/cnslab_fmri/issues/4: "if I use retain_graph=True, then
   buff will OOM").

2. The quiet leak. ``running_loss += loss`` for logging raises nothing, but every step's
   graph stays reachable from ``running_loss``: memory grows with the number of steps
   until the run dies (PyTorch FAQ "Don't accumulate history across your training loop";
   https://github.com/google/brax/pull/152, https://github.com/BatsResearch/labelmodels/issues/4).
   After ``loss.backward()`` the saved activations are freed, so in a training loop what
   grows is the graph's nodes; in an evaluation loop without ``torch.no_grad()`` nothing
   frees them and every batch's activations are kept. ``running_loss += loss.item()``
   keeps a number and nothing else.

The cases measure what is retained after each of K steps (autograd nodes reachable from
the accumulator; saved tensors still held, through ``saved_tensors_hooks``) and assert
that the fixed patterns stay flat. Companion cases show that the same measures see the
growth of the leaky patterns, so the "flat" assertions can fail.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from _torch_helpers import SECOND_BACKWARD, SavedTensors, graph_nodes, observe

STEPS = 5


# --- 1. recurrent state ---------------------------------------------------------------


def _recurrent_model():
    torch.manual_seed(0)
    cell, head = torch.nn.RNNCell(4, 8), torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
    return cell, head, optimizer, torch.randn(STEPS, 2, 4)


def _train_recurrent(detach: bool, retain_graph: bool = False) -> list[tuple[float, float]]:
    """One optimizer step per chunk, the hidden state carried over; returns each step's
    (loss, gradient norm of the recurrent weights)."""
    cell, head, optimizer, chunks = _recurrent_model()
    hidden = torch.zeros(2, 8)
    losses = []
    for chunk in chunks:
        if detach:
            hidden = hidden.detach()  # truncated BPTT: keep the value, drop the history
        hidden = cell(chunk, hidden)
        loss = head(hidden).pow(2).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=retain_graph)
        optimizer.step()
        losses.append((loss.item(), cell.weight_hh.grad.norm().item()))
    return losses


def test_carried_hidden_state_without_detach_raises_on_step_two(record_property):
    completed: list[int] = []
    cell, head, optimizer, chunks = _recurrent_model()
    hidden = torch.zeros(2, 8)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD) as caught:
        for step, chunk in enumerate(chunks):
            hidden = cell(chunk, hidden)
            loss = head(hidden).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            completed.append(step)
    assert completed == [0], "the first step is fine; the second walks into the first graph"
    observe(record_property, caught.value)


def test_detached_hidden_state_trains_every_step():
    steps = _train_recurrent(detach=True)
    assert len(steps) == STEPS
    assert torch.isfinite(torch.tensor(steps)).all()
    # From step 2 on the carried state is non-zero, so the recurrent weights learn.
    assert all(grad_norm > 0 for _, grad_norm in steps[1:])


def test_retain_graph_is_not_a_fix_for_carried_state(record_property):
    """Seed 000's quick fix: the error moves to a later step and changes its words."""
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as caught:
        _train_recurrent(detach=False, retain_graph=True)
    observe(record_property, caught.value)


# --- 2. the quiet leak: a running total that keeps each step's graph ------------------


def _mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    batches = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(STEPS)]
    return model, batches


def _retained_per_step(as_number: bool, train: bool, no_grad: bool = False):
    """Run STEPS steps accumulating the loss; after each, measure what is retained:
    (autograd nodes reachable from the running total, saved-tensor bytes still held)."""
    model, batches = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    saved = SavedTensors()
    running: float | torch.Tensor = 0.0
    measured = []
    for x, y in batches:
        with saved.track(), torch.set_grad_enabled(not no_grad):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        running += loss.item() if as_number else loss
        del loss  # reference counting frees a graph at once: no gc.collect() needed
        measured.append((graph_nodes(running), saved.bytes))
    return measured


def _record(record_property, measured: list[tuple[int, int]]) -> None:
    nodes, held = zip(*measured, strict=True)
    record_property("retained", f"graph nodes per step {list(nodes)}; saved bytes {list(held)}")


def _flat(series: list[int]) -> bool:
    return all(value == series[0] for value in series)


def _grows_by_the_same_amount_every_step(series: list[int]) -> bool:
    steps = [later - earlier for earlier, later in itertools.pairwise(series)]
    return steps[0] > 0 and _flat(steps)


def test_running_loss_item_in_training_retains_nothing(record_property):
    measured = _retained_per_step(as_number=True, train=True)
    nodes, held = zip(*measured, strict=True)
    _record(record_property, measured)
    assert _flat(nodes) and nodes[0] == 0
    assert _flat(held) and held[0] == 0


def test_running_loss_tensor_in_training_keeps_every_steps_graph(record_property):
    """The measure sees the leak: one more graph per step (its activations, though, are
    freed by backward)."""
    measured = _retained_per_step(as_number=False, train=True)
    nodes, held = zip(*measured, strict=True)
    _record(record_property, measured)
    assert _grows_by_the_same_amount_every_step(nodes)  # one more graph per step
    assert _flat(held) and held[0] == 0


@pytest.mark.parametrize("fix", ["item", "no_grad"])
def test_evaluation_running_loss_fixed_retains_nothing(fix, record_property):
    measured = _retained_per_step(as_number=fix == "item", train=False, no_grad=fix == "no_grad")
    nodes, held = zip(*measured, strict=True)
    _record(record_property, measured)
    assert _flat(nodes) and nodes[0] == 0
    assert _flat(held) and held[0] == 0


def test_evaluation_running_loss_tensor_keeps_every_batchs_activations(record_property):
    """Without backward nothing frees the graphs: activations pile up batch after batch."""
    measured = _retained_per_step(as_number=False, train=False)
    nodes, held = zip(*measured, strict=True)
    _record(record_property, measured)
    assert _grows_by_the_same_amount_every_step(nodes)
    assert _grows_by_the_same_amount_every_step(held)
    assert held[-1] == STEPS * held[0]  # all of every batch's activations
