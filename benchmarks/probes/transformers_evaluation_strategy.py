"""transformers 4.51.0 removed TrainingArguments' ``evaluation_strategy``, deprecated
since 4.41.0 for ``eval_strategy`` (transformers/training_args.py lost
``evaluation_strategy: Union[IntervalStrategy, str] = field(default=None, ...)`` and,
in ``__post_init__``, ``self.eval_strategy = self.evaluation_strategy`` under the
warning "`evaluation_strategy` is deprecated and will be removed in version 4.46");
a training script written for 4.50.3 or earlier stops at TypeError "unexpected
keyword argument 'evaluation_strategy'". Exit 0 (good) when the old name is taken
and honoured, 1 (bad) when refused; any other error is raised. TrainingArguments
needs accelerate (an ImportError naming ``accelerate>=0.26.0`` without it).

Used by benchmarks/bench_default_bisects.py:
repromatrix bisect --package transformers --good 4.44.0 --bad 4.56.2 \
    --script benchmarks/probes/transformers_evaluation_strategy.py \
    --pin torch==2.13.0 --pin accelerate=latest
"""

import sys
import tempfile

from transformers import TrainingArguments

with tempfile.TemporaryDirectory() as out:
    try:
        args = TrainingArguments(
            output_dir=out, evaluation_strategy="steps", eval_steps=1, report_to=[], use_cpu=True
        )
    except TypeError as err:
        if "evaluation_strategy" not in str(err):
            raise
        print(f"refused: {err}")
        sys.exit(1)
strategy = getattr(args, "eval_strategy", None) or args.evaluation_strategy
print(f"TrainingArguments(evaluation_strategy='steps') -> eval_strategy {strategy.value}")
sys.exit(0 if strategy.value == "steps" else 1)
