"""What the unsloth scripts share: import unsloth first, report one JSON line at the end.

A script run by conftest.run_script prints, as its last stdout line, one JSON object:

    {"stage": "done", ...measurements}                   it trained
    {"stage": "unsupported", "reason": "..."}            this unsloth cannot run the path here
    {"stage": <where>, "error_type": ..., "error": ..., "traceback": ...}   it failed there

`stage` names the step that was running (import, load, peft, train, check), so that a
failure reads "failed at train: RuntimeError: Trying to backward through the graph...".
"""

from __future__ import annotations

import json
import math
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

# Never the network; never a statistics call home; the offloading checkpoint is what is tested.
os.environ.update(
    {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "UNSLOTH_DISABLE_STATISTICS": "1",
        "WANDB_DISABLED": "true",
    }
)


class Report:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {"stage": "import"}

    def stage(self, name: str) -> None:
        self.data["stage"] = name

    def emit(self) -> None:
        sys.stdout.flush()
        print(json.dumps(self.data, default=str), flush=True)


def run(body: Callable[[Report], None]) -> int:
    report = Report()
    try:
        body(report)
    except Exception as error:  # the case turns this into its failure message
        report.data.update(
            error_type=type(error).__name__,
            error=str(error)[:2000],
            traceback=traceback.format_exc()[-6000:],
        )
        report.emit()
        return 1
    report.emit()
    return 0


def import_unsloth(report: Report):
    """unsloth must come before transformers (it patches it); a host without an
    accelerator makes releases before 2026.10.9 raise here."""
    import unsloth

    report.data["unsloth"] = getattr(unsloth, "__version__", "?")
    report.data["device"] = str(getattr(unsloth, "DEVICE_TYPE", "cuda"))
    return unsloth


def precision_flags(device: str) -> dict[str, bool]:
    """The seed's fp16 = not is_bf16_supported(), bf16 = is_bf16_supported(), on a GPU;
    on unsloth's CPU backend its own trainer defaults decide."""
    if device == "cpu":
        return {}
    from unsloth import is_bf16_supported

    return {"fp16": not is_bf16_supported(), "bf16": is_bf16_supported()}


def moved_lora(before: dict, model, side: Callable[[str], str]) -> dict[str, dict]:
    """Per side (encoder / decoder / model): how many LoRA matrices, and which did not move."""
    import torch

    out: dict[str, dict] = {}
    for name, param in model.named_parameters():
        if name not in before:
            continue
        entry = out.setdefault(side(name), {"total": 0, "unmoved": []})
        entry["total"] += 1
        if torch.equal(param.detach().float().cpu(), before[name]):
            entry["unmoved"].append(name)
    return out


def snapshot_lora(model) -> dict:
    return {
        n: p.detach().float().cpu().clone() for n, p in model.named_parameters() if "lora_" in n
    }


def record_losses(report: Report, losses: list[float]) -> None:
    report.data["losses"] = losses
    report.data["finite"] = [math.isfinite(x) for x in losses]
