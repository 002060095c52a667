"""A failure's signature: what a failing case died of, as a value that groups.

Modelled on Mozilla Socorro's crash signatures (normalised frames, a skip list and a
prefix list). A signature has three parts and a key:

- ``exception``: the exception's type, qualified as Python prints it
  (``RuntimeError``, ``torch.OutOfMemoryError``);
- ``frames``: where it was raised, as ``package/relative/file.py:function`` (no line
  numbers), innermost first, taken only from installed packages (site-packages,
  dist-packages). Frames of the harness and of pytest (``SKIPPED``), of torch's
  dispatch and autograd plumbing (``PLUMBING``), of the stdlib and of the cases
  themselves are left out. A frame on ``PREFIX`` (torch.nn and torch's operators:
  generic places many causes pass through) is kept and the next one is taken too; the
  first frame off that list ends the frames (Socorro's "prefix" rule). At most
  ``MAX_FRAMES``;
- ``message``: the first line of the exception's message with paths, hex addresses,
  tensor shapes, sizes, long ids, and numbers and versions masked (``MASKS``), bounded;
- ``key``: the first 12 hex digits of the sha256 of the three parts. Two failures
  with the same key died of the same cause, whatever line numbers, addresses,
  folders or versions their texts held.

Two roads give the same signature: ``signature_of_exception`` from a live exception
(the cell plugin, where the case fails) and ``signature_of_traceback`` from its text
(pytest's ``--tb=short`` report as results store it, or a Python traceback a script
wrote to stderr). ``same_failure`` is the one comparison.

Stdlib only: the cell plugin loads this file inside a cell, and the harness imports it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

MAX_FRAMES = 4
MESSAGE_CHARS = 200
# Masking reads at most this much of a message's first line, and a text at most its
# last TEXT_CHARS (where the raise is): a message of megabytes costs what 1 kB does.
MASKED_CHARS = 1000
TEXT_CHARS = 100_000
PART_CHARS = 200  # an exception name or a frame, at most
KEY_DIGITS = 12

# Installed code: everything after the last of these in a frame's path.
_INSTALLED = re.compile(r"^.*[\\/](?:site|dist)-packages[\\/]")

# Frames that never name a cause: the test runner and this harness (package-relative
# file prefixes).
SKIPPED = (
    "_pytest/",
    "pytest/",
    "pluggy/",
    "xdist/",
    "execnet/",
    "_hypothesis_pytestplugin.py",
    "repromatrix/",
    "repromatrix_",
)
# torch's plumbing between a call and the code that failed: how a module is called and
# how backward reaches the engine. These moved between torch releases (_call_impl,
# _wrapped_call_impl, _engine_run_backward), so keeping them would split one cause
# by torch version. (file prefix, function or "" for any)
PLUMBING = (
    ("torch/nn/modules/module.py", "_call_impl"),
    ("torch/nn/modules/module.py", "_wrapped_call_impl"),
    ("torch/autograd/__init__.py", ""),
    ("torch/autograd/graph.py", ""),
    ("torch/autograd/function.py", "apply"),
    ("torch/_tensor.py", "backward"),
    ("torch/utils/_contextlib.py", ""),
    ("torch/_dynamo/eval_frame.py", ""),
    ("torch/_compile.py", ""),
)
# Generic places many causes pass through (a layer's forward, an operator): kept, and
# the frame that called them is taken too.
PREFIX = (
    "torch/nn/modules/",
    "torch/nn/functional.py",
    "torch/nn/parameter.py",
    "torch/functional.py",
    "torch/_ops.py",
    "torch/_refs/",
    "torch/_prims/",
    "torch/_decomp/",
    "torch/overrides.py",
)

# What varies between runs of one cause, masked in this order (paths before the
# numbers they hold). Each is (pattern, replacement).
_PATH_CHARS = r"[^\s'\"`,;()\[\]{}<>]"
_OURS = "(?:path|hex|shape|size|id|n)"  # the masks' own tokens: never a folder's name
MASKS = (
    # absolute, home, relative-to-dot, drive-letter and <placeholder>/ paths
    (
        re.compile(
            rf"(?<![\w/.>])(?:[A-Za-z]:[\\/]|~[\\/]|\.{{1,2}}[\\/]|/|<(?!{_OURS}>)\w+>[\\/])"
            rf"{_PATH_CHARS}+"
        ),
        "<path>",
    ),
    # relative paths to a file: pkg/module.py
    (re.compile(r"(?<![\w/.])[\w.-]+(?:[\\/][\w.-]+)+\.[A-Za-z]{1,12}\b"), "<path>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<hex>"),
    # tensor shapes: torch.Size([2, 3]), [2, 3, 4], (2, 3), (4,), 2x3
    (re.compile(r"torch\.Size\(\[[^\]]*\]\)"), "<shape>"),
    (re.compile(r"[\[(]\s*-?\d+\s*(?:,\s*-?\d+\s*)+,?\s*[\])]|\(\s*-?\d+\s*,\s*\)"), "<shape>"),
    (re.compile(r"(?<![\w.])\d+(?:x\d+)+\b"), "<shape>"),
    # sizes: 20.00 MiB, 1.5 GiB, 512 bytes
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes)\b"), "<size>"),
    # long tokens mixing letters and at least three digits: run ids, temp names
    (re.compile(r"\b(?=(?:[A-Za-z_-]*\d){3})(?=[\w-]*[A-Za-z])[\w-]{8,}\b"), "<id>"),
    # numbers and versions: 3, 1.5e-05, 4.56.2, v2.13.0+cpu, 0.17.0.dev0
    (
        re.compile(
            r"(?<![A-Za-z_\d])v?\d+(?:\.\d+)*(?:[eE][-+]?\d+)?"
            r"(?:\.?(?:a|b|rc|dev|post)\d*)*(?:\+[A-Za-z0-9.]+)?(?![A-Za-z_\d])"
        ),
        "<n>",
    ),
)


def mask(text: str) -> str:
    """The first line of a message with what varies between runs masked, bounded.

    >>> mask("Tried to allocate 20.00 MiB (GPU 0; 79.15 GiB total capacity)")
    'Tried to allocate <size> (GPU <n>; <size> total capacity)'
    >>> mask("mat1 and mat2 shapes cannot be multiplied (2x384 and 512x384)")
    'mat1 and mat2 shapes cannot be multiplied (<shape> and <shape>)'
    >>> mask("expected torch.Size([2, 1500, 384]) but got [4, 3000]")
    'expected <shape> but got <shape>'
    >>> mask("No such file: '/home/me/envs/0a1b2c/lib/site-packages/x.json'")
    "No such file: '<path>'"
    >>> mask("<Tensor object at 0x7f3a2c1d9e80> needs transformers>=4.56.2, has v4.55.0")
    '<Tensor object at <hex>> needs transformers>=<n>, has <n>'
    >>> mask("layers.3.self_attn in float16 on cuda:0, Qwen2ForCausalLM kept")
    'layers.<n>.self_attn in float16 on cuda:<n>, Qwen2ForCausalLM kept'
    >>> mask("first line\\nsecond line")
    'first line'
    """
    line = next((ln for ln in text[:TEXT_CHARS].splitlines() if ln.strip()), "")[:MASKED_CHARS]
    for pattern, replacement in MASKS:
        line = pattern.sub(replacement, line)
    line = " ".join(line.split())
    if len(line) <= MESSAGE_CHARS:
        return line
    # Cut between words, so that masking the cut line again changes nothing.
    head = line[: MESSAGE_CHARS - 2]
    return (head[: head.rfind(" ")] if " " in head else head) + " …"


@dataclass(frozen=True)
class Signature:
    """A failure's normalised signature (see the module's docstring). Build it with
    ``Signature.of``, which normalises its parts; ``key`` is their hash."""

    exception: str
    frames: tuple[str, ...]
    message: str

    @classmethod
    def of(cls, exception: str | None, frames: Iterable[str], message: str | None) -> Signature:
        """A signature from raw parts: the message masked, every part bounded
        (normalising twice changes nothing).

        >>> s = Signature.of("RuntimeError", ["torch/utils/checkpoint.py:backward"],
        ...                  "Trying to backward through the graph a second time")
        >>> s.key == Signature.of(s.exception, s.frames, s.message).key
        True
        >>> len(s.key)
        12
        """
        name = " ".join(str(exception or "").split())[:PART_CHARS]
        kept = tuple(str(f)[:PART_CHARS] for f in frames)[:MAX_FRAMES]
        return cls(name, kept, mask(str(message or "")))

    @property
    def key(self) -> str:
        parts = json.dumps([self.exception, list(self.frames), self.message])
        return hashlib.sha256(parts.encode()).hexdigest()[:KEY_DIGITS]

    def as_dict(self) -> dict[str, Any]:
        """As records and results.json store it."""
        return {
            "key": self.key,
            "exception": self.exception,
            "frames": list(self.frames),
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Signature:
        """A stored signature, normalised again (its key recomputed from its parts)."""
        return cls.of(data.get("exception"), data.get("frames") or (), data.get("message"))

    def line(self) -> str:
        """One line for a person: ``RuntimeError: message (at file.py:function)``."""
        head = f"{self.exception}: {self.message}" if self.message else self.exception
        return head + (f" (at {self.frames[0]})" if self.frames else "")


def is_signature(stored: object) -> bool:
    """Whether a stored value can be read as a signature (None: none recorded).

    >>> is_signature({"exception": "E", "frames": ["a.py:f"], "message": "m"})
    True
    >>> is_signature({"exception": "E", "frames": "a.py:f"})
    False
    """
    if stored is None:
        return True
    if not isinstance(stored, dict):
        return False
    frames = stored.get("frames", [])
    return (
        all(isinstance(stored.get(key, ""), str) for key in ("exception", "message"))
        and isinstance(frames, list)
        and all(isinstance(frame, str) for frame in frames)
    )


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


def same_failure(a: _Keyed | None, b: _Keyed | None) -> bool:
    """Two failures with one cause: both have a signature and the keys agree. A
    failure that happens twice with the same signature is deterministic, not flaky.

    >>> a = Signature.of("RuntimeError", [], "boom at 0x7f00aa")
    >>> same_failure(a, Signature.of("RuntimeError", [], "boom at 0x7f11bb"))
    True
    >>> same_failure(a, Signature.of("ValueError", [], "boom at 0x7f00aa"))
    False
    >>> same_failure(a, None)
    False
    """
    return a is not None and b is not None and a.key == b.key


# --------------------------------------------------------------------------- frames


def installed_frame(path: str, function: str) -> str | None:
    """``package/file.py:function`` for a frame inside an installed package, None for
    any other frame (the stdlib, the cases, a script, generated code).

    >>> installed_frame("/x/venv/lib/python3.11/site-packages/torch/utils/checkpoint.py",
    ...                 "backward")
    'torch/utils/checkpoint.py:backward'
    >>> installed_frame("/usr/lib/python3.11/functools.py", "wrapper") is None
    True
    """
    match = _INSTALLED.match(path)
    if match is None:
        return None
    relative = path[match.end() :].replace("\\", "/")
    return f"{relative}:{function}"


def cause_frames(frames: Iterable[str]) -> tuple[str, ...]:
    """The signature's frames from installed frames, innermost first: skipped and
    plumbing frames left out, prefix frames kept until the first frame off the
    prefix list, which ends them.

    >>> cause_frames([
    ...     "torch/autograd/graph.py:_engine_run_backward",
    ...     "torch/autograd/__init__.py:backward",
    ...     "torch/utils/checkpoint.py:backward",
    ...     "accelerate/accelerator.py:backward",
    ... ])
    ('torch/utils/checkpoint.py:backward',)
    >>> cause_frames([
    ...     "torch/nn/functional.py:linear",
    ...     "torch/nn/modules/module.py:_call_impl",
    ...     "transformers/models/whisper/modeling_whisper.py:forward",
    ...     "transformers/trainer.py:training_step",
    ... ])
    ('torch/nn/functional.py:linear', 'transformers/models/whisper/modeling_whisper.py:forward')
    """
    kept: list[str] = []
    for frame in frames:
        file, _, function = frame.rpartition(":")
        if file.startswith(SKIPPED) or any(
            file.startswith(where) and name in ("", function) for where, name in PLUMBING
        ):
            continue
        kept.append(frame)
        if not file.startswith(PREFIX) or len(kept) == MAX_FRAMES:
            break
    return tuple(kept)


# --------------------------------------------------------------------------- live


def exception_name(kind: type[BaseException]) -> str:
    """The type as Python's traceback prints it: qualified unless builtin or __main__."""
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", kind.__name__)
    return name if module in ("builtins", "__main__", "") else f"{module}.{name}"


