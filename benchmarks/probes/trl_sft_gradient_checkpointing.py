"""trl's SFTConfig() turns gradient checkpointing on by default since trl 0.22.0
(trl/trainer/sft_config.py gained ``gradient_checkpointing: bool = field(default=True)``;
0.21.0 inherits transformers' False). Exit 1 (bad) when a default SFTConfig has it
on, 0 (good) when off: the change a user sees as a slower step and less memory.

Used by benchmarks/bench_default_bisects.py and README (bisect with default settings):
repromatrix bisect --package trl --good 0.17.0 --bad 0.26.2 \
    --script benchmarks/probes/trl_sft_gradient_checkpointing.py \
    --pin transformers==4.56.2 --pin torch==2.13.0
"""

import sys
import tempfile

from trl import SFTConfig

with tempfile.TemporaryDirectory() as out:
    # bf16 off: since 0.20 SFTConfig also defaults to bf16, which a CPU refuses
    # ("Your setup doesn't support bf16/gpu"): another change, not this one.
    config = SFTConfig(output_dir=out, report_to=[], bf16=False)
    print(f"SFTConfig().gradient_checkpointing = {config.gradient_checkpointing}")
    sys.exit(1 if config.gradient_checkpointing else 0)
