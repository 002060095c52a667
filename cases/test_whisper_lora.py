"""Whisper + LoRA + gradient checkpointing: adapters that train, or silently don't.

Symptom as users saw it. Fine-tuning Whisper with LoRA (q_proj / v_proj, as in the unsloth
Whisper notebook of unsloth#3592) and gradient checkpointing on, training stops at the
first backward with

    RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

or, worse, runs and reports a loss while part of the adapters never learn. Reported
again and again: https://github.com/huggingface/transformers/issues/23170 ,
https://github.com/huggingface/transformers/issues/26334 ,
https://github.com/huggingface/transformers/issues/35826 ,
https://github.com/huggingface/transformers/issues/42489 (still open for the Trainer),
https://github.com/huggingface/peft/issues/742 .

Why. With LoRA every base weight is frozen, so the hidden states entering a checkpointed
layer do not require grad. Reentrant checkpointing (torch.utils.checkpoint with
use_reentrant=True, which transformers' gradient_checkpointing_enable() used by default
from #28538 until https://github.com/huggingface/transformers/pull/43203 switched the
default to use_reentrant=False) returns outputs that do not require grad when no *input*
does, whatever parameters sit inside: the adapters in that segment get no gradient
(https://github.com/huggingface/transformers/issues/21381). The usual cure is a forward
hook that marks the input embeddings' output as requiring grad
(enable_input_require_grads, https://github.com/huggingface/transformers/pull/21598),
which PEFT installs in get_peft_model only when checkpointing is already on, and
transformers' gradient_checkpointing_enable() only for adapters added through its own
PEFT integration (https://github.com/huggingface/transformers/pull/25846) - not for a
model wrapped by peft.get_peft_model. Whisper is worse off: its encoder starts with a
frozen conv stem, not an embedding, and enable_input_require_grads hooked only
get_input_embeddings() (the decoder's token embedding), so even the documented order
leaves the encoder's adapters without gradients under reentrant checkpointing (PEFT's own
Whisper test works around it: https://github.com/huggingface/peft/pull/617).

What these cases assert: what the user expects. Every LoRA B matrix (they start at zero,
so after the first backward only B has a gradient) in the encoder *and* the decoder gets
a finite non-zero gradient on the first micro-step, every LoRA A and B on the second
optimizer step, and the set of adapters with gradients - and the gradients themselves -
match the same run without checkpointing (recomputation is deterministic on CPU).
"""

from __future__ import annotations

import math

import pytest
import tiny
import torch
from recipes import CHECKPOINTING, OFF, TRAINER_CHECKPOINTING

pytestmark = pytest.mark.requires("transformers>=4.46", "peft>=0.13")

MICRO_BATCHES = 4
ACCUMULATION = 2  # two optimizer steps of two micro-batches each


def _lora_whisper(processor, checkpointing, *, enable_first: bool):
    from peft import get_peft_model

    model = tiny.tiny_whisper(processor.tokenizer)
    if checkpointing is not OFF and enable_first:
        tiny.enable_checkpointing(model, checkpointing)
    model = get_peft_model(model, tiny.lora_config())
    if checkpointing is not OFF and not enable_first:
        tiny.enable_checkpointing(model, checkpointing)
    return model


def _train(processor, checkpointing, *, enable_first: bool = False) -> dict:
    """Micro-steps with gradient accumulation; what the gradients looked like on the way."""
    model = _lora_whisper(processor, checkpointing, enable_first=enable_first)
    lora = tiny.lora_parameters(model)
    seen: dict = {"losses": []}
    batches = tiny.speech_batches(processor, MICRO_BATCHES)
    for step, micro, loss in tiny.micro_steps(model, batches, accumulation=ACCUMULATION):
        seen["losses"].append(loss)
        if (step, micro) == (0, 0):
            seen["first"] = tiny.nonzero_grads((n, p) for n, p in lora.items() if "lora_B" in n)
        if (step, micro) == (1, ACCUMULATION - 1):
            seen["last"] = tiny.nonzero_grads(lora.items())
            seen["grads"] = {n: p.grad.clone() for n, p in lora.items() if p.grad is not None}
    seen["lora"] = sorted(lora)
    return seen