def signature_of_exception(error: BaseException) -> Signature:
    """The signature of a live exception (where it was raised, from its traceback)."""
    frames: list[str] = []
    tb: TracebackType | None = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        frame = installed_frame(code.co_filename, code.co_name)
        if frame is not None:
            frames.append(frame)
        tb = tb.tb_next
    try:
        message = str(error)
    except Exception:  # a __str__ that fails says nothing either way
        message = ""
    return Signature.of(exception_name(type(error)), cause_frames(reversed(frames)), message)


# --------------------------------------------------------------------------- text

# pytest --tb=short: "path:123: in function"; a Python traceback: File "path", line 1, in f
_PYTEST_FRAME = re.compile(r"^(?P<path>\S.*?):\d+: in (?P<function>\S+)\s*$")
_PYTHON_FRAME = re.compile(r'^\s*File "(?P<path>.+?)", line \d+, in (?P<function>\S+)\s*$')
_CHAINED = re.compile(
    r"^(?:The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:)\s*$",
    re.MULTILINE,
)
_NAMED = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_ERROR_LINE = re.compile(r"^E(?: {1,8}(?P<text>.*))?$")


def signature_of_traceback(text: str) -> Signature | None:
    """The signature of a failure from its stored text: pytest's ``--tb=short`` report
    (frames as ``path:N: in f``, the error on ``E`` lines) or a Python traceback
    (``File "path", line N, in f`` lines, then ``Type: message``). Of a chain of
    exceptions, the last one (the one that was raised). None when the text holds no
    error line.

    >>> signature_of_traceback('''Traceback (most recent call last):
    ...   File "/e/lib/python3.11/site-packages/peft/tuners/lora/layer.py", line 9, in forward
    ...     raise ValueError(f"bad rank {r}")
    ... ValueError: bad rank 8''').line()
    'ValueError: bad rank <n> (at peft/tuners/lora/layer.py:forward)'
    """
    blocks = _CHAINED.split(text[-TEXT_CHARS:])
    last = blocks[-1]
    if any(_ERROR_LINE.match(line) for line in last.splitlines()):
        return _from_pytest(last)
    return _from_python(last)


