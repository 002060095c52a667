"""TRL's SFTTrainer + peft_config=LoraConfig(...) + SFTConfig(gradient_checkpointing=True).

Symptom as users saw it. The TRL recipe for LoRA fine-tuning - SFTTrainer(model,
args=SFTConfig(gradient_checkpointing=True), peft_config=LoraConfig(...)) - has failed
in two ways:

- in one process, the first backward dies with "element 0 of tensors does not require
  grad and does not have a grad_fn" after torch's "None of the inputs have
  requires_grad=True" warning, or trains the adapters silently not at all:
  https://github.com/huggingface/peft/issues/2125 (=
  https://github.com/huggingface/transformers/issues/33930),
  https://github.com/huggingface/transformers/issues/26334 (SFTTrainer, checkpointing
  enabled after the PeftModel is made), https://github.com/huggingface/trl/issues/3089
  (GRPOTrainer, the same mechanism), https://github.com/huggingface/transformers/issues/42489
  (the HF Trainer underneath, filed by a TRL maintainer);
- on several processes (DDP), the first backward dies with "RuntimeError: Expected to mark
  a variable ready only once ... Parameter at index N with name ...lora_B.default.weight
  has been marked as ready twice": https://github.com/huggingface/trl/issues/4782 (PEFT
  with the trainers' defaults, fixed in TRL by https://github.com/huggingface/trl/pull/4811,
  which makes use_reentrant=False TRL's default), https://github.com/huggingface/trl/issues/921,
  https://github.com/huggingface/trl/issues/815, https://github.com/huggingface/trl/issues/831,
  https://github.com/huggingface/peft/issues/301,
  https://github.com/huggingface/transformers/issues/23728, and under them all
  https://github.com/pytorch/pytorch/issues/24005 (open since 2019).

Why. One process: reentrant checkpointing (transformers' default before 5.0.0) only
backpropagates into a checkpointed layer whose input requires grad; with a frozen base
only enable_input_require_grads makes the embedding output require grad. SFTTrainer
enables checkpointing on the base model and installs that hook before get_peft_model
whenever use_reentrant is not False (trl 0.12 in SFTTrainer.__init__, later in
prepare_peft_model), which is why these cases pass in one process where the plain HF
Trainer of test_peft_trainer_checkpointing.py fails. DDP: the HF Trainer wraps the model
with find_unused_parameters=True unless told otherwise when the model is not a
PreTrainedModel - and a PeftModel is not -
(transformers' Trainer._wrap_model; it sets False only for a PreTrainedModel with
checkpointing on, https://github.com/huggingface/transformers/pull/13961). DDP then walks
the graph after forward and marks the adapters inside a reentrant checkpoint (run under
no_grad) as unused = ready; the recomputation in backward fires their hooks a second
time. test_ddp_checkpoint.py has the same conflict in plain torch.

What these cases assert: the user's expectation - two optimizer steps complete, the
logged losses are finite, every LoRA A and B matrix has changed (AdamW moves every
matrix with a non-zero gradient; B starts at zero, so A moves only if the second step
reached it), and under DDP both ranks end with the same adapters. A failure is the bug
in the combination at hand; known_issues.yaml says where it is known.

The DDP cases start two ranks from a forkserver that imports torch + transformers + trl
once for the module (as test_ddp_checkpoint.py does); each rank gets the environment
torchrun would give it (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), which accelerate
reads, and trains with SFTConfig(use_cpu=True, ddp_backend="gloo"). Bounded: a timeout on
process-group init and collectives, a deadline on the results and the joins.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import ranks
import trl_sft

WORLD_SIZE = 2
GROUP_TIMEOUT_SECONDS = 60  # SFTConfig(ddp_timeout=...): init and every collective
DEADLINE_SECONDS = 150  # results and joins; includes the forkserver's one import of trl

pytestmark = pytest.mark.requires("trl>=0.12", "peft>=0.13", "transformers>=4.46")

# How a user turns checkpointing on in SFTConfig: trl's / transformers' default, or an
# explicit use_reentrant in gradient_checkpointing_kwargs.
CHECKPOINTING = [
    pytest.param(None, id="default"),
    pytest.param({"use_reentrant": True}, id="reentrant"),
    pytest.param({"use_reentrant": False}, id="non-reentrant"),
]


@pytest.mark.parametrize("checkpointing_kwargs", CHECKPOINTING)
def test_sft_trainer_trains_lora_with_checkpointing(tmp_path, checkpointing_kwargs):
    """One process: SFTTrainer(peft_config=LoraConfig(...)), gradient_checkpointing=True."""
    outcome = trl_sft.train(tmp_path, checkpointing_kwargs)
    problems = trl_sft.problems(outcome)
    assert not problems, "; ".join(problems)


@pytest.fixture(scope="module")
def forkserver():
    """A forkserver that imports torch + transformers + trl once for every rank of
    every DDP case in this module; stopped when the module is done."""
    with ranks.forkserver(trl_sft.PRELOAD) as context:
        yield context


def _ddp(context, workdir: Path, checkpointing_kwargs, find_unused) -> dict[int, dict]:
    """WORLD_SIZE ranks of trl_sft.ddp_rank; {rank: its report}."""
    return ranks.gather(
        context,
        trl_sft.ddp_rank,
        lambda rank, port, results: (
            rank,
            WORLD_SIZE,
            port,
            str(workdir),
            checkpointing_kwargs,
            find_unused,
            GROUP_TIMEOUT_SECONDS,
            results,
        ),
        world_size=WORLD_SIZE,
        deadline_seconds=DEADLINE_SECONDS,
    )


# (gradient_checkpointing_kwargs, ddp_find_unused_parameters); None: left unset.
DDP_SCENARIOS = [
    # Everything as trl and transformers default it (trl#4782): the Trainer picks
    # find_unused_parameters=True for a PeftModel.
    pytest.param((None, None), id="defaults"),
    # The explicit combination of the issues above: use_reentrant=True together with
    # ddp_find_unused_parameters=True.
    pytest.param(({"use_reentrant": True}, True), id="reentrant-find-unused"),
    # The control: non-reentrant checkpointing records the graph in forward, DDP sees
    # the adapters; expected to train on every release.
    pytest.param(({"use_reentrant": False}, True), id="non-reentrant-find-unused"),
]


@pytest.mark.distributed
@pytest.mark.parametrize("scenario", DDP_SCENARIOS)
def test_sft_trainer_trains_lora_with_checkpointing_under_ddp(forkserver, tmp_path, scenario):
    """Two ranks (gloo, CPU) of the same recipe. Expected to train like one process; the
    known failure is "Expected to mark a variable ready only once"."""
    checkpointing_kwargs, find_unused = scenario
    reports = _ddp(forkserver, tmp_path, checkpointing_kwargs, find_unused)
    for rank, report in reports.items():
        assert report["world_size"] == WORLD_SIZE, f"rank {rank}: not distributed: {report}"
        if report["stage"] != "done":
            # The traceback's frames; its last line is the error, shown first.
            frames = report["traceback"].rsplit(f"{report['error_type']}: ", 1)[0]
            pytest.fail(f"rank {rank}: {report['error_type']}: {report['error']}\n{frames}")
        problems = trl_sft.problems(report)
        assert not problems, f"rank {rank}: " + "; ".join(problems)
    assert reports[0]["fingerprint"] == reports[1]["fingerprint"], (
        "the ranks ended with different adapters: DDP did not synchronise them"
    )