@pytest.fixture(scope="module")
def reference(whisper_processor) -> dict:
    """The same run without checkpointing: what every checkpointed run must reproduce."""
    return _train(whisper_processor, OFF)


def _assert_trains_like_reference(run: dict, reference: dict) -> None:
    assert run["losses"], "no micro-step ran"
    assert all(math.isfinite(x) for x in run["losses"]), f"non-finite loss: {run['losses']}"
    b_matrices = {n for n in run["lora"] if "lora_B" in n}
    for part in ("encoder", "decoder"):
        expected = {n for n in b_matrices if tiny.side(n) == part}
        got = run["first"] & expected
        assert expected, f"no LoRA B matrix in the {part}: the adapters missed q_proj/v_proj"
        assert got == expected, f"{part}, first micro-step: " + tiny.describe_missing(expected, got)
    everything = set(run["lora"])
    assert run["last"] == everything, "second optimizer step: " + tiny.describe_missing(
        everything, run["last"]
    )
    assert run["last"] == reference["last"], "not the adapters the unchecked run trains"
    for name, grad in reference["grads"].items():
        torch.testing.assert_close(
            run["grads"][name], grad, rtol=1e-4, atol=1e-7, msg=f"gradient of {name} differs"
        )


def test_lora_trains_without_checkpointing(reference):
    """The control: without checkpointing every adapter gets its gradient (if this fails,
    the measure or the tiny model is wrong, not checkpointing)."""
    _assert_trains_like_reference(reference, reference)


@pytest.mark.parametrize("checkpointing", CHECKPOINTING)
def test_lora_gets_gradients(whisper_processor, reference, checkpointing):
    """get_peft_model first, then model.gradient_checkpointing_enable(...): the order the
    HF Trainer uses (TrainingArguments(gradient_checkpointing=True) on a PeftModel), and the
    one in the reports above. Expected: trains exactly like the run without checkpointing."""
    run = _train(whisper_processor, checkpointing)
    _assert_trains_like_reference(run, reference)


@pytest.mark.parametrize("checkpointing", CHECKPOINTING)
def test_lora_gets_gradients_when_checkpointing_is_enabled_first(
    whisper_processor, reference, checkpointing
):
    """gradient_checkpointing_enable(...) on the base model, then get_peft_model: PEFT's
    documented order, in which get_peft_model installs enable_input_require_grads. For
    Whisper that hook sat on the decoder's token embedding only, so under reentrant
    checkpointing the encoder's adapters can stay at zero gradient while the loss goes
    down - the silent failure."""
    run = _train(whisper_processor, checkpointing, enable_first=True)
    _assert_trains_like_reference(run, reference)


@pytest.mark.parametrize("checkpointing_kwargs", TRAINER_CHECKPOINTING)
def test_seq2seq_trainer_trains_lora(whisper_processor, tmp_path, checkpointing_kwargs):
    """The recipe of unsloth#3592 without unsloth: get_peft_model on q_proj/v_proj, the
    seed's DataCollatorSpeechSeq2SeqWithPadding over synthetic audio through the real
    WhisperFeatureExtractor, Seq2SeqTrainer with gradient_checkpointing=True, batch 1,
    gradient_accumulation_steps=2, two optimizer steps. Expected: training completes with
    finite losses and every LoRA matrix, encoder and decoder, has moved."""
    from peft import get_peft_model

    model = get_peft_model(tiny.tiny_whisper(whisper_processor.tokenizer), tiny.lora_config())
    before = {n: p.detach().clone() for n, p in tiny.lora_parameters(model).items()}
    losses = tiny.train_seq2seq(
        model, whisper_processor, tmp_path, gradient_checkpointing_kwargs=checkpointing_kwargs
    )
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), f"losses: {losses}"
    after = tiny.lora_parameters(model)
    moved = {n for n, p in after.items() if not torch.equal(p.detach(), before[n])}
    for part in ("encoder", "decoder"):
        expected = {n for n in after if tiny.side(n) == part}
        assert moved & expected == expected, f"{part}: " + tiny.describe_missing(
            expected, moved & expected
        ).replace("got no gradient", "did not change")
