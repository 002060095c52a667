"""Tiny, random-initialised models and synthetic data for the repro cases.

Plain functions (no pytest): conftest.py wraps them in fixtures, and the scripts under
scripts/ (run in a fresh interpreter, e.g. for unsloth, which patches transformers on
import) import them too. Nothing here touches a model hub or a data set: models come
from configs, the tokenizer from a vocabulary written here, audio from sine waves.

transformers / peft are imported inside the functions: a torch-only case never pays
for them, and a cell without them still collects.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

SEED = 1234

# Whisper's special tokens, in Whisper's order (ids follow the 256 byte tokens). The
# language and task tokens are what WhisperTokenizer puts in front of every label.
WHISPER_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|startoftranscript|>",
    "<|en|>",
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nocaptions|>",
    "<|notimestamps|>",
)

# One second of 16 kHz audio is 100 mel frames: the encoder sees 50 positions instead of
# Whisper's 1500, which keeps a training step in milliseconds.
SAMPLING_RATE = 16_000
CHUNK_SECONDS = 1
NUM_MEL_BINS = 80

TRANSCRIPTS = ("hello world", "tiny whisper", "lora adapters", "checkpointing")


# --------------------------------------------------------------------------- tokenizer


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table (what byte-level BPE uses)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in chars), strict=True))


def write_whisper_vocabulary(folder: Path) -> Path:
    """A byte-level vocabulary (256 byte tokens, no merges) plus Whisper's special tokens,
    as the vocab.json / merges.txt pair every WhisperTokenizer release can load."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {char: index for index, char in enumerate(_bytes_to_unicode().values())}
    for token in WHISPER_SPECIAL_TOKENS:
        vocab[token] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return folder


def whisper_processor(folder: Path):
    """WhisperProcessor = the real WhisperFeatureExtractor (1 s chunks) + a tiny tokenizer."""
    from transformers import WhisperFeatureExtractor, WhisperProcessor, WhisperTokenizer

    write_whisper_vocabulary(folder)
    tokenizer = WhisperTokenizer.from_pretrained(
        str(folder),
        pad_token="<|endoftext|>",  # as in the released Whisper checkpoints
        additional_special_tokens=list(WHISPER_SPECIAL_TOKENS[1:]),
        language="en",
        task="transcribe",
    )
    features = WhisperFeatureExtractor(
        feature_size=NUM_MEL_BINS, sampling_rate=SAMPLING_RATE, chunk_length=CHUNK_SECONDS
    )
    return WhisperProcessor(feature_extractor=features, tokenizer=tokenizer)


# --------------------------------------------------------------------------- models


def tiny_whisper(tokenizer, *, seed: int = SEED, d_model: int = 32, layers: int = 2):
    """A 2+2-layer WhisperForConditionalGeneration, d_model 32, random weights."""
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    eot = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = WhisperConfig(
        vocab_size=len(tokenizer),
        num_mel_bins=NUM_MEL_BINS,
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=2 * d_model,
        decoder_ffn_dim=2 * d_model,
        max_source_positions=CHUNK_SECONDS * 100 // 2,  # mel frames / the conv stem's stride
        max_target_positions=64,
        pad_token_id=eot,
        bos_token_id=eot,
        eos_token_id=eot,
        decoder_start_token_id=tokenizer.convert_tokens_to_ids("<|startoftranscript|>"),
        suppress_tokens=[],
        begin_suppress_tokens=None,
        forced_decoder_ids=None,
    )
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config)
    model.config.use_cache = False
    return model


def tiny_llama(
    *,
    seed: int = SEED,
    vocab_size: int = 128,
    hidden: int = 32,
    layers: int = 2,
    positions: int = 128,
):
    """A 2-layer LlamaForCausalLM, hidden size 32, random weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=positions,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=False,
        use_cache=False,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def lora_config(task_type: str | None = None, **overrides: Any):
    """LoRA on q_proj / v_proj, as in the Whisper notebook of unsloth#3592 (r scaled down)."""
    from peft import LoraConfig

    settings: dict[str, Any] = dict(
        r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0, bias="none"
    )
    if task_type is not None:
        settings["task_type"] = task_type
    settings.update(overrides)
    return LoraConfig(**settings)


