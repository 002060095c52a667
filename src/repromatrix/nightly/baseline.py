"""Last night's results, the baseline of tonight's verdicts: the newest earlier
completed run of the nightly workflow that still has its ``nightly-results``
artifact (they expire after 30 days), downloaded and read once here, so that
``report`` and ``triage`` either both get a baseline they can read or both judge
without one, and the issue says which and why.

Every way of not having one is a line, never a failure: a first night, expired
artifacts, a gh that cannot list or download (not authenticated, rate limited), a
corrupt file or one of another results schema.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.gh import GitHub
from repromatrix.results import load_results

ARTIFACT = "nightly-results"


@dataclass(frozen=True)
class Baseline:
    found: bool
    note: str  # what was used, or why there is none (one line)
    run: int | None = None


def fetch_baseline(
    client: GitHub,
    *,
    into: Path,
    workflow: str,
    branch: str | None,
    this_run: int | None,
    tries: int = 5,
) -> Baseline:
    """Download the newest readable baseline into ``into`` (emptied first)."""
    try:
        runs = [r for r in client.completed_runs(workflow, branch=branch) if r != this_run]
    except UserError as err:
        return Baseline(False, f"no baseline: listing earlier runs failed ({err})")
    if not runs:
        return Baseline(False, "no baseline: no earlier completed nightly run (a first night)")
    problems = []
    for run in runs[:tries]:
        shutil.rmtree(into, ignore_errors=True)
        try:
            client.download(run, name=ARTIFACT, into=into)
        except UserError as err:
            problems.append(f"run {run}: {err}")
            continue
        if not (into / "results.json").is_file():
            problems.append(f"run {run}: its {ARTIFACT} artifact has no results.json")
            continue
        try:
            load_results(into)
        except UserError as err:
            # A corrupt baseline judges nothing: tonight is judged alone, and says so.
            shutil.rmtree(into, ignore_errors=True)
            return Baseline(
                False, f"no baseline: run {run}'s {ARTIFACT} cannot be read ({err})", run
            )
        return Baseline(True, f"baseline: run {run}", run)
    shutil.rmtree(into, ignore_errors=True)
    return Baseline(False, "no baseline: " + "; ".join(problems)[:500])
