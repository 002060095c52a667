"""Whisper full fine-tuning with gradient checkpointing (no adapters).

Symptom as users saw it. Whisper fine-tuning with gradient checkpointing on stops at the
first backward with

    RuntimeError: Trying to backward through the graph a second time (or directly access
    saved tensors after they have already been freed) ...

raised from inside the checkpoint's own backward (torch/utils/checkpoint.py, or
unsloth_zoo/gradient_checkpointing.py for unsloth's variant): unsloth#3592 (seed 003,
transformers 4.56.2; "an old transformers version 4.51.3 works") and unsloth#2972
("Downgrading the transformers library to 4.51.3 fixed it", transformers 4.53.2):
https://github.com/unslothai/unsloth/issues/3592 ,
https://github.com/unslothai/unsloth/issues/2972 . Older Whisper checkpointing breakage:
https://github.com/huggingface/transformers/issues/19537 (fixed by #19538 / #19548).

Why. From transformers 4.53.0 Whisper's encoder and decoder layers are
GradientCheckpointingLayer, whose checkpointed call binds keyword arguments in a closure
(functools.partial) and hands only the positional ones to torch.utils.checkpoint - its
own docstring warns that inputs requiring grad must be positional under
use_reentrant=True. WhisperDecoder passes encoder_hidden_states by keyword, so a
reentrant checkpoint does not detach it: the recomputed backward of the first decoder
layer runs on into the encoder's graph and frees it, and the second decoder layer finds
it freed. With every weight trainable the encoder output requires grad, so full
fine-tuning hits it with the library default (use_reentrant=True before 5.0.0). 5.0.0
passes encoder_hidden_states positionally and defaults to use_reentrant=False
(https://github.com/huggingface/transformers/pull/43203); unsloth_zoo 2025.11.4 rewrote
WhisperDecoder's layer calls to positional arguments for its own reentrant checkpoint.

What these cases assert: with checkpointing on (library default, reentrant,
non-reentrant) a few micro-steps with gradient accumulation give finite losses and the
same gradients, parameter for parameter, as without checkpointing (recomputation is
deterministic on CPU); and the HF Seq2SeqTrainer with gradient_checkpointing=True
completes two optimizer steps that move every layer weight of encoder and decoder.
"""

from __future__ import annotations

import math

import pytest
import tiny
import torch
from recipes import CHECKPOINTING

pytestmark = pytest.mark.requires("transformers>=4.46")

MICRO_BATCHES = 4
ACCUMULATION = 2


def _train(processor, checkpointing, *, enabled: bool = True) -> dict:
    model = tiny.tiny_whisper(processor.tokenizer)
    if enabled:
        tiny.enable_checkpointing(model, checkpointing)
    params = dict(model.named_parameters())
    seen: dict = {"losses": []}
    batches = tiny.speech_batches(processor, MICRO_BATCHES)
    for step, micro, loss in tiny.micro_steps(model, batches, accumulation=ACCUMULATION, lr=1e-3):
        seen["losses"].append(loss)
        if (step, micro) == (1, ACCUMULATION - 1):
            seen["grads"] = {n: p.grad.clone() for n, p in params.items() if p.grad is not None}
    return seen


@pytest.fixture(scope="module")
def reference(whisper_processor) -> dict:
    return _train(whisper_processor, None, enabled=False)


@pytest.mark.parametrize("checkpointing", CHECKPOINTING)
def test_full_finetune_gradients_match_unchecked_run(whisper_processor, reference, checkpointing):
    run = _train(whisper_processor, checkpointing)
    assert all(math.isfinite(x) for x in run["losses"]), f"non-finite loss: {run['losses']}"
    missing = sorted(set(reference["grads"]) - set(run["grads"]))
    assert not missing, f"{len(missing)} parameters got no gradient: {missing[:6]}"
    for side in ("encoder", "decoder"):
        assert any(tiny.side(n) == side for n in run["grads"]), f"no {side} gradient at all"
    for name, grad in reference["grads"].items():
        torch.testing.assert_close(
            run["grads"][name], grad, rtol=1e-4, atol=1e-6, msg=f"gradient of {name} differs"
        )


def test_seq2seq_trainer_full_finetune(whisper_processor, tmp_path):
    """Seq2SeqTrainer, gradient_checkpointing=True (library default kwargs), batch 1,
    gradient_accumulation_steps=2, two optimizer steps over synthetic audio."""
    model = tiny.tiny_whisper(whisper_processor.tokenizer)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    losses = tiny.train_seq2seq(model, whisper_processor, tmp_path, learning_rate=1e-3)
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), f"losses: {losses}"
    # Weights that take part in every forward; embed_positions of the encoder is fixed
    # (sinusoidal, requires_grad False) and skipped for that reason.
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    unmoved = sorted(
        n for n in trainable if torch.equal(dict(model.named_parameters())[n], before[n])
    )
    layer_weights = [n for n in unmoved if ".layers." in n and n.endswith("weight")]
    assert not layer_weights, (
        f"{len(layer_weights)} layer weights did not change: {layer_weights[:6]}"
    )