def save_whisper_checkpoint(folder: Path, processor, *, seed: int = SEED) -> Path:
    """save_pretrained of a tiny Whisper, its generation config and its processor: what
    `from_pretrained(folder)` (transformers' or unsloth's) expects of a Whisper repo."""
    from transformers import GenerationConfig

    model = tiny_whisper(processor.tokenizer, seed=seed)
    ids = processor.tokenizer.convert_tokens_to_ids
    model.generation_config = GenerationConfig(
        decoder_start_token_id=ids("<|startoftranscript|>"),
        eos_token_id=ids("<|endoftext|>"),
        pad_token_id=ids("<|endoftext|>"),
        bos_token_id=ids("<|endoftext|>"),
        no_timestamps_token_id=ids("<|notimestamps|>"),
        lang_to_id={"<|en|>": ids("<|en|>")},
        task_to_id={"transcribe": ids("<|transcribe|>"), "translate": ids("<|translate|>")},
        is_multilingual=True,
        max_length=32,
        suppress_tokens=[],
        begin_suppress_tokens=None,
        forced_decoder_ids=None,
    )
    model.save_pretrained(str(folder))
    processor.save_pretrained(str(folder))
    return folder


def llama_tokenizer(folder: Path):
    """A byte-level GPT-2 style tokenizer (same vocabulary files) with <|endoftext|> as
    bos / eos / pad: AutoTokenizer loads it back from a saved checkpoint."""
    from transformers import AutoTokenizer

    write_whisper_vocabulary(folder)
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "GPT2Tokenizer",
                "bos_token": "<|endoftext|>",
                "eos_token": "<|endoftext|>",
                "unk_token": "<|endoftext|>",
                "pad_token": "<|endoftext|>",
                "model_max_length": 128,
            }
        )
    )
    return AutoTokenizer.from_pretrained(str(folder))


def save_llama_checkpoint(folder: Path, *, seed: int = SEED) -> Path:
    """A tiny Llama + tokenizer; 1024 positions, so that a loader may ask for a
    max_seq_length of 1024 (unsloth's offloading checkpoint starts at 512)."""
    tokenizer = llama_tokenizer(folder / "tokenizer-source")
    model = tiny_llama(seed=seed, vocab_size=len(tokenizer), positions=1024)
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.bos_token_id = tokenizer.bos_token_id
    model.config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


# --------------------------------------------------------------------------- data


def synthetic_audio(count: int, *, seed: int = SEED, seconds: float = 0.8) -> list:
    """`count` clips of a sine tone plus noise, each a different pitch and length."""
    import numpy as np

    rng = np.random.default_rng(seed)
    clips = []
    for index in range(count):
        length = int(SAMPLING_RATE * seconds * (0.6 + 0.4 * (index % 3) / 2))
        t = np.arange(length) / SAMPLING_RATE
        tone = 0.5 * np.sin(2 * math.pi * (220.0 + 110.0 * index) * t)
        clips.append((tone + 0.05 * rng.standard_normal(length)).astype(np.float32))
    return clips


def speech_examples(processor, count: int, *, seed: int = SEED) -> list[dict]:
    """Rows as the seed's formatting_prompts_func makes them: log-mel features + label ids."""
    rows = []
    for index, clip in enumerate(synthetic_audio(count, seed=seed)):
        features = processor.feature_extractor(clip, sampling_rate=SAMPLING_RATE)
        labels = processor.tokenizer(TRANSCRIPTS[index % len(TRANSCRIPTS)]).input_ids
        rows.append({"input_features": features.input_features[0], "labels": labels})
    return rows


@dataclass
class DataCollatorSpeechSeq2SeqWithPadding:
    """The collator of unsloth#3592 (and of the HF Whisper fine-tuning blog post)."""

    processor: Any

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        inputs = [{"input_features": f["input_features"]} for f in features]
        batch = self.processor.feature_extractor.pad(inputs, return_tensors="pt")
        label_features = [{"input_ids": f["labels"]} for f in features]
        labels_batch = self.processor.tokenizer.pad(label_features, return_tensors="pt")
        labels = labels_batch["input_ids"].masked_fill(labels_batch.attention_mask.ne(1), -100)
        # The model prepends decoder_start_token_id itself: drop it from the labels.
        if (labels[:, 0] == self.processor.tokenizer.bos_token_id).all().cpu().item():
            labels = labels[:, 1:]
        batch["labels"] = labels
        return batch


def speech_batches(processor, count: int, batch_size: int = 2) -> list[dict[str, torch.Tensor]]:
    rows = speech_examples(processor, count * batch_size)
    collate = DataCollatorSpeechSeq2SeqWithPadding(processor)
    return [collate(rows[i : i + batch_size]) for i in range(0, len(rows), batch_size)]


