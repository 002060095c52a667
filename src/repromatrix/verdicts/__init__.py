"""Stage 5: judging, pure. Reads stored results, runs nothing; judging again with
another registry or baseline gives new verdicts from the same results.

knownissues.py   cases/known_issues.yaml: which failures are expected, and where it is
transitions.py   where a case changes outcome between neighbours, what a bisect holds
judge.py         statuses, combination verdicts, the summary and its exit status
"""

from repromatrix.verdicts.judge import case_repro, exit_code, is_fixed, is_regression, judge
from repromatrix.verdicts.knownissues import Registry, RegistryLocation, load_registry
from repromatrix.verdicts.transitions import changed_packages, held_pins

__all__ = [
    "Registry",
    "RegistryLocation",
    "case_repro",
    "changed_packages",
    "exit_code",
    "held_pins",
    "is_fixed",
    "is_regression",
    "judge",
    "load_registry",
]
