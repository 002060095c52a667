"""Decoder LM + peft.get_peft_model + the HF Trainer with gradient_checkpointing=True.

Symptom as users saw it. The shortest PEFT recipe there is - wrap a causal LM with
get_peft_model, hand it to Trainer(args=TrainingArguments(gradient_checkpointing=True))
- dies in the first backward with

    RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

after torch's warning "None of the inputs have requires_grad=True. Gradients will be
None": https://github.com/huggingface/transformers/issues/42489 (filed by a TRL
maintainer against 5.0.0.dev0), https://github.com/huggingface/transformers/issues/35826
("model.gradient_checkpointing_enable() makes loss.requires_grad be False"),
https://github.com/huggingface/transformers/issues/26334 , and a proposed PEFT fix that
was not merged: https://github.com/huggingface/peft/pull/2398 .

Why. get_peft_model installs enable_input_require_grads only when checkpointing is
already on; the Trainer turns checkpointing on afterwards, on the wrapped model, and
transformers adds the hook only for adapters loaded through its own PEFT integration
(https://github.com/huggingface/transformers/pull/25846). With reentrant checkpointing
(transformers' default until https://github.com/huggingface/transformers/pull/43203 made
use_reentrant=False the default) no checkpointed layer sees an input that requires grad,
so nothing after the frozen embedding is differentiable.

What these cases assert: the user's expectation - the step completes with finite losses
and every LoRA A and B matrix has changed after two optimizer steps; in a hand-written
loop the adapters get exactly the gradients of the unchecked run, in both orders
(checkpointing before get_peft_model, as PEFT documents, and after, as the Trainer does).
"""

from __future__ import annotations

import math

import pytest
import tiny
import torch
from recipes import CHECKPOINTING, OFF, TRAINER_CHECKPOINTING

pytestmark = pytest.mark.requires("transformers>=4.46", "peft>=0.13")


def _lora_llama(checkpointing, *, enable_first: bool):
    from peft import get_peft_model

    model = tiny.tiny_llama()
    if checkpointing is not OFF and enable_first:
        tiny.enable_checkpointing(model, checkpointing)
    model = get_peft_model(model, tiny.lora_config("CAUSAL_LM"))
    if checkpointing is not OFF and not enable_first:
        tiny.enable_checkpointing(model, checkpointing)
    return model


def _train(checkpointing, *, enable_first: bool = False) -> dict:
    model = _lora_llama(checkpointing, enable_first=enable_first)
    lora = tiny.lora_parameters(model)
    seen: dict = {"losses": [], "lora": set(lora)}
    for step, micro, loss in tiny.micro_steps(model, tiny.token_batches(4), accumulation=2):
        seen["losses"].append(loss)
        if (step, micro) == (0, 0):
            seen["first"] = tiny.nonzero_grads((n, p) for n, p in lora.items() if "lora_B" in n)
        if (step, micro) == (1, 1):
            seen["last"] = tiny.nonzero_grads(lora.items())
            seen["grads"] = {n: p.grad.clone() for n, p in lora.items() if p.grad is not None}
    return seen


@pytest.fixture(scope="module")
def reference() -> dict:
    return _train(OFF)


def _assert_like_reference(run: dict, reference: dict) -> None:
    assert all(math.isfinite(x) for x in run["losses"]), f"non-finite loss: {run['losses']}"
    b_matrices = {n for n in run["lora"] if "lora_B" in n}
    assert run["first"] == b_matrices, "first micro-step: " + tiny.describe_missing(
        b_matrices, run["first"]
    )
    assert run["last"] == run["lora"], "second optimizer step: " + tiny.describe_missing(
        run["lora"], run["last"]
    )
    for name, grad in reference["grads"].items():
        torch.testing.assert_close(
            run["grads"][name], grad, rtol=1e-4, atol=1e-7, msg=f"gradient of {name} differs"
        )


def test_lora_trains_without_checkpointing(reference):
    """The control: the measure sees every adapter's gradient without checkpointing."""
    _assert_like_reference(reference, reference)


@pytest.mark.parametrize("checkpointing", CHECKPOINTING)
def test_checkpointing_enabled_after_get_peft_model(reference, checkpointing):
    """transformers#26334 / #35826: get_peft_model(...), then gradient_checkpointing_enable()."""
    _assert_like_reference(_train(checkpointing), reference)


@pytest.mark.parametrize("checkpointing", CHECKPOINTING)
def test_checkpointing_enabled_before_get_peft_model(reference, checkpointing):
    """PEFT's documented order: checkpointing on the base model, then get_peft_model
    (which installs enable_input_require_grads). Expected to train in every mode."""
    _assert_like_reference(_train(checkpointing, enable_first=True), reference)


@pytest.mark.parametrize("checkpointing_kwargs", TRAINER_CHECKPOINTING)
def test_trainer_gradient_checkpointing_trains_lora(tmp_path, checkpointing_kwargs):
    """transformers#42489: get_peft_model, then Trainer(gradient_checkpointing=True),
    two optimizer steps of two micro-batches. Every LoRA matrix must have moved."""
    from peft import get_peft_model
    from transformers import Trainer, default_data_collator

    model = get_peft_model(tiny.tiny_llama(), tiny.lora_config("CAUSAL_LM"))
    before = {n: p.detach().clone() for n, p in tiny.lora_parameters(model).items()}
    rows = [{k: v[0] for k, v in batch.items()} for batch in tiny.token_batches(4, batch_size=1)]
    trainer = Trainer(
        model=model,
        args=tiny.training_arguments(
            tmp_path,
            gradient_checkpointing=True,
            gradient_checkpointing_kwargs=checkpointing_kwargs,
        ),
        train_dataset=tiny.ListDataset(rows),
        data_collator=default_data_collator,
    )
    trainer.train()

    losses = tiny.logged_losses(trainer)
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), f"losses: {losses}"
    after = tiny.lora_parameters(model)
    unmoved = sorted(n for n, p in after.items() if torch.equal(p.detach(), before[n]))
    assert not unmoved, (
        f"{len(unmoved)} of {len(after)} LoRA matrices did not change: {unmoved[:6]}"
    )
