"""unsloth_zoo's Whisper LoRA chain with "unsloth" checkpointing, on CPU (run by
test_unsloth_zoo_checkpointing.py in a fresh interpreter and its own working directory).

    python unsloth_zoo_whisper_lora.py <work dir> as-released|fix-removed

The chain is the one FastModel.from_pretrained(auto_model=WhisperForConditionalGeneration)
and FastModel.get_peft_model(use_gradient_checkpointing="unsloth") run in unsloth
2025.11.x (unsloth/models/loader.py and vision.py), called on unsloth_zoo directly:

    1. patch_unsloth_smart_gradient_checkpointing(dtype)      loader, before compiling
    2. unsloth_compile_transformers("whisper", <the loader's flags>)
                                                              writes unsloth_compiled_cache/
    3. prepare_model_for_training(use_gradient_checkpointing="unsloth", use_reentrant=True)
                                                              get_peft_model's first step
    4. peft.get_peft_model(LoRA on q_proj / v_proj)
    5. requires_grad_for_gradient_checkpointing(model)
    6. prepare_model_for_training(..., patch_modules_to_save=True)   post_patch_model
    7. one forward and backward of a tiny random Whisper on synthetic speech

Left out, each for a reason: the "siglip" compile FastModel runs before the model's own
(no Whisper module in it), unsloth's TEMPORARY_PATCHES re-run (none touches Whisper in
2025.11.x), loading from a hub (the model is built from a config, tiny.tiny_whisper). The
CPU adaptation (zoo_shim.py) is only at import time and in the offload buffers'
allocation; the autograd path runs as released.

Two builds of the same model go through the same chain in this interpreter: the
reference with checkpointing switched off afterwards on every module (as unsloth's
for_inference does), then the checkpointed one. LoRA A and B are filled from a seeded
generator in both (B starts at zero in PEFT, which would leave every A gradient zero).
Both runs' LoRA gradients are saved to <work dir>/grads.pt for the case to compare.

as-released runs unsloth_zoo as installed; fix-removed empties its
FIX_GC_LAYER_CALLER_MODULES (the list unsloth_zoo 2025.11.4 added, unsloth-zoo#353)
before compiling: the control that shows what the case measures.
"""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from pathlib import Path

os.environ["TORCHDYNAMO_DISABLE"] = "1"  # before torch is imported

from unsloth_run import Report, record_losses, run

VARIANTS = ("as-released", "fix-removed")

# unsloth/models/loader.py (2025.11.1-2025.11.4), FastModel.from_pretrained: the flags it
# passes to unsloth_compile_transformers, which forwards them to unsloth_zoo's per model type.
LOADER_COMPILE_FLAGS = dict(
    sdpa_dynamic_mask=True,
    sdpa_bool_masks=True,
    sdpa_gqa_replace=True,
    sdpa_dynamic_compile=True,
    compile_attention=True,
    disable_causal_masks=True,
    compile_torch_modules=True,
    compile_custom_modules=True,
    compile_function_calls=True,
    fuse_lm_head=True,
    gradient_checkpointing=True,
    manual_replacements=True,
    fast_lora_forwards=True,
    fast_residual_stream=False,
    accurate_accumulation=True,
    epilogue_fusion=True,
    max_autotune=False,
    shape_padding=True,
    cudagraphs=False,
    debug=False,
    fullgraph=True,
    import_from_cache=False,
    disable=False,
    return_logits=False,
)

# prepare_model_for_kbit_training (get_peft_model's first step) and post_patch_model.
PREPARE = dict(
    use_reentrant=True,
    full_finetuning=False,
    train_layernorms=False,
    train_embedding=False,
    train_lm_head=False,
    float32_mixed_precision=True,
)


def decoder_layer_call(model) -> dict:
    """Where the WhisperDecoder class in use comes from, and its decoder_layer(...) call,
    read from that file (the compiled class's forward calls a module-level
    WhisperDecoder_forward; either file has one such call)."""
    cls = type(model.get_base_model().model.decoder)
    path = Path(inspect.getsourcefile(cls.forward))
    text = path.read_text(encoding="utf-8")
    start = text.find("decoder_layer(")
    if start < 0:
        return {"from": str(path.name), "call": None}
    depth, end = 0, start
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0 and text[end] == ")":
            break
    where = "unsloth_compiled_cache" if "unsloth_compiled_cache" in path.parts else "transformers"
    return {"from": where, "call": " ".join(text[start : end + 1].split())}


