"""What one CI job uploads, written for the merge and gather tests: each combination's
file under combinations/, and the job's results.json listing them."""

from __future__ import annotations

from pathlib import Path

from repromatrix.results import (
    CombinationResult,
    Results,
    RunInfo,
    write_combination,
    write_json_atomic,
)


def write_job(folder: Path, combinations: list[CombinationResult], run: RunInfo) -> Path:
    """FOLDER as the job that ran COMBINATIONS in RUN left it; returns FOLDER."""
    for combination in combinations:
        write_combination(folder, combination)
    results = Results(run=run, combinations=combinations)
    write_json_atomic(folder / "results.json", results.dump())
    return folder
