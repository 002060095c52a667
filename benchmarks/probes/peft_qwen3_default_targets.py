"""peft 0.16.0 gave Qwen3 default LoRA target modules (peft/utils/constants.py gained
``"qwen3": ["q_proj", "v_proj"]``); before, ``LoraConfig()`` without target_modules
was refused on a Qwen3 model ("Please specify `target_modules` in `peft_config`").
Exit 0 (good) when get_peft_model takes a default LoraConfig on a tiny random Qwen3,
1 (bad) when it refuses for want of target modules; any other error is raised.

Used by benchmarks/bench_default_bisects.py and README (bisect with default settings):
repromatrix bisect --package peft --good 0.17.1 --bad 0.13.0 --find first-good \
    --script benchmarks/probes/peft_qwen3_default_targets.py \
    --pin transformers==4.56.2 --pin torch==2.13.0
"""

import sys

from peft import LoraConfig, get_peft_model
from transformers import Qwen3Config, Qwen3ForCausalLM

config = Qwen3Config(
    vocab_size=64,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=1,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
)
try:
    model = get_peft_model(Qwen3ForCausalLM(config), LoraConfig(r=4))
except ValueError as err:
    if "target_modules" not in str(err):
        raise
    print(f"refused: {err}")
    sys.exit(1)
print("default targets:", sorted(model.peft_config["default"].target_modules))
