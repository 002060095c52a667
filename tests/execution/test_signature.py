"""A failure's signature (execution/_cell/signature.py): one cause, one key, whatever
line numbers, addresses, folders and versions the texts hold; two causes, two keys.

The tracebacks are the repro families' own (support/tracebacks.py), varied the way
other runs vary them: another cell's folder, another torch's line numbers.
"""

from __future__ import annotations

import doctest
import importlib
import re
import sys
import traceback
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.tracebacks import (
    NO_GRAD_FN,
    NO_LORA_GRADIENT,
    SECOND_TIME,
    UNSLOTH_ZOO_SCRIPT,
    WHISPER_CHECKPOINT,
    WHISPER_CHECKPOINT_TRAINER,
    varied,
)

from repromatrix.execution._cell import signature as signature_module
from repromatrix.execution._cell.signature import (
    Signature,
    mask,
    same_failure,
    signature_of_exception,
    signature_of_traceback,
)


def test_the_doctests_hold() -> None:
    assert doctest.testmod(signature_module).failed == 0


def test_one_cause_is_one_key_across_line_numbers_folders_and_routes() -> None:
    first = signature_of_traceback(WHISPER_CHECKPOINT)
    assert first is not None
    assert first.exception == "RuntimeError"
    assert first.frames == ("torch/utils/checkpoint.py:backward",)
    assert first.message.startswith("Trying to backward through the graph a second time")
    moved = signature_of_traceback(
        varied(WHISPER_CHECKPOINT, lines=17, folder="/srv/cache/repromatrix/envs/77ab/venv")
    )
    trainer = signature_of_traceback(WHISPER_CHECKPOINT_TRAINER)
    assert same_failure(first, moved)
    # torch's own checkpoint is the innermost frame of cause on both routes
    assert same_failure(first, trainer)


def test_the_same_message_from_another_cause_has_another_key() -> None:
    torch_checkpoint = signature_of_traceback(WHISPER_CHECKPOINT)
    unsloth = signature_of_traceback(UNSLOTH_ZOO_SCRIPT)
    assert unsloth is not None
    assert unsloth.frames == ("unsloth_zoo/gradient_checkpointing.py:backward",)
    assert unsloth.message == torch_checkpoint.message
    assert not same_failure(torch_checkpoint, unsloth)
    keys = {
        signature_of_traceback(text).key
        for text in (WHISPER_CHECKPOINT, UNSLOTH_ZOO_SCRIPT, NO_GRAD_FN, NO_LORA_GRADIENT)
    }
    assert len(keys) == 4


def test_a_python_traceback_and_pytests_report_of_one_failure_agree() -> None:
    """A script's stderr and a case's stored report of the same raise: one key."""
    as_pytest = re.sub(
        r'^  File "(.+?)", line (\d+), in (\S+)$',
        r"\1:\2: in \3",
        UNSLOTH_ZOO_SCRIPT.replace("Traceback (most recent call last):\n", ""),
        flags=re.MULTILINE,
    ).replace(f"RuntimeError: {SECOND_TIME}", f"E   RuntimeError: {SECOND_TIME}")
    assert signature_of_traceback(as_pytest) == signature_of_traceback(UNSLOTH_ZOO_SCRIPT)


def test_of_a_chain_the_raised_exception_is_signed() -> None:
    chained = (
        NO_GRAD_FN.replace("E   ", "")
        + "\nThe above exception was the direct cause of the following exception:\n\n"
        + "tiny.py:9: in wrap\n    raise ValueError('training failed at step 12')\n"
        + "E   ValueError: training failed at step 12\n"
    )
    found = signature_of_traceback(chained)
    assert (found.exception, found.frames, found.message) == (
        "ValueError",
        (),
        "training failed at step <n>",
    )


def test_a_rewritten_assert_is_an_assertion_error() -> None:
    found = signature_of_traceback("test_x.py:3: in test_x\n    assert a == b\nE   assert 1 == 2\n")
    assert (found.exception, found.message) == ("AssertionError", "assert <n> == <n>")
    lora = signature_of_traceback(NO_LORA_GRADIENT)
    assert lora.exception == "AssertionError"
    assert "layers.<n>.self_attn" in lora.message


def test_text_without_an_error_has_no_signature() -> None:
    assert signature_of_traceback("") is None
    assert signature_of_traceback("collected 3 items\n3 passed in 0.1s\n") is None


# --------------------------------------------------------------------------- live


def _installed_package(root: Path, name: str, body: str) -> None:
    """A package as a cell installs it: under lib/pythonX.Y/site-packages."""
    package = root / "lib" / "python3.11" / "site-packages" / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(body)


