"""results.json, rewritten with the verdict fields (the run wrote it without them).

Fields are added, never renamed; whatever the file had that this version does not
know is kept (the models allow extra fields). Every string is redacted once more on
the way out (write_json_atomic: value by value wherever the text may hold a secret):
results may come from an older run or another machine.
"""

from __future__ import annotations

from pathlib import Path

from repromatrix.results import Results, write_json_atomic
from repromatrix.results.bulk import without_cycle_collection

FILE_NAME = "results.json"


@without_cycle_collection
def write(results: Results, folder: Path) -> Path:
    path = Path(folder) / FILE_NAME
    write_json_atomic(path, results)
    return path
