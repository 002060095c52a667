"""Helpers of the fault tests: a throw-away project (matrix.yaml + a cases folder
of tiny tests), the harness run as a real process in its own process group, and
readers for what it left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The cases write one ledger line each time they start (combination, case, pid):
# the ledger counts real executions, whatever the harness recorded.
WORK_CASES = """
import os
import pathlib
import time

LEDGER = pathlib.Path(__file__).resolve().parents[1] / "ledger.txt"


def note(case):
    with open(LEDGER, "a") as handle:
        handle.write(f"{os.environ.get('COMBO', '?')} {case} {os.getpid()}\\n")


def test_fast():
    note("test_fast")


def test_slow():
    note("test_slow")
    # slow.txt beside the ledger overrides the matrix's SLOW_SECONDS without
    # changing the cell's environment (so a resumed run keeps its records).
    override = LEDGER.parent / "slow.txt"
    seconds = override.read_text() if override.exists() else os.environ.get("SLOW_SECONDS", "2")
    time.sleep(float(seconds))


def test_after():
    note("test_after")
"""


@dataclass
class Project:
    root: Path
    env_dir: Path

    @property
    def matrix(self) -> Path:
        return self.root / "matrix.yaml"

    @property
    def results(self) -> Path:
        return self.root / "reports" / "latest"

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.txt"

    def command(self, *extra: str, results: Path | None = None) -> list[str]:
        return [
            sys.executable,
            "-m",
            "repromatrix",
            "run",
            "--matrix",
            str(self.matrix),
            "--tier",
            "t",
            "--results",
            str(results or self.results),
            "--env-dir",
            str(self.env_dir),
            *extra,
        ]

    def start(self, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        """The harness in a process group of its own (so it can be killed whole)."""
        return subprocess.Popen(
            self.command(*extra),
            cwd=self.root,
            env=harness_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            # As a terminal starts it: a shell that ran these tests in the background
            # (`cmd &` without job control) leaves SIGINT ignored, and Python then never
            # turns Ctrl-C into KeyboardInterrupt.
            preexec_fn=_default_sigint,
        )

    def run(self, *extra: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command(*extra),
            cwd=self.root,
            env=harness_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def executions(self) -> Counter[tuple[str, str]]:
        """(combination, case) -> how many times the case really started."""
        if not self.ledger.exists():
            return Counter()
        return Counter(tuple(line.split()[:2]) for line in self.ledger.read_text().splitlines())

    def pids(self, combo: str, case: str) -> list[int]:
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        return [int(p) for c, k, p in (ln.split() for ln in lines) if (c, k) == (combo, case)]


def harness_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src")
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update(extra or {})
    return env


def make_project(
    root: Path,
    env_dir: Path,
    matrix: str,
    cases: dict[str, str],
) -> Project:
    (root / "cases").mkdir(parents=True)
    (root / "cases" / "pytest.ini").write_text("[pytest]\n")
    for name, text in cases.items():
        (root / "cases" / name).write_text(textwrap.dedent(text))
    (root / "matrix.yaml").write_text(textwrap.dedent(matrix))
    return Project(root=root, env_dir=env_dir)


def three_combinations(slow_seconds: float = 2.0, packages: str = "iniconfig: latest") -> str:
    combos = "".join(
        f"""
            - id: {name}
              {packages}
              env: {{COMBO: {name}, SLOW_SECONDS: "{slow_seconds}"}}"""
        for name in ("a", "b", "c")
    )
    return f"""\
        schema: 1
        packages: [iniconfig, torch]
        tiers:
          t:{combos}
        """


def wait_for(condition: Callable[[], bool], timeout: float, what: str, step: float = 0.005) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_group(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes; /proc says which.
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        text = status.read_text()
        return "State:\tZ" not in text
    return True


def end_events(records: Path) -> Counter[str]:
    """How many times each case id has an 'end' record in a records file."""
    counts: Counter[str] = Counter()
    if not records.exists():
        return counts
    for line in records.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by the kill: the harness ignores it too
        if event.get("event") == "end":
            counts[event["id"]] += 1
    return counts


def combination_files(results: Path) -> dict[str, bytes]:
    folder = results / "combinations"
    if not folder.exists():
        return {}
    return {p.stem: p.read_bytes() for p in sorted(folder.glob("*.json"))}


def results_ids(results: Path) -> list[str]:
    data = json.loads((results / "results.json").read_text())
    return [c["id"] for c in data["combinations"]]


def case_statuses(results: Path, combo: str) -> dict[str, str]:
    data = json.loads((results / "combinations" / f"{combo}.json").read_text())
    return {c["id"]: c["status"] for c in data["cases"]}


def one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line, got: {stderr!r}"
    assert "Traceback" not in stderr
    return lines[0]


def ids_of(cases: Sequence[str], file: str = "test_work.py") -> list[str]:
    return [f"{file}::{c}" for c in cases]


def work_project(tmp_path: Path, env_dir: Path, slow_seconds: float = 2.0) -> Project:
    """The fault tests' project: combinations a, b, c each running WORK_CASES."""
    return make_project(
        tmp_path / "project",
        env_dir,
        three_combinations(slow_seconds=slow_seconds),
        {"test_work.py": WORK_CASES},
    )


def assert_every_case_passed_once(results: Path) -> None:
    """results.json has a, b and c, all passed, and each case of each has one end record."""
    data = json.loads((results / "results.json").read_text())
    assert [c["id"] for c in data["combinations"]] == ["a", "b", "c"]
    assert all(c["status"] == "passed" for c in data["combinations"])
    for combo in "abc":
        records = end_events(results / "records" / f"{combo}.jsonl")
        assert records == dict.fromkeys(ids_of(["test_fast", "test_slow", "test_after"]), 1)
