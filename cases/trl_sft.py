"""TRL's SFTTrainer + peft_config=LoraConfig + gradient checkpointing, as a user writes it.

A plain module (no pytest): test_trl_sft_checkpointing.py calls `train` in its own
interpreter for the one-process cases, and scripts/trl_sft_ddp.py calls it in every rank
that torchrun starts for the DDP cases. The model is a tiny random Llama (tiny.py), the
tokenizer tiny.py's byte-level one, the data set a few short texts in a
`datasets.Dataset` (a trl dependency): nothing is downloaded.

trl and its friends are imported inside the functions: collecting the case file in a
cell without trl costs nothing.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import tiny
import torch

# A "text" column: what SFTTrainer's language-modeling path (dataset_text_field) reads.
TEXTS = (
    "hello world, tiny llama",
    "lora adapters on q and v",
    "gradient checkpointing",
    "one more short sentence",
    "the quick brown fox",
    "jumps over the lazy dog",
    "supervised fine-tuning",
    "two ranks on gloo",
)
MAX_LENGTH = 32  # byte-level tokens: every text above fits
STEPS = 2  # optimizer steps: LoRA B starts at zero, A only learns from the second step


def sft_config(output_dir: Path, checkpointing_kwargs: dict | None, **overrides: Any):
    """SFTConfig for two CPU optimizer steps, gradient_checkpointing=True, with the names
    of trl 0.12 through 1.x (max_seq_length became max_length in 0.20)."""
    from trl import SFTConfig

    settings: dict[str, Any] = dict(
        output_dir=str(output_dir),
        per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
        max_steps=STEPS,
        learning_rate=1e-2,
        weight_decay=0.0,
        warmup_steps=0,
        lr_scheduler_type="constant",
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        optim="adamw_torch",
        seed=tiny.SEED,
        use_cpu=True,
        bf16=False,  # trl >= 0.20 turns bf16 on unless fp16 is set
        fp16=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
        packing=False,
        dataset_text_field="text",
        gradient_checkpointing=True,
        gradient_checkpointing_kwargs=checkpointing_kwargs,
    )
    accepted = inspect.signature(SFTConfig.__init__).parameters
    settings["max_length" if "max_length" in accepted else "max_seq_length"] = MAX_LENGTH
    settings.update(overrides)
    if "use_cpu" not in accepted:
        settings.pop("use_cpu")
    return SFTConfig(**settings)


def train(workdir: Path, checkpointing_kwargs: dict | None, **overrides: Any) -> dict[str, Any]:
    """SFTTrainer(model, args=SFTConfig(gradient_checkpointing=True, ...),
    train_dataset, processing_class=tokenizer, peft_config=LoraConfig(...)).train().

    Returns what a case asserts on: the logged losses, the LoRA matrices' names, those
    that did not change, and a fingerprint of the adapters (DDP ranks must agree)."""
    from datasets import Dataset
    from trl import SFTTrainer

    tokenizer = tiny.llama_tokenizer(Path(workdir) / "tokenizer")
    model = tiny.tiny_llama(vocab_size=len(tokenizer))
    for config in (model.config, model.generation_config):
        config.pad_token_id = tokenizer.pad_token_id
        config.bos_token_id = tokenizer.bos_token_id
        config.eos_token_id = tokenizer.eos_token_id

    trainer = SFTTrainer(
        model=model,
        args=sft_config(Path(workdir) / "output", checkpointing_kwargs, **overrides),
        train_dataset=Dataset.from_dict({"text": list(TEXTS)}),
        processing_class=tokenizer,
        peft_config=tiny.lora_config("CAUSAL_LM"),
    )
    lora = tiny.lora_parameters(trainer.model)
    before = {name: p.detach().clone() for name, p in lora.items()}
    trainer.train()

    losses = [float(e["loss"]) for e in trainer.state.log_history if "loss" in e]
    return {
        "losses": losses,
        "lora": sorted(lora),
        "unmoved": sorted(n for n, p in lora.items() if torch.equal(p.detach(), before[n])),
        "fingerprint": {n: float(p.detach().double().abs().sum()) for n, p in lora.items()},
    }


def problems(outcome: dict[str, Any]) -> list[str]:
    """What is wrong with a `train` outcome, against the user's expectation: STEPS
    finite losses logged, at least one LoRA matrix, every one of them changed."""
    found = []
    losses = outcome.get("losses", [])
    if len(losses) != STEPS or not all(math.isfinite(x) for x in losses):
        found.append(f"expected {STEPS} finite logged losses, got {losses}")
    if not outcome.get("lora"):
        found.append("no LoRA matrices found on the trained model")
    unmoved = outcome.get("unmoved", [])
    if unmoved:
        found.append(
            f"{len(unmoved)} of {len(outcome['lora'])} LoRA matrices did not change: "
            + ", ".join(unmoved[:6])
        )
    return found


# --------------------------------------------------------------------------- DDP ranks

# What a forkserver imports once for all ranks (a fresh interpreter imports torch +
# transformers + trl in 10-25 s): the ranks start with them loaded.
PRELOAD = [
    "torch",
    "torch.distributed",
    "torch.nn.parallel",
    "torch._dynamo",
    "transformers",
    "transformers.trainer",
    "accelerate",
    "peft",
    "datasets",
    "trl.trainer.sft_trainer",
    __name__,
]


def ddp_rank(
    rank: int,
    world_size: int,
    port: int,
    workdir: str,
    checkpointing_kwargs: dict | None,
    find_unused_parameters: bool | None,
    timeout_seconds: int,
    results,
) -> None:
    """One DDP rank (a worker process): the environment torchrun would give it, then
    `train` with the HF Trainer's gloo backend on CPU. Puts (rank, report) on `results`:
    {"stage": "done", ...train's outcome} or {"stage": "train", "error": ...}; an error
    is reported, never raised, so that the parent hears from every rank."""
    import os
    import traceback

    os.environ.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        OMP_NUM_THREADS="1",
    )
    torch.set_num_threads(1)  # two ranks on a small machine: no oversubscription
    report: dict[str, Any] = {"rank": rank}
    try:
        overrides: dict[str, Any] = {"ddp_backend": "gloo", "ddp_timeout": timeout_seconds}
        if find_unused_parameters is not None:
            overrides["ddp_find_unused_parameters"] = find_unused_parameters
        outcome = train(Path(workdir) / f"rank{rank}", checkpointing_kwargs, **overrides)
        report.update(outcome, stage="done")
    except BaseException as error:
        report.update(
            stage="train",
            error_type=type(error).__name__,
            error=str(error),
            traceback=traceback.format_exc()[-4000:],
        )
    import torch.distributed as dist

    report["world_size"] = dist.get_world_size() if dist.is_initialized() else 1
    results.put((rank, report))
    try:
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # the parent has the report; a teardown error is not the case's
        pass
