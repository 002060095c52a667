"""FastLanguageModel + get_peft_model(use_gradient_checkpointing="unsloth") on a tiny Llama
(run by test_unsloth_llama.py).

    python unsloth_llama_lora.py <checkpoint dir> <output dir>

max_seq_length is 1024: unsloth falls back to standard checkpointing below 512
(unslothai/unsloth#3867), and the offloading checkpoint is what this case is about.
"""

from __future__ import annotations

import sys
from pathlib import Path

from unsloth_run import (
    Report,
    import_unsloth,
    moved_lora,
    precision_flags,
    record_losses,
    run,
    snapshot_lora,
)

MAX_SEQ_LENGTH = 1024


def body(report: Report) -> None:
    checkpoint, output = Path(sys.argv[1]), Path(sys.argv[2])
    import_unsloth(report)
    device = report.data["device"]

    import tiny
    from transformers import Trainer, default_data_collator
    from unsloth import FastLanguageModel

    report.stage("load")
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=str(checkpoint),
        max_seq_length=MAX_SEQ_LENGTH,
        dtype=None,
        load_in_4bit=False,
    )
    report.stage("peft")
    model = FastLanguageModel.get_peft_model(
        model,
        r=8,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
        lora_alpha=8,
        lora_dropout=0,
        bias="none",
        use_gradient_checkpointing="unsloth",
        random_state=3407,
        max_seq_length=MAX_SEQ_LENGTH,
    )
    before = snapshot_lora(model)

    report.stage("train")
    vocab = len(tokenizer)
    rows = [
        {k: v[0] for k, v in batch.items()}
        for batch in tiny.token_batches(4, vocab_size=vocab, batch_size=1, length=32)
    ]
    trainer = Trainer(
        model=model,
        args=tiny.training_arguments(
            output,
            learning_rate=1e-3,
            use_cpu=device == "cpu",
            **precision_flags(device),
        ),
        train_dataset=tiny.ListDataset(rows),
        data_collator=default_data_collator,
    )
    trainer.train()

    report.stage("check")
    record_losses(report, tiny.logged_losses(trainer))
    report.data["lora"] = moved_lora(before, model, lambda _name: "model")
    report.stage("done")


if __name__ == "__main__":
    sys.exit(run(body))
