"""Unsloth Whisper LoRA with use_gradient_checkpointing="unsloth" (unsloth#3592).

Symptom as users saw it (https://github.com/unslothai/unsloth/issues/3592, seed 003):
the unsloth Whisper notebook - FastModel.from_pretrained(auto_model=
WhisperForConditionalGeneration), FastModel.get_peft_model(r=64, q_proj/v_proj,
use_gradient_checkpointing="unsloth"), Seq2SeqTrainer with gradient_accumulation_steps=4 -
dies at the first step with

    RuntimeError: Trying to backward through the graph a second time ...

raised from unsloth_zoo/gradient_checkpointing.py's backward, with unsloth 2025.11.2,
unsloth_zoo 2025.11.3, transformers 4.56.2, trl 0.22.2; a regression against an earlier
unsloth, and "transformers 4.51.3 works" according to the maintainers. Also reported
before: https://github.com/unslothai/unsloth/issues/2972 (transformers 4.53.2).

Why (as the CPU cases in test_whisper_full_finetune.py show without unsloth): from
transformers 4.53.0 Whisper's layers are GradientCheckpointingLayer, whose checkpointed
call passes keyword arguments through a closure, and WhisperDecoder passes
encoder_hidden_states by keyword. A reentrant checkpoint (torch's use_reentrant=True, or
unsloth's offloading checkpoint, which is reentrant too) then does not cut the graph at
the encoder output: each decoder layer's recomputed backward runs into the encoder's
graph, and the second one finds it freed. unsloth_zoo 2025.11.4 works around it by
rewriting WhisperDecoder's layer calls to positional arguments (FIX_GC_LAYER_CALLER_MODULES
= ["WhisperDecoder"] in unsloth_zoo/compiler.py); the thread says "fixed in the latest
unsloth and unsloth_zoo" (2025-11-16).

What the case asserts: the seed's recipe, on a tiny Whisper saved to a temp dir, trains -
two optimizer steps of gradient_accumulation_steps=2 with finite losses - and every LoRA
matrix of encoder and decoder has moved. It runs in a fresh interpreter (unsloth patches
transformers on import). Unsloth's Whisper path needs a GPU: on a CPU-only host the case
is skipped with unsloth's own reason (no accelerator, or a CPU backend that trains text
models only).
"""

from __future__ import annotations

import pytest
from recipes import unsloth_recipe

pytestmark = [pytest.mark.unsloth, pytest.mark.requires("transformers>=4.46", "peft")]


def test_unsloth_whisper_lora_seq2seq_trainer(whisper_checkpoint, tmp_path):
    report = unsloth_recipe("unsloth_whisper_lora.py", whisper_checkpoint, tmp_path)
    assert report["losses"] and all(report["finite"]), f"losses: {report['losses']}"
    for part in ("encoder", "decoder"):
        total, unmoved = report["lora"][part]["total"], report["lora"][part]["unmoved"]
        assert total > 0, f"no LoRA matrix in the {part}"
        assert not unmoved, (
            f"{part}: {len(unmoved)} of {total} LoRA matrices did not change: {unmoved[:6]}"
        )
