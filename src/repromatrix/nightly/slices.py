"""A tier as GitHub Actions jobs (``repromatrix ci-matrix --tier nightly``).

GitHub refuses a matrix of more than 256 jobs, and a workflow cannot make jobs on
the fly, so nightly.yml has a fixed number of slice jobs (``slice_0`` ..), each
running one slice as its own matrix. A slice is a list of jobs, each job an object
``{"combinations": [ids...], "runs-on": ...}``:

- a job runs one combination while the tier fits the slices that way, else several:
  ``cells_per_job`` (a tier setting), or when absent the fewest per job that fit;
- combinations with different runners never share a job (``runner:``: a scale-set
  name, a list of labels, or ``{group, labels}``; each job's ``runs-on`` is written in
  that shape), and neither do combinations of different torch pins, so that a job
  fetches one torch at most (with a cold cache; none with a warm one);
- jobs keep matrix order within a runner, sizes as even as possible; the jobs are cut
  into at most ``count`` slices of at most ``size``, as even as possible, in order; the
  unused slices are empty and their slice jobs are skipped;
- ``max_parallel`` (a tier setting) is shared out between the slices used, each
  slice's ``strategy.max-parallel``.

The plan is a function of the matrix and these numbers alone, so ``merge --tier``
makes it again to name the job of a combination that no job reported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.matrix.model import Combination, TierSettings

GITHUB_MATRIX_LIMIT = 256
DEFAULT_SLICES = 4
# runs-on of a combination that names no runner (nightly.yml's default; its `runner`
# input and the NIGHTLY_RUNNER_LABELS variable replace it).
DEFAULT_RUNNER: Any = ["self-hosted", "linux", "gpu"]


@dataclass(frozen=True)
class Job:
    combinations: tuple[str, ...]
    runs_on: Any  # str | list[str] | {"group": ..., "labels": ...}: as matrix.yaml wrote it

    def output(self) -> dict[str, Any]:
        return {"combinations": list(self.combinations), "runs-on": self.runs_on}


def slices(ids: Sequence[Any], *, count: int, size: int = GITHUB_MATRIX_LIMIT) -> list[list[Any]]:
    """``ids`` cut into ``count`` lists (empty ones last), none longer than ``size``."""
    if count < 1 or size < 1:
        raise UserError(f"slices: need at least one slice of one job (got {count} x {size})")
    if len(ids) > count * size:
        raise UserError(
            f"the tier needs {len(ids)} jobs, more than {count} matrices of at most "
            f"{size} jobs each can run: add slice jobs to the workflow (and --slices) "
            "or raise cells_per_job"
        )
    used = max(1, math.ceil(len(ids) / size)) if ids else 0
    out: list[list[Any]] = []
    start = 0
    for index in range(used):
        # The first (len % used) slices take one more: sizes differ by one at most.
        length = len(ids) // used + (1 if index < len(ids) % used else 0)
        out.append(list(ids[start : start + length]))
        start += length
    return out + [[] for _ in range(count - used)]


def _groups(combos: Sequence[Combination], default: Any) -> list[tuple[Any, list[str]]]:
    """Combinations that may share a job (the same runner as matrix.yaml writes it, the
    same torch pin), groups in the order of their first combination, each in matrix
    order. The runner as written, not as resolved: the cut must not depend on the
    default runner, which merge --tier does not know."""
    found: dict[tuple[str | None, str], tuple[Any, list[str]]] = {}
    for combo in combos:
        runs_on = json.loads(combo.runner) if combo.runner is not None else default
        torch = combo.pin("torch")
        key = (combo.runner, str(torch) if torch is not None else "")
        found.setdefault(key, (runs_on, []))[1].append(combo.id)
    return list(found.values())


def _split(ids: list[str], per_job: int) -> list[list[str]]:
    """``ids`` in ceil(len / per_job) runs of sizes that differ by one at most."""
    jobs = math.ceil(len(ids) / per_job)
    return slices(ids, count=jobs, size=per_job)


def cells_per_job(groups: Sequence[tuple[Any, list[str]]], capacity: int) -> int:
    """The fewest combinations per job with which every group's jobs fit ``capacity``."""
    _enough_jobs(groups, capacity)
    largest = max((len(ids) for _, ids in groups), default=1)
    return next(
        per_job
        for per_job in range(1, largest + 1)
        if sum(math.ceil(len(ids) / per_job) for _, ids in groups) <= capacity
    )


