"""One LoRA Trainer step on a tiny random Llama (no hub, no data set): exit 0 when
the LoRA weights move, 1 otherwise; an import error exits 1 too (what a bisect
without time travel would call "bad").

Used by bench_bisect.py and by the as-of fact check in README.md:
repromatrix check --pin torch==2.13.0 --pin transformers==4.46.3 --pin peft=latest \
    --as-of transformers --script benchmarks/probes/lora_trainer_step.py
"""

import sys
import tempfile

import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=64,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)
model = get_peft_model(
    LlamaForCausalLM(config), LoraConfig(r=4, target_modules=["q_proj", "v_proj"])
)
ids = torch.randint(0, 64, (8, 16))
data = [{"input_ids": row, "labels": row} for row in ids]
before = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_B" in n}
with tempfile.TemporaryDirectory() as out:
    args = TrainingArguments(
        output_dir=out,
        per_device_train_batch_size=4,
        max_steps=1,
        learning_rate=1e-2,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
    )
    Trainer(model=model, args=args, train_dataset=data).train()
moved = [n for n, p in model.named_parameters() if n in before and not torch.equal(p, before[n])]
print(f"lora_B matrices moved: {len(moved)} of {len(before)}")
sys.exit(0 if moved else 1)
