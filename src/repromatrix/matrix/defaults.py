"""What a command assumes when it is not told, in a module that imports nothing:
the command line reads these while it builds its parser, before any command runs
(a ``--help`` must not pay for loading the matrix's models)."""

from __future__ import annotations

MATRIX_FILE = "matrix.yaml"
# The tier `run` (and `nox -s matrix`) runs without --tier.
DEFAULT_TIER = "smoke"
# The known-issue registry's name, in the cases folder.
KNOWN_ISSUES_FILE = "known_issues.yaml"
# Run outputs, in the folder of matrix.yaml: reports/latest/, reports/bisect/ ...
REPORTS_FOLDER = "reports"

# Used when matrix.yaml has no `packages:` list: the stack this tool is about.
DEFAULT_PACKAGES = (
    "torch",
    "transformers",
    "peft",
    "accelerate",
    "trl",
    "unsloth",
    "unsloth_zoo",
    "bitsandbytes",
    "datasets",
    "tokenizers",
    "huggingface_hub",
    "safetensors",
    "torchaudio",
    "torchvision",
    "triton",
    "xformers",
    "deepspeed",
    "numpy",
)
