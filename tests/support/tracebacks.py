# ruff: noqa: E501  (tracebacks as pytest and Python print them, long lines included)
"""Real tracebacks of the repro families in cases/ (reports/baseline-cpu: the cases run
on transformers 4.46-4.53 and unsloth_zoo 2025.11.2), and ``varied``: the same failure
as another run writes it. Read by the signature, report and tracking tests."""

from __future__ import annotations

import re

SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

# The cases' own training loop (cases/tiny.py) calling backward, into torch's engine.
MANUAL_LOOP = """\
tiny.py:368: in micro_steps
    loss.backward()
<env>/venv/lib/python3.11/site-packages/torch/_tensor.py:623: in backward
    torch.autograd.backward(
<env>/venv/lib/python3.11/site-packages/torch/autograd/__init__.py:395: in backward
    _engine_run_backward(
<env>/venv/lib/python3.11/site-packages/torch/autograd/graph.py:979: in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine
"""

# test_whisper_full_finetune.py on transformers 4.53.0: torch's own checkpoint recomputes
# the Whisper encoder layer, whose second backward finds its graph freed (pytest --tb=short).
WHISPER_CHECKPOINT = f"""\
test_whisper_full_finetune.py:88: in test_full_finetune_gradients_match_unchecked_run
    run = _train(whisper_processor, checkpointing)
{MANUAL_LOOP}<env>/venv/lib/python3.11/site-packages/torch/autograd/function.py:325: in apply
    return user_fn(self, *args)
           ^^^^^^^^^^^^^^^^^^^^
<env>/venv/lib/python3.11/site-packages/torch/utils/checkpoint.py:331: in backward
    torch.autograd.backward(outputs_with_grad, args_with_grad)
<env>/venv/lib/python3.11/site-packages/torch/autograd/__init__.py:395: in backward
    _engine_run_backward(
<env>/venv/lib/python3.11/site-packages/torch/autograd/graph.py:979: in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine
E   RuntimeError: {SECOND_TIME}
"""

# The same failure through transformers' Seq2SeqTrainer (accelerate's backward), on a
# cell elsewhere (another folder, another torch's line numbers).
WHISPER_CHECKPOINT_TRAINER = f"""\
tiny.py:429: in train_seq2seq
    trainer.train()
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/transformers/trainer.py:2206: in train
    return inner_training_loop(
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/transformers/trainer.py:2548: in _inner_training_loop
    tr_loss_step = self.training_step(model, inputs, num_items_in_batch)
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/accelerate/accelerator.py:2473: in backward
    loss.backward(**kwargs)
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/_tensor.py:581: in backward
    torch.autograd.backward(
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/autograd/__init__.py:347: in backward
    _engine_run_backward(
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/autograd/graph.py:825: in _engine_run_backward
    return Variable._execution_engine.run_backward(
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/autograd/function.py:307: in apply
    return user_fn(self, *args)
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/utils/checkpoint.py:320: in backward
    torch.autograd.backward(outputs_with_grad, args_with_grad)
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/autograd/__init__.py:347: in backward
    _engine_run_backward(
../../envs/9f0c1d2e/venv/lib/python3.11/site-packages/torch/autograd/graph.py:825: in _engine_run_backward
    return Variable._execution_engine.run_backward(
E   RuntimeError: {SECOND_TIME}
"""

# The same message from another cause: unsloth_zoo's own checkpointing (2025.11.2),
# as a script prints it (a Python traceback on stderr).
UNSLOTH_ZOO_SCRIPT = f"""\
Traceback (most recent call last):
  File "/home/ci/repro/whisper_lora.py", line 41, in <module>
    loss.backward()
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/torch/_tensor.py", line 623, in backward
    torch.autograd.backward(
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 395, in backward
    _engine_run_backward(
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/torch/autograd/graph.py", line 979, in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/torch/autograd/function.py", line 325, in apply
    return user_fn(self, *args)
           ^^^^^^^^^^^^^^^^^^^^
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/unsloth_zoo/gradient_checkpointing.py", line 598, in backward
    torch.autograd.backward(outputs_with_grad, args_with_grad)
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 395, in backward
    _engine_run_backward(
  File "/opt/envs/ab12/venv/lib/python3.11/site-packages/torch/autograd/graph.py", line 979, in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: {SECOND_TIME}
"""

# test_peft_trainer_checkpointing.py on transformers 4.46.3: no input requires grad,
# so the loss has no graph (another message, the same route as the first).
NO_GRAD_FN = f"""\
{MANUAL_LOOP}E   RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
"""

# test_whisper_lora.py: LoRA matrices without gradient, said by the case's own assert.
NO_LORA_GRADIENT = """\
test_whisper_lora.py:136: in test_lora_gets_gradients_when_checkpointing_is_enabled_first
    _assert_trains_like_reference(run, reference)
test_whisper_lora.py:99: in _assert_trains_like_reference
    assert got == expected, f"{part}, first micro-step: " + tiny.describe_missing(expected, got)
E   AssertionError: encoder, first micro-step: 4 of 4 LoRA matrices got no gradient: base_model.model.model.encoder.layers.0.self_attn.q_proj.lora_B.default.weight
E   assert set() == {'base_model....fault.weight'}
E     Use -v to get more diff
"""


def varied(text: str, *, lines: int, folder: str, address: str = "0x7f3a2c1d9e80") -> str:
    """The same failure as another run writes it: line numbers moved, another cell."""
    text = re.sub(r"(\.py:|line )(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) + lines}", text)
    return text.replace("<env>/venv", folder).replace("0x7f00deadbeef", address)
