"""Example cases (made by `repromatrix init`): each runs inside every combination's
environment. A case states what a user expects; where it fails, the reports say on
which versions.

The markers come with repromatrix (no conftest.py needed); an unmet requirement is a
skip with its reason, never a failure:

    @pytest.mark.gpu                       a CUDA device
    @pytest.mark.requires("peft>=0.14")    installed versions (PEP 508)
    @pytest.mark.unsloth                   an installed unsloth
"""

from __future__ import annotations

import pytest


@pytest.mark.requires("transformers>=4.40")
def test_a_linear_layer_trains_one_step():
    import torch
    import transformers

    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 1)
    before = layer.weight.detach().clone()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    layer(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    assert not torch.equal(before, layer.weight), "the step changed nothing"
    assert transformers.__version__


@pytest.mark.gpu
def test_the_same_step_on_a_gpu():
    import torch

    layer = torch.nn.Linear(4, 1).cuda()
    layer(torch.ones(2, 4, device="cuda")).sum().backward()
    assert layer.weight.grad is not None
