"""DistributedDataParallel with gradient checkpointing of a frozen base + trainable adapter.

Symptom (multi-GPU LoRA fine-tuning with ``gradient_checkpointing_enable()``; accelerate,
the HF Trainer): the first backward fails with ``RuntimeError: Expected to mark a variable
ready only once ... Parameter at index N with name ... has been marked as ready twice``.
https://github.com/huggingface/peft/issues/313, https://github.com/huggingface/accelerate/issues/2017,
https://github.com/huggingface/accelerate/issues/389,
https://github.com/huggingface/transformers/issues/23018,
https://github.com/pytorch/pytorch/issues/24005 (open since 2019).

Why: with ``find_unused_parameters=True`` DDP walks the autograd graph after forward and
marks every parameter it cannot reach as unused (ready, gradient zero). The reentrant
checkpoint (``use_reentrant=True``) runs its segment under ``no_grad`` in forward, so the
adapter inside it is unreachable and marked ready at once; in backward the segment is
recomputed and the adapter's gradient hook fires: ready a second time. DDP documents the
conflict in the message itself, so torch's answer is a loud error (not a hang, not wrong
gradients) - which is what these cases assert. The ways out, each of which must train
with the gradients of single-process training on the union of the ranks' batches:

- ``use_reentrant=False`` (the graph is recorded in forward: DDP sees the adapter);
- ``find_unused_parameters=False`` (what the HF Trainer sets when gradient checkpointing
  is on: https://github.com/huggingface/transformers/pull/13961);
- ``static_graph=True`` (the workaround the message suggests).

Two processes on CPU with gloo, started from a forkserver that imports torch once for
the whole module (DDP's constructor imports torch._dynamo: seconds per interpreter).
Bounded: a timeout on process-group init and collectives, a deadline on the results and
the joins; workers still alive at the end are terminated, then killed, and the forkserver
is stopped when the module is done.
"""

from __future__ import annotations

import datetime
import gc

import pytest
import ranks
import torch
import torch.multiprocessing
from torch.utils.checkpoint import checkpoint

pytestmark = pytest.mark.distributed

WORLD_SIZE = 2
STEPS = 2
LR = 0.5
GROUP_TIMEOUT = datetime.timedelta(seconds=30)  # init and every collective
DEADLINE_SECONDS = 150  # results and joins; includes the forkserver's one import of torch
READY_TWICE = "Expected to mark a variable ready only once"
# Imported once by the forkserver, so that each worker starts with them (this module
# included: it holds the workers' code).
PRELOAD = ["torch", "torch.distributed", "torch.nn.parallel", "torch._dynamo", __name__]


