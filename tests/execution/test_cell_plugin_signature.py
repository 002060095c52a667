"""The cell plugin signs each failing case where it fails, from the live exception, and
the runner carries the signature (secrets masked, its key recomputed). A tiny pytest
run with the plugin, over a stand-in "installed" package: no torch, no cell build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repromatrix.errors import UserError
from repromatrix.execution._cell.signature import (
    Signature,
    same_failure,
    signature_of_traceback,
)
from repromatrix.execution.runner import PLUGIN, PLUGIN_DIR, CaseRecord, check_records

# Stands in for torch's checkpoint and for another package's: two places that raise the
# same message, with what varies between runs (a step number, an address) in it.
STACK = """\
def checkpoint_backward(step):
    raise RuntimeError(
        f"Trying to backward through the graph a second time (step {step}, "
        f"tensor at {hex(id(object()))})"
    )


def zoo_backward(step):
    raise RuntimeError(
        f"Trying to backward through the graph a second time (step {step}, "
        f"tensor at {hex(id(object()))})"
    )
"""

CASES = {
    "test_whisper.py": """
        import fakestack
        import pytest

        def test_full_finetune():
            fakestack.checkpoint_backward(3)

        def test_passes():
            pass

        @pytest.fixture
        def broken():
            raise OSError("fixture broke at /tmp/run-1/cache")

        def test_setup_error(broken):
            pass

        def test_skips():
            pytest.skip("needs a GPU")
    """,
    "test_trainer.py": """
        import fakestack

        # another case, file and line reaching the same raise
        def helper():
            return fakestack.checkpoint_backward(41)

        def test_trainer():
            helper()

        def test_zoo():
            fakestack.zoo_backward(3)
    """,
    "test_broken_import.py": """
        import no_such_module_here
    """,
}


def _run_cases(tmp_path: Path, *extra: str) -> dict[str, dict]:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    (site / "fakestack").mkdir(parents=True)
    (site / "fakestack" / "__init__.py").write_text(STACK)
    cases = tmp_path / "cases"
    cases.mkdir()
    for name, body in CASES.items():
        (cases / name).write_text(textwrap.dedent(body))
    records = tmp_path / "records.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(PLUGIN_DIR), str(site)]), REPROMATRIX_RECORDS=str(records)
    )
    subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", PLUGIN, "-p", "no:cacheprovider", "-q"),
            *("--tb=short", "--continue-on-collection-errors", "--rootdir", str(cases), *extra),
        ],
        cwd=cases,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    events = [json.loads(line) for line in records.read_text().splitlines()]
    return {e["id"].split("::")[-1]: e for e in events if e["event"] == "end"}


@pytest.fixture(scope="module", params=[(), ("-n", "1")], ids=["one-process", "xdist"])
def ends(request, tmp_path_factory) -> dict[str, dict]:
    """Each case's "end" record: in one process, and through xdist's workers (which
    hand the controller each report as JSON)."""
    return _run_cases(tmp_path_factory.mktemp("cell"), *request.param)


def test_each_failing_case_is_signed_where_it_fails(ends) -> None:
    signed = {name: e.get("signature") for name, e in ends.items()}
    assert signed["test_passes"] is None and signed["test_skips"] is None

    whisper, trainer, zoo = (
        Signature.from_dict(signed[name])
        for name in ("test_full_finetune", "test_trainer", "test_zoo")
    )
    assert whisper.frames == ("fakestack/__init__.py:checkpoint_backward",)
    assert whisper.exception == "RuntimeError"
    assert whisper.message == (
        "Trying to backward through the graph a second time (step <n>, tensor at <hex>)"
    )
    # another case, another line, another step and address: one cause
    assert same_failure(whisper, trainer)
    # the same message raised elsewhere: another cause
    assert not same_failure(whisper, zoo)
    assert signed["test_full_finetune"]["key"] == whisper.key  # as written, recomputable

    setup = Signature.from_dict(signed["test_setup_error"])
    assert (setup.exception, setup.message) == ("OSError", "fixture broke at <path>")
    collection = Signature.from_dict(signed["test_broken_import.py"])
    assert collection.exception == "ModuleNotFoundError"
    assert collection.message == "No module named 'no_such_module_here'"


def test_the_stored_traceback_gives_the_live_signature_back(ends) -> None:
    """Records written before signatures are signed from their text: the same key."""
    for name in ("test_full_finetune", "test_trainer", "test_zoo", "test_setup_error"):
        live = Signature.from_dict(ends[name]["signature"])
        assert signature_of_traceback(ends[name]["traceback"]) == live, name


# --------------------------------------------------------------------------- runner


def _event(**fields) -> dict:
    return {"event": "end", "id": "test_x.py::test_x", "outcome": "failed", **fields}


def test_the_runner_masks_secrets_in_a_signature_and_recomputes_its_key(monkeypatch) -> None:
    monkeypatch.setenv("CANARY_TOKEN", "hunter2-canary-value")
    stored = Signature.of("ValueError", ["peft/x.py:f"], "token hunter2-canary-value refused")
    record = CaseRecord.from_event(_event(signature=stored.as_dict()))
    assert "hunter2" not in json.dumps(record.signature.as_dict())
    assert record.signature.frames == ("peft/x.py:f",)
    assert record.signature.key == Signature.of(*_parts(record.signature)).key
    assert record.signature.key != stored.key


def _parts(signature: Signature) -> tuple:
    return signature.exception, signature.frames, signature.message


def test_a_failure_recorded_without_a_signature_is_signed_by_the_runner() -> None:
    """An older records file, or what the harness records itself (a time-out, a crash)."""
    traceback = "t.py:3: in test_x\n    f()\nE   KeyError: 'lora_A'\n"
    old = CaseRecord.from_event(
        _event(error_type="KeyError", message="'lora_A'", traceback=traceback)
    )
    assert old.signature == signature_of_traceback(traceback)
    timed_out = CaseRecord.from_event(
        _event(outcome="timed-out", error_type="timed-out", message="no result after 300 s; killed")
    )
    assert _parts(timed_out.signature) == ("timed-out", (), "no result after <n> s; killed")
    passed = CaseRecord.from_event(_event(outcome="passed"))
    assert passed.signature is None


def test_a_records_line_with_a_malformed_signature_is_refused_in_one_line(tmp_path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps(_event(signature={"frames": "not a list"})) + "\n")
    with pytest.raises(UserError, match=r"records.jsonl:1: signature: .* is not a signature"):
        check_records(records)
