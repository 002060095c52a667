"""The stored results: the contract between a run and everything that reads it.

schema.py    results.json's models, typed with the vocabulary (outcomes.py), its version
             and its readers; what it holds is documented there
folder.py    a results directory: atomic files, one run at a time, the previous run aside
gather.py    many results directories (one per CI job) into one
bulk.py      the cyclic collector paused while merge, judge and reports work on a
             whole matrix
"""

from repromatrix.execution._cell.signature import same_failure
from repromatrix.results.folder import (
    ResultsDir,
    read_combinations,
    write_combination,
    write_json_atomic,
    write_text_atomic,
)
from repromatrix.results.schema import (
    SCHEMA_VERSION,
    CaseChange,
    CaseResult,
    Change,
    CombinationResult,
    EnvironmentInfo,
    FailureSignature,
    Results,
    RunInfo,
    Summary,
    Transition,
    load_results,
    read_json,
    set_fields,
    utc_now,
    validate,
)

__all__ = [
    "SCHEMA_VERSION",
    "CaseChange",
    "CaseResult",
    "Change",
    "CombinationResult",
    "EnvironmentInfo",
    "FailureSignature",
    "Results",
    "ResultsDir",
    "RunInfo",
    "Summary",
    "Transition",
    "load_results",
    "read_combinations",
    "read_json",
    "same_failure",
    "set_fields",
    "utc_now",
    "validate",
    "write_combination",
    "write_json_atomic",
    "write_text_atomic",
]
