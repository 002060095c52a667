"""Backward through the same graph twice.

Symptom (seeds 000 and 002): ``RuntimeError: Trying to backward through the graph a
second time (or directly access saved tensors after they have already been freed)``.
PyTorch frees a graph's saved tensors during backward; a second backward over the same
forward pass has nothing left to differentiate. The error is correct behaviour: these
cases pin it down (type and key phrase; torch's full message text is kept in the
result, since it changes across versions) and check that each correct fix works.
"""

from __future__ import annotations

import pytest
import torch

KEY_PHRASE = "backward through the graph a second time"


def _model_and_batch():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    return model, torch.randn(4, 8), torch.randn(4, 1)


def test_second_backward_on_one_forward_raises():
    model, x, y = _model_and_batch()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    with pytest.raises(RuntimeError, match=KEY_PHRASE):
        loss.backward()


def test_fresh_forward_per_backward_works():
    model, x, y = _model_and_batch()
    for _ in range(2):
        model.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
