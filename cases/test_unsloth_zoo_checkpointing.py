"""unsloth_zoo's half of unsloth#3592: Whisper + LoRA + "unsloth" checkpointing, on CPU.

Symptom as users saw it (https://github.com/unslothai/unsloth/issues/3592, seed 003): the
unsloth Whisper notebook - FastModel.from_pretrained(auto_model=WhisperForConditionalGeneration),
FastModel.get_peft_model(q_proj/v_proj, use_gradient_checkpointing="unsloth"),
Seq2SeqTrainer - dies at the first step with

    RuntimeError: Trying to backward through the graph a second time ...

raised at unsloth_zoo/gradient_checkpointing.py:598, `torch.autograd.backward(outputs_with_grad,
args_with_grad)` in UnslothCheckpointFunction.backward, with unsloth 2025.11.2, unsloth_zoo
2025.11.3, transformers 4.56.2. The thread says it is fixed in the next releases; the fix is
https://github.com/unslothai/unsloth-zoo/pull/353 (unsloth_zoo 2025.11.4, required by unsloth
2025.11.3).

Why. patch_unsloth_smart_gradient_checkpointing replaces torch.utils.checkpoint's
CheckpointFunction with unsloth's reentrant UnslothCheckpointFunction. From transformers 4.53
Whisper's layers are GradientCheckpointingLayer, whose checkpointed __call__ binds keyword
arguments in a functools.partial, and WhisperDecoder passes encoder_hidden_states by keyword:
it is no checkpoint input, is never detached, and each decoder layer's recomputed backward
runs on into the encoder's graph - the second one finds it freed. unsloth_zoo's
gradient_checkpointing.py is byte-identical from 2025.11.2 to 2025.11.4; 2025.11.4's
compiler.py adds FIX_GC_LAYER_CALLER_MODULES = ["WhisperDecoder"], and
patch_gradient_checkpointing_layer_caller / strip_kw_from_module_calls rewrite the generated
WhisperDecoder.forward (unsloth_compiled_cache/ under the working directory) so that every
decoder_layer(...) call passes its arguments, encoder_hidden_states included, positionally.
(test_whisper_full_finetune.py shows the transformers half without unsloth.)

How it runs here. scripts/unsloth_zoo_whisper_lora.py runs the chain FastModel runs, on
unsloth_zoo directly, in a fresh interpreter (unsloth_zoo patches torch and transformers
globally) and its own temporary directory: patch_unsloth_smart_gradient_checkpointing;
unsloth_compile_transformers("whisper") with the loader's flags; prepare_model_for_training
(use_gradient_checkpointing="unsloth", use_reentrant=True); peft.get_peft_model;
requires_grad_for_gradient_checkpointing; prepare_model_for_training(patch_modules_to_save=
True); one forward and backward of a tiny random Whisper on synthetic speech through the
real WhisperFeatureExtractor. unsloth itself is never imported (its 2025.11 releases need a
GPU); it must be installed because unsloth_zoo looks for it.

CPU adaptation, all of it (zoo_shim.py): while unsloth_zoo's modules import, torch.cuda
reports a device (is_available, capability 7.5, 15 GiB free: the seed's T4) and is restored
right after; patch_unsloth_smart_gradient_checkpointing allocates its offload buffers
without pin_memory (they are used only for checkpoint inputs over 2 MiB, which this model
never has); TORCHDYNAMO_DISABLE=1, so the compiled cache's torch.compile runs eagerly.
Nothing on the autograd path is stubbed: UnslothCheckpointFunction, the rewritten
WhisperDecoder, peft's LoRA layers and GradientCheckpointingLayer run as released.

What the cases assert. The user's expectation: the first LoRA step with "unsloth"
checkpointing completes, the loss is finite, and every LoRA gradient equals the same
chain's step with checkpointing switched off. Recomputation is deterministic on CPU; the
tolerance, 1e-9 absolute, covers only the order in which the two decoder layers' gradients
for the encoder output are summed (measured with unsloth_zoo 2025.11.4: 2.3e-10 in the
encoder's LoRA matrices, the decoder's exact; each matrix's largest gradient entry is
between 2e-6 and 4e-2, so 1e-9 is at least three orders of magnitude below any of them). The
control empties FIX_GC_LAYER_CALLER_MODULES before compiling and expects the seed's error
back: it passes when the first case measures the fix and nothing else.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

CASES = Path(__file__).parent
SCRIPT = CASES / "scripts" / "unsloth_zoo_whisper_lora.py"
SEED_ERROR = "Trying to backward through the graph a second time"
ATOL = 1e-9

pytestmark = [
    pytest.mark.requires("unsloth_zoo", "unsloth", "transformers>=4.46", "peft"),
]


def zoo_chain(workdir: Path, variant: str, timeout: float = 300.0) -> dict:
    """Run the script in a fresh interpreter with `workdir` as its working directory;
    returns its last JSON line (stage, measurements, error) plus the output tail."""
    env = {
        **os.environ,
        "PYTHONPATH": str(CASES),
        "PYTHONUNBUFFERED": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(workdir), variant],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=workdir,
    )
    report: dict = {"stage": "crashed"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{") and line.endswith("}"):
            report = json.loads(line)
            break
    report["output"] = (done.stdout + done.stderr)[-3000:]
    if report["stage"] == "import" and "accelerator" in report.get("error", ""):
        pytest.skip(f"unsloth_zoo cannot be imported on this host: {report['error'].strip()}")
    return report


def failure(report: dict) -> str:
    return (
        f"failed at {report['stage']}: {report.get('error_type')}: {report.get('error')}\n"
        f"raised in: {report.get('raised_in')}\n"
        f"{report.get('traceback') or report['output']}"
    )


def zoo_has_fix_list() -> bool:
    """Whether the installed unsloth_zoo's compiler.py defines FIX_GC_LAYER_CALLER_MODULES
    (read as text: importing unsloth_zoo here would patch this interpreter)."""
    spec = importlib.util.find_spec("unsloth_zoo")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return "FIX_GC_LAYER_CALLER_MODULES" in (folder / "compiler.py").read_text(encoding="utf-8")


def test_whisper_lora_unsloth_checkpointing_matches_unchecked_run(tmp_path):
    report = zoo_chain(tmp_path, "as-released")
    assert report["stage"] == "done", failure(report)
    assert all(math.isfinite(x) for x in report["losses"]), f"losses: {report['losses']}"
    grads = torch.load(tmp_path / "grads.pt")
    reference, checkpointed = grads["reference"], grads["checkpointed"]
    assert reference, "the unchecked run gave no LoRA gradient at all"
    missing = sorted(set(reference) - set(checkpointed))
    assert not missing, f"{len(missing)} LoRA matrices got no gradient: {missing[:6]}"
    for side in ("encoder", "decoder"):
        names = [n for n in reference if f".{side}." in n]
        assert names and all(reference[n].abs().sum() > 0 for n in names), (
            f"the reference has no non-zero {side} LoRA gradient: the comparison would be empty"
        )
    worst = max((checkpointed[n] - g).abs().max().item() for n, g in reference.items())
    for name, grad in reference.items():
        torch.testing.assert_close(
            checkpointed[name],
            grad,
            rtol=0,
            atol=ATOL,
            msg=lambda m, name=name: f"LoRA gradient of {name} differs (worst {worst:.3g}): {m}",
        )


def test_control_error_returns_without_fix_gc_layer_caller_modules(tmp_path):
    """The control: the same chain with FIX_GC_LAYER_CALLER_MODULES emptied before
    compiling must fail as the seed did, where the first case passes."""
    if not zoo_has_fix_list():
        pytest.skip("this unsloth_zoo has no FIX_GC_LAYER_CALLER_MODULES (added in 2025.11.4)")
    report = zoo_chain(tmp_path, "fix-removed")
    assert report["stage"] == "checkpointed step" and SEED_ERROR in report.get("error", ""), (
        "with FIX_GC_LAYER_CALLER_MODULES emptied the seed's error should come back; got "
        + (f"stage {report['stage']}" if report["stage"] == "done" else failure(report))
    )
    assert report["raised_in"].get("file") == "unsloth_zoo/gradient_checkpointing.py", report[
        "raised_in"
    ]
