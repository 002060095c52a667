"""The live console says known-broken where that is the outcome: a case's line as it
finishes, and its combination's closing line, before any report is written. Nothing
is built or run: the environment store and the case runner are stand-ins."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from repromatrix import pipeline
from repromatrix.environment.request import Environment
from repromatrix.environment.store import EnvStore
from repromatrix.environment.uv import Interpreter
from repromatrix.execution.collect_env import HostProbe
from repromatrix.execution.runner import CaseRecord, CaseRun

LINK = "https://github.com/huggingface/transformers/issues/40000"
BROKEN = "test_lora.py::test_lora_gets_gradients[reentrant]"
OTHER = "test_lora.py::test_other"
OUTCOMES = {BROKEN: "failed", OTHER: "passed"}


class FakeRunner:
    """Reports every selected case as it 'finishes', as CaseRunner does."""

    def __init__(self, env, cases_root, *, on_case, **_kwargs) -> None:
        self.on_case = on_case

    def run(self, selection, records_path, **_kwargs) -> CaseRun:
        records = []
        for case_id, outcome in OUTCOMES.items():
            record = CaseRecord(id=case_id, outcome=outcome, seconds=1.5, message="boom")
            self.on_case(record)
            records.append(record)
        return CaseRun(cases=records, collected=list(OUTCOMES), interpreters=1)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cases").mkdir()
    # The cases the registry names exist (an entry for no case is refused up front).
    (tmp_path / "cases" / "test_lora.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('mode', ['reentrant'])\n"
        "def test_lora_gets_gradients(mode):\n    pass\n\n"
        "def test_other():\n    pass\n"
    )
    (tmp_path / "matrix.yaml").write_text(
        "schema: 1\npackages: [transformers]\ntiers:\n  t:\n"
        "    - {id: old, transformers: '4.52.4'}\n"
        "    - {id: new, transformers: '4.53.0'}\n"
    )
    (tmp_path / "cases" / "known_issues.yaml").write_text(
        f"- case: '{BROKEN}'\n  when: {{transformers: '>=4.53'}}\n  link: {LINK}\n"
    )

    def build(self, request, **_kwargs) -> Environment:
        version = request.pins[0].spec
        return Environment(
            root=tmp_path / "env",
            identity="0" * 16,
            python=Path(sys.executable),
            resolved={"transformers": str(version)},
            system={},
            reused=True,
            seconds=0.0,
            interpreter=Interpreter(sys.executable, "3.11.7", "CPython"),
        )

    monkeypatch.setattr(EnvStore, "build", build)
    monkeypatch.setattr(pipeline, "CaseRunner", FakeRunner)
    monkeypatch.setattr(HostProbe, "collect", lambda *_args: None)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def test_a_registered_failure_says_known_broken_as_it_finishes(project: Path) -> None:
    said: list[str] = []
    options = pipeline.RunOptions(
        matrix=project / "matrix.yaml", tier="t", results=project / "out", reruns=0
    )
    _results, code = pipeline.run(options, say=said.append)
    assert code == 1  # 'old' fails outside the registered range: FAILING
    verdicts = next(i for i, line in enumerate(said) if line.startswith("verdicts:"))
    live = said[:verdicts]  # printed as the cases finished, before any verdict
    case_lines = [line.split() for line in live if BROKEN in line]
    assert case_lines == [
        ["failed", BROKEN, "1.5s"],  # transformers 4.52.4: outside the range
        ["known-broken", BROKEN, "1.5s", LINK],  # 4.53.0: inside it
    ]
    # the unexpected failure's error line, under it, as it happens; none for known-broken
    assert [line.strip() for line in live if line.strip().startswith("boom")] == ["boom"]
    closing = [line.strip() for line in live if line.strip().startswith("->")]
    assert closing == ["-> failed", f"-> known-broken (1 failing: {LINK})"]
    assert "verdicts: 1 FAILING, 1 KNOWN-BROKEN (exit status 1)" in said


def test_a_failure_says_its_error_once_a_skip_its_reason_and_ids_keep_brackets() -> None:
    said: list[str] = []
    lines = pipeline.CaseLines(said.append, lambda _case_id: None)
    failed = CaseRecord(id="t.py::t[reentrant]", outcome="failed", seconds=0.5,
                        error_type="RuntimeError", message="Trying to backward\nmore")  # fmt: skip
    lines(failed)
    lines(failed)  # its rerun
    lines(CaseRecord(id="t.py::u", outcome="skipped", message="needs unsloth; it is not installed"))
    assert said == [
        "    failed       t.py::t[reentrant]  0.5s",
        "        RuntimeError: Trying to backward",
        "    failed       t.py::t[reentrant]  0.5s (rerun)",
        "    skipped      t.py::u  0.0s  (needs unsloth; it is not installed)",
    ]
