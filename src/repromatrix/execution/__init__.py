"""Stage 3: cases (or a script) inside one environment.

runner.py      pytest over cases/ in one interpreter: crash and timeout supervision, reruns
scheduler.py   --jobs N: combinations in threads, output blocks, a GPU group each
host.py        GPU presence, host description, the cases' commit
_cell/         the pytest plugins loaded inside a cell (stdlib, pytest, packaging)
"""

from repromatrix.execution.runner import CaseRecord, CaseRunner, run_script

__all__ = ["CaseRecord", "CaseRunner", "run_script"]
