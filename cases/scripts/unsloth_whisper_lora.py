"""The recipe of unsloth#3592 on a tiny Whisper checkpoint (run by test_unsloth_whisper.py).

    python unsloth_whisper_lora.py <checkpoint dir> <output dir>

Differences from the seed, each for a reason: r=8 (the model is d_model 32), synthetic
audio instead of the Elise data set (no data sets here), max_steps=2 with
gradient_accumulation_steps=2 (the seed: 4) and no warmup (with warmup the first step has
lr 0, LoRA B stays zero and A can never move in two steps), adamw_torch on unsloth's CPU
backend (adamw_8bit needs bitsandbytes' GPU kernels).
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


def body(report: Report) -> None:
    checkpoint, output = Path(sys.argv[1]), Path(sys.argv[2])
    unsloth = import_unsloth(report)
    device = report.data["device"]

    if device == "cpu":
        # The CPU backend's FastModel is its text FastLanguageModel; ask unsloth itself
        # whether it takes audio models, and skip with its words if not.
        report.stage("load")
        try:
            unsloth.FastVisionModel.from_pretrained(str(checkpoint))
        except NotImplementedError as error:
            report.stage("unsupported")
            report.data["reason"] = (
                f"unsloth {report.data['unsloth']} found no accelerator and runs on its CPU "
                f"backend, which cannot load Whisper: {error}"
            )
            return
        except Exception:
            pass  # it tried to load: the backend takes audio models, run the recipe

    import tiny
    from transformers import Seq2SeqTrainer, WhisperForConditionalGeneration
    from unsloth import FastModel

    report.stage("load")
    model, processor = FastModel.from_pretrained(
        model_name=str(checkpoint),
        dtype=None,
        load_in_4bit=False,
        auto_model=WhisperForConditionalGeneration,
        whisper_language="English",
        whisper_task="transcribe",
    )
    report.stage("peft")
    model = FastModel.get_peft_model(
        model,
        r=8,
        target_modules=["q_proj", "v_proj"],
        lora_alpha=8,
        lora_dropout=0,
        bias="none",
        use_gradient_checkpointing="unsloth",
        random_state=3407,
        use_rslora=False,
        loftq_config=None,
        task_type=None,
    )
    model.generation_config.language = "<|en|>"
    model.generation_config.task = "transcribe"
    model.config.suppress_tokens = []
    model.generation_config.forced_decoder_ids = None
    before = snapshot_lora(model)

    report.stage("train")
    args = tiny.training_arguments(
        output,
        seq2seq=True,
        learning_rate=1e-3,
        optim="adamw_8bit" if device == "cuda" else "adamw_torch",
        use_cpu=device == "cpu",
        **precision_flags(device),
    )
    trainer_kwargs = dict(
        model=model,
        args=args,
        train_dataset=tiny.ListDataset(tiny.speech_examples(processor, 4)),
        data_collator=tiny.DataCollatorSpeechSeq2SeqWithPadding(processor=processor),
    )
    try:
        trainer = Seq2SeqTrainer(**trainer_kwargs, processing_class=processor.feature_extractor)
    except TypeError:  # transformers before processing_class: the seed's spelling
        trainer = Seq2SeqTrainer(**trainer_kwargs, tokenizer=processor.feature_extractor)
    trainer.train()

    report.stage("check")
    record_losses(report, tiny.logged_losses(trainer))
    report.data["lora"] = moved_lora(before, model, tiny.side)
    report.stage("done")


if __name__ == "__main__":
    sys.exit(run(body))