class AdaptedBlock(torch.nn.Module):
    """A frozen base with a LoRA-style adapter; the block runs under checkpoint."""

    def __init__(self, use_reentrant: bool) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Linear(6, 8)
        self.base = torch.nn.Linear(8, 8)
        self.lora_a = torch.nn.Linear(8, 2, bias=False)
        self.lora_b = torch.nn.Linear(2, 8, bias=False)
        torch.nn.init.normal_(self.lora_b.weight)  # non-zero, so lora_a learns from step 1
        self.head = torch.nn.Linear(8, 1)
        for frozen in (self.embed, self.base, self.head):
            frozen.requires_grad_(False)
        self.use_reentrant = use_reentrant

    def block(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.base(hidden) + self.lora_b(self.lora_a(hidden)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(x)
        # What transformers' enable_input_require_grads does for a frozen embedding: the
        # reentrant checkpoint only backpropagates into segments whose input needs grad.
        hidden.requires_grad_(True)
        return self.head(checkpoint(self.block, hidden, use_reentrant=self.use_reentrant))


def _batches(rank: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    return [torch.randn(4, 6, generator=generator) for _ in range(STEPS)]


def _loss(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(x).pow(2).mean()


def _trainable(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def _frozen(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}


def _train_rank(rank: int, port: int, scenario: dict, results) -> None:
    """One rank (runs in a worker process): STEPS DDP steps; puts (rank, outcome)."""
    import torch.distributed as dist

    torch.set_num_threads(1)  # two ranks on a small machine: no oversubscription
    outcome: dict = {}
    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=WORLD_SIZE,
            timeout=GROUP_TIMEOUT,
        )
        module = AdaptedBlock(scenario["use_reentrant"])
        frozen_before = _frozen(module)
        model = torch.nn.parallel.DistributedDataParallel(
            module,
            find_unused_parameters=scenario["find_unused_parameters"],
            static_graph=scenario.get("static_graph", False),
        )
        optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
        try:
            for x in _batches(rank):
                optimizer.zero_grad()
                _loss(model, x).backward()
                optimizer.step()
            # Plain lists: a tensor sent through torch.multiprocessing travels as a
            # shared-memory handle that dies with this process.
            outcome["trainable"] = {n: t.tolist() for n, t in _trainable(module).items()}
            frozen_after = _frozen(module)
            outcome["frozen_unchanged"] = all(
                torch.equal(frozen_before[n], frozen_after[n]) for n in frozen_before
            )
        except RuntimeError as error:
            outcome["error"] = f"{type(error).__name__}: {error}"
        # A DDP model outliving its process group can hang in its destructor after a
        # failed backward: drop it (and what refers to it) before destroying the group.
        del model, optimizer, module
        gc.collect()
        dist.destroy_process_group()
    except BaseException as error:  # anything else: report it rather than hang the parent
        outcome["crash"] = f"{type(error).__name__}: {error}"
    results.put((rank, outcome))


def _reference(scenario: dict) -> dict[str, torch.Tensor]:
    """Single-process training on both ranks' batches: DDP averages the ranks' gradients,
    i.e. takes the gradient of the mean of their losses."""
    module = AdaptedBlock(scenario["use_reentrant"])
    optimizer = torch.optim.SGD([p for p in module.parameters() if p.requires_grad], lr=LR)
    per_rank = [_batches(rank) for rank in range(WORLD_SIZE)]
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = sum(_loss(module, batches[step]) for batches in per_rank) / WORLD_SIZE
        loss.backward()
        optimizer.step()
    return _trainable(module)


@pytest.fixture(scope="module")
def forkserver():
    with ranks.forkserver(PRELOAD) as context:
        yield context


def _run(context, scenario: dict) -> dict[int, dict]:
    outcomes = ranks.gather(
        context,
        _train_rank,
        lambda rank, port, results: (rank, port, scenario, results),
        world_size=WORLD_SIZE,
        deadline_seconds=DEADLINE_SECONDS,
    )
    for rank, outcome in outcomes.items():
        assert "crash" not in outcome, f"rank {rank}: {outcome['crash']}"
    return outcomes


def test_reentrant_checkpoint_with_find_unused_parameters_raises(forkserver, record_property):
    outcomes = _run(forkserver, {"use_reentrant": True, "find_unused_parameters": True})
    errors = {rank: outcome.get("error", "") for rank, outcome in outcomes.items()}
    assert all(READY_TWICE in error for error in errors.values()), errors
    # The parameter named is the adapter's, recomputed inside the checkpoint.
    assert all("name lora_" in error for error in errors.values()), errors
    record_property("torch_error", errors[0])


FIXES = {
    "non-reentrant": {"use_reentrant": False, "find_unused_parameters": True},
    "no-unused-parameter-search": {"use_reentrant": True, "find_unused_parameters": False},
    "static-graph": {"use_reentrant": True, "find_unused_parameters": True, "static_graph": True},
}


@pytest.mark.parametrize("fix", list(FIXES))
def test_fixed_ddp_with_checkpointing_trains_like_one_process(forkserver, fix):
    scenario = FIXES[fix]
    outcomes = _run(forkserver, scenario)
    for rank, outcome in outcomes.items():
        assert "error" not in outcome, f"rank {rank}: {outcome['error']}"
        assert outcome["frozen_unchanged"], f"rank {rank}: a frozen parameter moved"

    initial = _trainable(AdaptedBlock(scenario["use_reentrant"]))
    want = _reference(scenario)
    for name, expected in want.items():
        assert not torch.equal(expected, initial[name]), f"{name}: the reference did not train"
        for rank, outcome in outcomes.items():
            got = torch.tensor(outcome["trainable"][name])
            assert torch.allclose(got, expected, rtol=1e-5, atol=1e-6), (
                f"rank {rank}, {name}: off the single-process result by "
                f"{(got - expected).abs().max().item():.3g}"
            )
