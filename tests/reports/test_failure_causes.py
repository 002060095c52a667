"""New failures grouped by cause (signature key), where they are reported: summary.md
(and so the step summary), the tracking issue and the nightly's console lines; and
results files written before signatures, read and grouped alike."""

from __future__ import annotations

import json

import pytest
from support.reportdata import case, combination, results, versions
from support.tracebacks import (
    UNSLOTH_ZOO_SCRIPT,
    WHISPER_CHECKPOINT,
    WHISPER_CHECKPOINT_TRAINER,
    varied,
)

from repromatrix.errors import UserError
from repromatrix.execution._cell.signature import signature_of_traceback
from repromatrix.nightly import tracking
from repromatrix.reports import markdown
from repromatrix.reports.view import View
from repromatrix.results import FailureSignature, Results, load_results, write_json_atomic
from repromatrix.verdicts import judge
from repromatrix.verdicts.causes import by_cause, new_failures

WHISPER = "test_whisper_full_finetune.py::test_full_finetune_gradients_match_unchecked_run"
TRAINER = "test_whisper_full_finetune.py::test_seq2seq_trainer_full_finetune"
ZOO = "test_unsloth_zoo_checkpointing.py::test_whisper_lora_unsloth_checkpointing"


def _failing(case_id: str, traceback: str, *, signed: bool = True, **extra):
    """A failing case as the run stores it: signed in the cell, or (``signed=False``)
    as a file written before signatures holds it."""
    one = case(case_id, "failed", **extra)
    one.traceback = traceback
    one.signature = FailureSignature.of(signature_of_traceback(traceback)) if signed else None
    return one


def _night(*, signed: bool = True) -> Results:
    """Five transformers releases: torch's checkpoint fails the Whisper cases on three
    (the same cause through two routes, each cell in its own folder with its own line
    numbers), unsloth_zoo's checkpointing fails on two with the same message."""
    ladder = []
    for n, version in enumerate(["4.53.0", "4.54.1", "4.55.4"]):
        whisper = varied(WHISPER_CHECKPOINT, lines=n * 7, folder=f"/envs/{n}a/venv")
        ladder.append(
            combination(
                f"tf{version}",
                versions(version),
                [
                    _failing(WHISPER, whisper, signed=signed),
                    _failing(TRAINER, WHISPER_CHECKPOINT_TRAINER, signed=signed),
                ],
            )
        )
    for version in ["4.56.2", "4.57.1"]:
        zoo = varied(UNSLOTH_ZOO_SCRIPT, lines=3, folder="/srv/e/venv")
        ladder.append(
            combination(
                f"zoo-tf{version}",
                versions(version),
                [case(WHISPER, "passed"), _failing(ZOO, zoo, signed=signed)],
            )
        )
    stored = results(*ladder)
    judge(stored)
    return stored


def test_new_failures_group_by_signature_key() -> None:
    causes = by_cause(new_failures(_night()))
    assert [len(c.failures) for c in causes] == [6, 2]
    checkpoint, zoo = causes
    assert checkpoint.signature.frames == ["torch/utils/checkpoint.py:backward"]
    assert checkpoint.combinations == ["tf4.53.0", "tf4.54.1", "tf4.55.4"]
    assert checkpoint.cases == [WHISPER, TRAINER]
    assert zoo.signature.frames == ["unsloth_zoo/gradient_checkpointing.py:backward"]
    assert zoo.signature.message == checkpoint.signature.message  # one message, two causes


def test_summary_md_says_one_line_per_cause_with_the_combinations_it_covers(tmp_path) -> None:
    text = markdown.render(View.of(_night(), tmp_path))
    section = text.split("### New failures by cause\n\n", 1)[1].split("###", 1)[0]
    assert section.startswith("8 new failures, 2 causes.\n\n")
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == 2
    assert "(at torch/utils/checkpoint.py:backward)" in lines[0]
    assert "6 failures in 3 combinations (`tf4.53.0`, `tf4.54.1`, `tf4.55.4`)" in lines[0]
    assert "(at unsloth_zoo/gradient_checkpointing.py:backward)" in lines[1]
    assert "2 failures in 2 combinations (`zoo-tf4.56.2`, `zoo-tf4.57.1`)" in lines[1]


def test_known_broken_and_still_failing_cases_are_not_new(tmp_path) -> None:
    night = _night()
    baseline = _night()
    judge(night, baseline=baseline)  # everything failed last night too
    assert list(new_failures(night)) == []
    assert "### New failures by cause" not in markdown.render(View.of(night, tmp_path))


def test_a_results_file_written_before_signatures_is_read_and_grouped_alike(tmp_path) -> None:
    """Older files hold no signature: reading leaves it None (gathering parses nothing);
    grouping derives each from the stored traceback, to the keys the cell gives."""
    path = tmp_path / "results.json"
    older = _night(signed=False).dump()
    for combo in older["combinations"]:
        for one in combo["cases"]:
            one.pop("signature", None)  # as the writer before this field wrote it
    write_json_atomic(path, older)
    read = load_results(path)
    assert all(c.signature is None for combo in read.combinations for c in combo.cases)
    assert [(c.key, c.failures) for c in by_cause(new_failures(read))] == [
        (c.key, c.failures) for c in by_cause(new_failures(_night()))
    ]


def test_a_stored_signature_round_trips_and_a_forged_one_is_refused(tmp_path) -> None:
    path = tmp_path / "results.json"
    write_json_atomic(path, _night().dump())
    read = load_results(path)
    first = read.combinations[0].cases[0]
    assert first.signature == FailureSignature.of(signature_of_traceback(first.traceback))
    data = json.loads(path.read_text())
    data["combinations"][0]["cases"][0]["signature"]["message"] = "x" * 20_000
    write_json_atomic(path, data)
    with pytest.raises(
        UserError,
        match=r"combinations\[0\]\.cases\[0\]\.signature\.message: String should have at most",
    ):
        load_results(path)


def test_the_tracking_issue_lists_new_failures_one_line_per_cause() -> None:
    night = tracking.Night(_night(), date="2026-11-27", run="https://g/runs/1")
    update = tracking.follow(None, night)
    assert len(update.new) == 8
    assert len({f.signature for f in update.new}) == 2
    section = update.body.split("### New tonight", 1)[1].split("###", 1)[0]
    assert section.startswith(": 8 failures, 2 causes")
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == 2
    assert "checkpoint.py:backward" in lines[0] and "6 failed" in lines[0]
    assert all(f"`tf{v}`" in lines[0] for v in ("4.53.0", "4.54.1", "4.55.4"))
    assert "unsloth_zoo/gradient_checkpointing.py:backward" in lines[1]
    # the key travels in the issue's hidden state, so a later night can still group
    assert {f.signature for f in tracking.read_state(update.body).failures.values()} == {
        f.signature for f in update.new
    }