def _enough_jobs(groups: Sequence[tuple[Any, list[str]]], capacity: int) -> None:
    if len(groups) > capacity:
        raise UserError(
            f"the tier's combinations need {len(groups)} jobs at least (one per runner and "
            f"torch pin), more than the workflow's {capacity}: add slice jobs (and --slices)"
        )


def plan(
    combos: Sequence[Combination],
    *,
    count: int = DEFAULT_SLICES,
    size: int = GITHUB_MATRIX_LIMIT,
    settings: TierSettings | None = None,
    default_runner: Any = None,
) -> list[list[Job]]:
    """The tier's jobs cut into ``count`` slices (see the module's docstring)."""
    if count < 1 or size < 1:
        raise UserError(f"slices: need at least one slice of one job (got {count} x {size})")
    default = DEFAULT_RUNNER if default_runner is None else default_runner
    groups = _groups(combos, default)
    per_job = settings.cells_per_job if settings and settings.cells_per_job else None
    if per_job is None:
        per_job = cells_per_job(groups, count * size)
    _enough_jobs(groups, count * size)
    jobs = [Job(tuple(part), runs_on) for runs_on, ids in groups for part in _split(ids, per_job)]
    position = {combo.id: i for i, combo in enumerate(combos)}
    jobs.sort(key=lambda job: position[job.combinations[0]])
    return slices(jobs, count=count, size=size)


def max_parallel(parts: Sequence[Sequence[Job]], limit: int | None) -> list[int]:
    """Each slice's strategy.max-parallel: ``limit`` shared out between the slices in
    use (one each at least: a slice cannot run none), else each slice's job count
    (GitHub's own default, all at once). An unused slice gets 1 (its job is skipped)."""
    used = [i for i, part in enumerate(parts) if part]
    out = [max(1, len(part)) for part in parts]
    if limit is None or not used:
        return out
    for rank, index in enumerate(used):
        share = limit // len(used) + (1 if rank < limit % len(used) else 0)
        out[index] = max(1, min(share, len(parts[index])))
    return out


# nightly-combination.yml names each job by its combinations, space-separated; GitHub
# shows about 100 characters of a name, so a longer one is cut here as there.
JOB_NAME_SHOWN = 90


def job_name(slice_index: int, job: Job) -> str:
    """A job as the run's page lists it under its slice job (``slice_1 / c0042 c0043``),
    with how many combinations it ran."""
    name = " ".join(job.combinations)
    if len(name) > JOB_NAME_SHOWN:
        name = name[: JOB_NAME_SHOWN - 1] + "…"
    count = len(job.combinations)
    return f"`slice_{slice_index} / {name}`" + (f" ({count} combinations)" if count > 1 else "")


def where_each_ran(parts: Sequence[Sequence[Job]]) -> dict[str, str]:
    """Combination id -> the name of the job that runs it (job_name)."""
    return {
        combination: job_name(s, job)
        for s, part in enumerate(parts)
        for job in part
        for combination in job.combinations
    }


def github_outputs(
    combos: Sequence[Combination],
    *,
    count: int,
    size: int,
    settings: TierSettings | None = None,
    default_runner: Any = None,
) -> dict[str, str]:
    """Step outputs: ``slice_N`` (a JSON list of jobs, for ``fromJSON`` in a slice's
    matrix), ``max_parallel_N`` (its strategy.max-parallel), ``total`` (combinations),
    ``jobs`` and ``all`` (every id, for the gathering job), and ``configured``:
    whether every job has a runner somebody named (the workflow's default runner,
    else each combination's own ``runner:``); a repository with none runs nothing and
    says so (nightly.yml), rather than queueing jobs no runner picks up."""
    parts = plan(combos, count=count, size=size, settings=settings, default_runner=default_runner)
    outputs = {
        f"slice_{i}": json.dumps([job.output() for job in part], separators=(",", ":"))
        for i, part in enumerate(parts)
    }
    limits = max_parallel(parts, settings.max_parallel if settings else None)
    outputs.update({f"max_parallel_{i}": str(limit) for i, limit in enumerate(limits)})
    outputs["total"] = str(len(combos))
    outputs["jobs"] = str(sum(len(part) for part in parts))
    outputs["all"] = json.dumps([c.id for c in combos], separators=(",", ":"))
    named = default_runner is not None or all(c.runner is not None for c in combos)
    outputs["configured"] = "true" if named else "false"
    return outputs
