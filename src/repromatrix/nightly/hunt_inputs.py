"""A hunt's workflow inputs (bisect.yml, culprit.yml), checked before a GPU runner is
taken: every mistake is one line naming the input, where GitHub would otherwise fail
deep inside the job (a runner list that is not JSON fails the job's ``runs-on`` with
an expression error; a lock line that is not a pin, halfway through the hunt).

The workflows hand the inputs over as one JSON object (``toJSON(inputs)``) in the
environment, never through a ``run:`` line, and take the runner labels back as a
step output. No word of an input may look like an option (``--index-url=...``: a lock
line or a requirement that uv would read as one), and the packages a hunt installs by
name (bisect's package, every pin) must be among matrix.yaml's ``packages:``: a typo is
somebody's package on PyPI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.matrix import CaseIndex
from repromatrix.matrix.cell import parse_cell
from repromatrix.matrix.model import (
    ID_PATTERN,  # a report folder's name: never a path
    runs_on,
)
from repromatrix.matrix.pins import is_version, parse_pin_option
from repromatrix.names import canonicalize_name

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


# The inputs that become command-line words or lock lines: lists of words, and words.
_LISTS = ("pins", "good", "bad")
_WORDS = ("package", "case", "script", "name", "find", "issue", "repromatrix")
# A distribution's name (PEP 508): letters and digits at both ends.
_PACKAGE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")


def check_inputs(
    workflow: str,
    inputs: Mapping[str, str],
    *,
    runner: str,
    runner_source: str,
    cases: Path,
    packages: Collection[str] | None = None,
) -> str:
    """Check ``inputs`` of ``workflow`` (bisect or culprit); the runner labels to use.
    ``packages``: matrix.yaml's, the names a hunt may install by name (None: any)."""
    text = {k: str(v) for k, v in inputs.items() if v is not None}
    for name, value in text.items():
        words = value.split() if name in _LISTS else [value.strip()] if name in _WORDS else []
        for word in words:
            if word.startswith("-"):
                raise UserError(
                    f"input {name}: {word[:60]!r} looks like an option; no value starts with '-'"
                )
    labels = runner_labels(runner, runner_source)
    known = {canonicalize_name(p) for p in packages} if packages is not None else None
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
        _known("pins", parse_pin_option(pin).package, known)
    if text.get("issue") and not text["issue"].isdigit():
        raise UserError(f"input issue: {text['issue'][:60]!r} is not an issue number")
    if text.get("cell"):
        parse_cell(text["cell"], "input cell")
    if workflow == "bisect":
        _known("package", text.get("package", ""), known)
        for end in ("good", "bad"):
            _version(end, text.get(end, ""))
    elif workflow == "culprit":
        for side in ("good", "bad"):
            lines = text.get(side, "").split()
            if not lines:
                raise UserError(f"input {side}: empty (space-separated name==version pins)")
            for line in lines:
                name, sep, version = line.partition("==")
                if not sep or not _PACKAGE.match(name) or not is_version(version):
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


def _known(input_name: str, package: str, known: set[str] | None) -> None:
    """``package`` a distribution's name, and one of ``known`` (matrix.yaml's packages)."""
    if not _PACKAGE.match(package):
        raise UserError(f"input {input_name}: {package[:60]!r} is not a package name")
    if known is not None and canonicalize_name(package) not in known:
        raise UserError(
            f"input {input_name}: {package!r} is not one of matrix.yaml's packages "
            f"({', '.join(sorted(known))})"
        )
