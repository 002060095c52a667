"""Unsloth decoder LoRA: FastLanguageModel + get_peft_model(use_gradient_checkpointing="unsloth").

The text path of the same family as unsloth#3592 (test_unsloth_whisper.py): unsloth's
"unsloth" checkpointing (activation offloading, reentrant, in
unsloth_zoo/gradient_checkpointing.py) with LoRA and gradient accumulation. Related
reports: https://github.com/unslothai/unsloth/issues/3476 ("Trying to backward through
the graph a second time" with Qwen3-VL GRPO), https://github.com/unslothai/unsloth/pull/3867
(falls back to standard checkpointing for short sequences). On unsloth's CPU backend
(2026.10.9+) "unsloth" checkpointing is plain non-reentrant recomputation
(unsloth_zoo/cpu/loader.py), so the case checks that path there.

What the case asserts: a tiny Llama saved to a temp dir, loaded through
FastLanguageModel.from_pretrained, wrapped with FastLanguageModel.get_peft_model(
use_gradient_checkpointing="unsloth"), trained by the HF Trainer for two optimizer steps
of gradient_accumulation_steps=2: finite losses, and every LoRA matrix has moved.
Skipped with unsloth's own reason where unsloth cannot start.
"""

from __future__ import annotations

import pytest
from recipes import unsloth_recipe

pytestmark = [pytest.mark.unsloth, pytest.mark.requires("transformers>=4.46", "peft")]


def test_unsloth_llama_lora_trainer(llama_checkpoint, tmp_path):
    report = unsloth_recipe("unsloth_llama_lora.py", llama_checkpoint, tmp_path)
    assert report["losses"] and all(report["finite"]), f"losses: {report['losses']}"
    total, unmoved = report["lora"]["model"]["total"], report["lora"]["model"]["unmoved"]
    assert total > 0, "no LoRA matrix: get_peft_model targeted nothing"
    assert not unmoved, f"{len(unmoved)} of {total} LoRA matrices did not change: {unmoved[:6]}"