def _from_pytest(text: str) -> Signature | None:
    frames: list[str] = []
    errors: list[str] = []
    for line in text.splitlines():
        error = _ERROR_LINE.match(line)
        if error is not None:
            errors.append(error.group("text") or "")
            continue
        if errors:
            continue  # the error of an earlier entry: the next block holds the raise
        frame = _PYTEST_FRAME.match(line)
        if frame is not None:
            found = installed_frame(frame.group("path"), frame.group("function"))
            if found is not None:
                frames.append(found)
    if not errors:
        return None
    return _named(errors, frames)


def _from_python(text: str) -> Signature | None:
    lines = text.splitlines()
    start = max(
        (i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent")), default=None
    )
    if start is None:
        return None
    frames: list[str] = []
    rest: list[str] = []
    for line in lines[start + 1 :]:
        frame = _PYTHON_FRAME.match(line)
        if frame is not None and not rest:
            found = installed_frame(frame.group("path"), frame.group("function"))
            if found is not None:
                frames.append(found)
        elif rest or (line and not line[0].isspace()):
            rest.append(line)
    return _named(rest, frames) if rest else None


def _named(lines: list[str], frames: list[str]) -> Signature:
    """``Type: message`` (continued on the next lines) and the frames, outermost first."""
    first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
    head = lines[first].strip() if lines else ""
    named = _NAMED.match(head)
    if named is not None:
        exception = named.group("name")
        message = "\n".join([named.group("message") or "", *lines[first + 1 :]])
    else:  # pytest shows a rewritten assert without its type: "assert 1 == 2"
        exception = "AssertionError" if head.startswith("assert") else ""
        message = "\n".join(lines[first:])
    return Signature.of(exception, cause_frames(reversed(frames)), message)
