"""A hunt's workflow inputs (bisect.yml, culprit.yml), checked before a GPU runner is
taken: every mistake is one line naming the input, where GitHub would otherwise fail
deep inside the job (a runner list that is not JSON fails the job's ``runs-on`` with
an expression error; a lock line that is not a pin, halfway through the hunt).

The workflows hand the inputs over as one JSON object (``toJSON(inputs)``) in the
environment, never through a ``run:`` line, and take the runner labels back as a
step output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.matrix import CaseIndex
from repromatrix.matrix.cell import parse_cell
from repromatrix.matrix.model import (
    ID_PATTERN,  # a report folder's name: never a path
    runs_on,
)
from repromatrix.matrix.pins import is_version, parse_pin_option

DEFAULT_RUNNER = '["self-hosted", "linux", "gpu"]'


def runner_labels(text: str, source: str) -> str:
    """The runner as JSON for ``runs-on`` (a scale-set name, a list of labels or
    ``{group, labels}``, as matrix.yaml's ``runner:``), or one line naming ``source``."""
    try:
        return json.dumps(runs_on(json.loads(text)))
    except (ValueError, RecursionError):
        raise UserError(
            f"{source}: {text[:80]!r} is not a runner as JSON: a list of labels "
            '(e.g. ["self-hosted", "gpu"]), a scale-set name ("arc-gpu") or '
            '{"group": NAME, "labels": [...]}'
        ) from None


def check_inputs(
    workflow: str,
    inputs: Mapping[str, str],
    *,
    runner: str,
    runner_source: str,
    cases: Path,
) -> str:
    """Check ``inputs`` of ``workflow`` (bisect or culprit); the runner labels to use."""
    labels = runner_labels(runner, runner_source)
    text = {k: str(v) for k, v in inputs.items() if v is not None}
    case, script = text.get("case", ""), text.get("script", "")
    if bool(case) == bool(script):
        raise UserError("inputs case, script: give exactly one of them")
    if case:
        problem = CaseIndex(cases).problem(case)
        if problem is not None:
            raise UserError(f"input case: {case!r}: {problem}")
    elif not Path(script).is_file():
        raise UserError(f"input script: {script!r}: no such file in the repository")
    for pin in text.get("pins", "").split():
        _named("pins", parse_pin_option, pin)
    if text.get("cell"):
        parse_cell(text["cell"], "input cell")
    if workflow == "bisect":
        for end in ("good", "bad"):
            _version(end, text.get(end, ""))
    elif workflow == "culprit":
        for side in ("good", "bad"):
            lines = text.get(side, "").split()
            if not lines:
                raise UserError(f"input {side}: empty (space-separated name==version pins)")
            for line in lines:
                name, sep, version = line.partition("==")
                if not sep or not name or not is_version(version):
                    raise UserError(f"input {side}: {line!r} is not a name==version pin")
        name = text.get("name", "")
        if not ID_PATTERN.fullmatch(name):
            raise UserError(
                f"input name: {name!r} is not a folder name (letters, digits, '.', '_', "
                "'-'; no '/' or '..')"
            )
    else:
        raise UserError(f"--workflow {workflow!r}: bisect or culprit")
    return labels


def _named(input_name: str, parse, value: str) -> None:
    try:
        parse(value)
    except UserError as err:
        raise UserError(f"input {input_name}: {err}") from None


def _version(input_name: str, value: str) -> None:
    if not is_version(value):
        raise UserError(f"input {input_name}: {value!r} is not a version")