def test_a_live_exception_and_its_printed_traceback_agree(tmp_path, monkeypatch) -> None:
    _installed_package(
        tmp_path,
        "fakestack",
        "class StackError(RuntimeError):\n    pass\n\n"
        "def step(n):\n    raise StackError(f'bad step {n} at {hex(id(n))}')\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path / "lib" / "python3.11" / "site-packages"))
    fakestack = importlib.import_module("fakestack")
    try:
        fakestack.step(3)
    except RuntimeError as error:
        live = signature_of_exception(error)
        text = "".join(traceback.format_exception(error))
    sys.modules.pop("fakestack", None)
    assert live.exception == "fakestack.StackError"
    assert live.frames == ("fakestack/__init__.py:step",)
    assert live.message == "bad step <n> at <hex>"
    assert signature_of_traceback(text) == live


# --------------------------------------------------------------------------- generated

_NUMBER = st.one_of(
    st.integers(0, 10**9).map(str),
    st.floats(0, 1e6, allow_nan=False, allow_infinity=False).map(lambda f: f"{f:.2f}"),
    st.tuples(*[st.integers(0, 99)] * 3).map(lambda v: ".".join(map(str, v))),
)
_HEX = st.integers(16**7, 16**12).map(hex)
_FOLDER = st.lists(
    st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=8),
    min_size=1,
    max_size=4,
).map(lambda parts: "/" + "/".join(parts))


@given(_NUMBER, _NUMBER, _HEX, _FOLDER, st.integers(1, 10**5))
def test_what_varies_between_runs_never_changes_the_key(a, b, address, folder, line) -> None:
    template = (
        '  File "{folder}/lib/python3.11/site-packages/peft/tuners/lora/layer.py", '
        "line {line}, in forward\n"
        "    result = self.base_layer(x)\n"
        "ValueError: expected {a} got {b} for <Param at {address}> in {folder}/data.bin\n"
    )
    text = "Traceback (most recent call last):\n" + template.format(
        folder=folder, line=line, a=a, b=b, address=address
    )
    reference = "Traceback (most recent call last):\n" + template.format(
        folder="/x", line="1", a="0", b="0", address="0x10000000"
    )
    assert signature_of_traceback(text).key == signature_of_traceback(reference).key


@given(st.text(max_size=300))
def test_masking_is_idempotent_and_bounded(text) -> None:
    once = mask(text)
    assert mask(once) == once
    assert len(once) <= signature_module.MESSAGE_CHARS
    assert "\n" not in once


@given(st.text(max_size=2000))
def test_any_text_gives_a_signature_or_none(text) -> None:
    found = signature_of_traceback(text)
    if found is not None:
        assert re.fullmatch(r"[0-9a-f]{12}", found.key)
        assert Signature.of(found.exception, found.frames, found.message) == found


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.15 GiB total)",
         "CUDA out of memory. Tried to allocate 1.50 GiB (GPU 3; 39.4 GiB total)"),
        ("size mismatch for lora_A.weight: copying a param with shape torch.Size([8, 384]) "
         "from checkpoint, the shape in current model is torch.Size([16, 384]).",
         "size mismatch for lora_A.weight: copying a param with shape torch.Size([4, 512]) "
         "from checkpoint, the shape in current model is torch.Size([8, 512])."),
        ("mat1 and mat2 shapes cannot be multiplied (2x384 and 512x384)",
         "mat1 and mat2 shapes cannot be multiplied (16x1024 and 768x1024)"),
        ("requires transformers>=4.56.2, but 4.55.0 is installed",
         "requires transformers>=4.57.0.dev0, but v4.56.1+local is installed"),
        ("cannot open /tmp/pytest-of-ci/pytest-3/test_x0/model.safetensors",
         "cannot open C:\\Users\\ci\\AppData\\Local\\Temp\\model.safetensors"),
        ("run 3f2a9c1e-77b0-4c8e-9a61-0d2b5e8f4a10 failed",
         "run 9e1d0c2b-1a2b-4c3d-8e9f-001122334455 failed"),
    ],
)  # fmt: skip
def test_messages_of_one_cause_mask_alike(a, b) -> None:
    assert mask(a) == mask(b)


def test_messages_of_different_causes_stay_apart() -> None:
    assert mask("expected dtype float16") != mask("expected dtype bfloat16")
    assert mask("Qwen2ForCausalLM has no attribute 'x'") != mask(
        "Qwen3ForCausalLM has no attribute 'x'"
    )


def test_a_message_of_megabytes_is_signed_from_its_first_kilobyte() -> None:
    huge = RuntimeError("x1y2z3w4" * 1_000_000 + "\nsecond line")
    signed = signature_of_exception(huge)
    assert len(signed.message) <= signature_module.MESSAGE_CHARS
    assert signed == signature_of_exception(RuntimeError("x1y2z3w4" * 200))