def build(processor, zoo: dict, use_gradient_checkpointing):
    import tiny
    import torch
    from peft import get_peft_model

    prepare = zoo["unsloth_zoo.training_utils"].prepare_model_for_training
    model = tiny.tiny_whisper(processor.tokenizer)
    model = prepare(model, use_gradient_checkpointing=use_gradient_checkpointing, **PREPARE)
    model = get_peft_model(model, tiny.lora_config())
    zoo["unsloth_zoo.peft_utils"].requires_grad_for_gradient_checkpointing(model)
    model = prepare(
        model,
        use_gradient_checkpointing=use_gradient_checkpointing,
        patch_modules_to_save=True,
        **PREPARE,
    )
    generator = torch.Generator().manual_seed(tiny.SEED)
    with torch.no_grad():
        for _, param in sorted(tiny.lora_parameters(model).items()):
            param.copy_(0.1 * torch.randn(param.shape, generator=generator))
    model.train()
    return model


def step(model, batch) -> tuple[float, dict]:
    import tiny

    loss = model(**batch).loss
    loss.backward()
    grads = {
        name: p.grad.detach().clone()
        for name, p in tiny.lora_parameters(model).items()
        if p.grad is not None
    }
    return loss.item(), grads


def raised_in(tb) -> dict:
    """The innermost unsloth_zoo frame of a traceback: file, line, code."""
    frames = [f for f in traceback.extract_tb(tb) if "unsloth_zoo" in f.filename]
    if not frames:
        return {}
    frame = frames[-1]
    return {
        "file": "unsloth_zoo/" + frame.filename.split("unsloth_zoo/", 1)[-1],
        "line": frame.lineno,
        "code": frame.line,
    }


def body(report: Report) -> None:
    workdir, variant = Path(sys.argv[1]), sys.argv[2]
    assert variant in VARIANTS, f"variant must be one of {VARIANTS}"
    os.chdir(workdir)  # unsloth_compiled_cache/ is written under the working directory
    report.data["variant"] = variant

    import zoo_shim

    zoo = zoo_shim.import_unsloth_zoo()
    import importlib.metadata

    import tiny
    import torch

    report.data["versions"] = {
        name: importlib.metadata.version(name)
        for name in ("unsloth_zoo", "unsloth", "transformers", "peft", "torch")
    }
    compiler = zoo["unsloth_zoo.compiler"]
    fix = getattr(compiler, "FIX_GC_LAYER_CALLER_MODULES", None)
    report.data["fix_gc_layer_caller_modules"] = None if fix is None else list(fix)
    if variant == "fix-removed":
        if fix is None:
            report.stage("unsupported")
            report.data["reason"] = (
                f"unsloth_zoo {report.data['versions']['unsloth_zoo']} has no "
                "FIX_GC_LAYER_CALLER_MODULES to empty"
            )
            return
        fix.clear()  # read by name inside unsloth_compile_transformers

    report.stage("patch")
    zoo_shim.patch_smart_gradient_checkpointing(
        zoo["unsloth_zoo.gradient_checkpointing"], torch.float32
    )
    report.data["checkpoint_function"] = torch.utils.checkpoint.CheckpointFunction.__name__

    report.stage("compile")
    compiler.unsloth_compile_transformers("whisper", **LOADER_COMPILE_FLAGS)
    report.data["compiled_cache"] = sorted(
        p.name for p in (workdir / "unsloth_compiled_cache").glob("*whisper*.py")
    )

    report.stage("build")
    processor = tiny.whisper_processor(workdir / "tokenizer")
    batch = tiny.speech_batches(processor, 1, batch_size=2)[0]

    report.stage("reference")
    reference = build(processor, zoo, "unsloth")
    for module in reference.modules():
        if hasattr(module, "gradient_checkpointing"):
            module.gradient_checkpointing = False
    reference_loss, reference_grads = step(reference, batch)
    report.data["reference_loss"] = reference_loss
    del reference

    report.stage("build checkpointed")
    model = build(processor, zoo, "unsloth")
    report.data["decoder_layer"] = decoder_layer_call(model)
    report.data["checkpointing_on"] = sorted(
        {type(m).__name__ for m in model.modules() if getattr(m, "gradient_checkpointing", False)}
    )

    report.stage("checkpointed step")
    try:
        loss, grads = step(model, batch)
    except Exception as error:
        report.data["raised_in"] = raised_in(error.__traceback__)
        raise
    record_losses(report, [reference_loss, loss])
    torch.save({"reference": reference_grads, "checkpointed": grads}, workdir / "grads.pt")
    report.data["lora_matrices"] = len(reference_grads)
    report.stage("done")


if __name__ == "__main__":
    sys.exit(run(body))