def token_batches(
    count: int, *, vocab_size: int = 128, batch_size: int = 2, length: int = 16, seed: int = SEED
) -> list[dict[str, torch.Tensor]]:
    """Random token ids (ids 0-2 are pad / bos / eos), labels = inputs (causal LM)."""
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(count):
        ids = torch.randint(3, vocab_size, (batch_size, length), generator=generator)
        batches.append({"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids})
    return batches


class ListDataset(torch.utils.data.Dataset):
    """Rows for a HF Trainer, without the `datasets` package."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict:
        return self.rows[index]


# --------------------------------------------------------------------------- LoRA helpers


def lora_parameters(model: torch.nn.Module, which: str = "lora_") -> dict[str, torch.nn.Parameter]:
    """name -> parameter for every LoRA matrix whose name contains `which` (lora_A / lora_B)."""
    return {n: p for n, p in model.named_parameters() if which in n}


def side(name: str) -> str:
    """'encoder' / 'decoder' / 'model' for a parameter name of an encoder-decoder."""
    for part in ("encoder", "decoder"):
        if f".{part}." in f".{name}":
            return part
    return "model"


def nonzero_grads(params: Iterable[tuple[str, torch.nn.Parameter]]) -> set[str]:
    """Names whose .grad exists, is finite and is not all zeros."""
    return {
        name
        for name, p in params
        if p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0
    }


def describe_missing(expected: set[str], got: set[str]) -> str:
    missing = sorted(expected - got)
    shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
    return f"{len(missing)} of {len(expected)} LoRA matrices got no gradient: {shown}"


def enable_checkpointing(model, kwargs: dict | None) -> None:
    """model.gradient_checkpointing_enable(...) as a user writes it: no argument at all
    for the library default, else gradient_checkpointing_kwargs."""
    if kwargs is None:
        model.gradient_checkpointing_enable()
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def micro_steps(
    model: torch.nn.Module,
    batches: list[dict[str, torch.Tensor]],
    *,
    accumulation: int,
    lr: float = 1e-2,
) -> Iterator[tuple[int, int, float]]:
    """Train with gradient accumulation; yields (optimizer step, micro step, loss) after
    each backward, *before* the optimizer consumes the gradients, so that the caller can
    look at .grad. AdamW moves every parameter with a non-zero gradient."""
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    for index, batch in enumerate(batches):
        loss = model(**batch).loss / accumulation
        loss.backward()
        step, micro = divmod(index, accumulation)
        yield step, micro, loss.item() * accumulation
        if micro == accumulation - 1:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def training_arguments(output_dir: Path, *, seq2seq: bool = False, **overrides: Any):
    """(Seq2Seq)TrainingArguments for a CPU step or two, with the names of 4.46 through 5.x."""
    from transformers import Seq2SeqTrainingArguments, TrainingArguments

    cls = Seq2SeqTrainingArguments if seq2seq else TrainingArguments

    settings: dict[str, Any] = dict(
        output_dir=str(output_dir),
        per_device_train_batch_size=1,
        gradient_accumulation_steps=2,
        max_steps=2,
        learning_rate=1e-2,
        weight_decay=0.0,
        warmup_steps=0,
        lr_scheduler_type="constant",
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        optim="adamw_torch",
        seed=SEED,
        data_seed=SEED,
        dataloader_num_workers=0,
        remove_unused_columns=False,
        label_names=["labels"],
        use_cpu=True,
        disable_tqdm=True,
    )
    settings.update(overrides)
    # Only these may be missing from an older release; everything else must be accepted.
    accepted = inspect.signature(cls.__init__).parameters
    for name in ("use_cpu", "data_seed", "disable_tqdm"):
        if name not in accepted:
            settings.pop(name)
    return cls(**settings)


def logged_losses(trainer) -> list[float]:
    return [float(entry["loss"]) for entry in trainer.state.log_history if "loss" in entry]


def train_seq2seq(model, processor, output_dir: Path, **training: Any) -> list[float]:
    """The seed's Seq2SeqTrainer recipe on synthetic speech: its collator, the real
    feature extractor, batch 1 with gradient accumulation (training_arguments), and
    gradient checkpointing on. Returns the logged losses."""
    from transformers import Seq2SeqTrainer

    trainer = Seq2SeqTrainer(
        model=model,
        args=training_arguments(output_dir, seq2seq=True, gradient_checkpointing=True, **training),
        train_dataset=ListDataset(speech_examples(processor, 4)),
        data_collator=DataCollatorSpeechSeq2SeqWithPadding(processor=processor),
        processing_class=processor.feature_extractor,
    )
    trainer.train()
    return logged_losses(trainer)
