"""The known-issue registry: cases/known_issues.yaml.

A list of upstream bugs the matrix measured, each tied to a case and a version range::

    - case: test_whisper_lora.py::test_lora_gets_gradients[reentrant]
      when: {transformers: ">=4.53,<4.56"}   # PEP 440 specifiers, all must hold
      link: https://github.com/huggingface/transformers/issues/NNNNN
      note: one line

``case`` is a case id, or a pattern where ``*`` and ``?`` are wildcards; brackets
are literal there, because parametrized ids are full of them. ``when`` is checked
against the versions a combination *resolved* to (``python`` against its
interpreter), never against what matrix.yaml asked for: a floating pin that moves
into the range is caught.

A failure inside a registered range is known-broken; a pass inside it is
possibly-fixed (the range may be out of date).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, ValidationError

from repromatrix.errors import UserError, key_path
from repromatrix.matrix import CaseIndex
from repromatrix.matrix.defaults import KNOWN_ISSUES_FILE
from repromatrix.names import canonicalize_name
from repromatrix.results import CombinationResult

FILE_NAME = KNOWN_ISSUES_FILE


class _Entry(BaseModel):
    """The shape of one entry; values are checked further in ``_issue``."""

    model_config = ConfigDict(extra="forbid")

    case: str
    when: dict[str, str] = {}
    link: str
    note: str = ""
    # A confirmed flip to passing of a kept issue repro (issue/kept.py): where it was
    # fixed, e.g. "transformers 5.3.0, commit abc1234 (#41234)". Its range still holds
    # until a person narrows it or the issue is closed as fixed.
    possibly_fixed: str = ""


@dataclass(frozen=True)
class KnownIssue:
    case: str
    when: tuple[tuple[str, SpecifierSet], ...]
    link: str
    note: str
    possibly_fixed: str = ""  # where a kept issue repro's watch saw it fixed (issue/kept.py)

    def matches_case(self, case_id: str) -> bool:
        if case_id == self.case:
            return True
        # '[' starts a character class in fnmatch; in a case id it is a parameter.
        return fnmatch.fnmatchcase(case_id, self.case.replace("[", "[[]"))

    def holds_for(self, versions: dict[str, str]) -> bool:
        for package, specifier in self.when:
            version = versions.get(package)
            if version is None:
                return False
            try:
                if not specifier.contains(Version(version), prereleases=True):
                    return False
            except InvalidVersion:
                return False  # a version PEP 440 cannot order is in no range
        return True

    def describe(self) -> dict[str, Any]:
        """What results.json records as the case's ``known_issue``."""
        return {
            "case": self.case,
            "when": {package: str(spec) for package, spec in self.when},
            "link": self.link,
            "note": self.note,
        }


@dataclass(frozen=True)
class Registry:
    issues: tuple[KnownIssue, ...] = ()
    source: str | None = None  # the file it came from, as given

    def match(self, combination: CombinationResult, case_id: str) -> KnownIssue | None:
        """The first registered issue for this case at this combination's versions."""
        return self.matcher(combination)(case_id)

    def matcher(self, combination: CombinationResult) -> Callable[[str], KnownIssue | None]:
        """``match`` for one combination's cases, its versions checked against each
        issue's range once (judging 2,000 combinations x their cases)."""
        if not self.issues:
            return lambda _case_id: None
        versions = versions_of(combination)
        holding = [issue for issue in self.issues if issue.holds_for(versions)]
        return lambda case_id: next((i for i in holding if i.matches_case(case_id)), None)


def versions_of(combination: CombinationResult) -> dict[str, str]:
    """What a ``when`` is checked against: the resolved versions (canonical names)
    and the interpreter's version as ``python``."""
    versions = {canonicalize_name(name): version for name, version in combination.resolved.items()}
    if combination.environment.python:
        versions["python"] = combination.environment.python
    return versions


@dataclass(frozen=True)
class RegistryLocation:
    """Where the known-issue registry of a matrix is, and whether it must exist."""

    path: Path
    required: bool
    cases: Path | None = None  # the cases folder its ``case`` entries must name cases in

    @classmethod
    def of(
        cls, *, matrix: Path, cases: Path | None = None, explicit: Path | None = None
    ) -> RegistryLocation:
        """The one rule, for run, report and triage alike: --known-issues when given
        (then it must exist); otherwise known_issues.yaml in the cases folder, which is
        --cases or cases/ beside the matrix (optional: a project without known issues)."""
        folder = Path(cases) if cases is not None else Path(matrix).parent / "cases"
        if explicit is not None:
            return cls(Path(explicit), required=True, cases=folder)
        return cls(folder / FILE_NAME, required=False, cases=folder)

    def load(self) -> Registry:
        registry = load_registry(self.path, required=self.required)
        if self.cases is not None and self.cases.is_dir():
            check_cases(registry, self.cases)
        return registry


def check_cases(registry: Registry, cases: Path) -> None:
    """Every entry names a case of the folder: an entry whose case matches nothing
    would never apply, and silently (a typo, or a case renamed since)."""
    index = CaseIndex(cases)
    for number, issue in enumerate(registry.issues):
        problem = index.pattern_problem(issue.case)
        if problem:
            raise UserError(f"{registry.source}: [{number}].case: {issue.case!r}: {problem}")


def load_registry(path: str | Path | None, *, required: bool = True) -> Registry:
    """The registry in ``path``; an empty one when the file is absent and not
    ``required`` (a project without known issues yet)."""
    if path is None:
        return Registry()
    path = Path(path)
    if not path.exists():
        if required:
            raise UserError(f"{path}: no such known-issues file")
        return Registry()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f":{mark.line + 1}" if mark else ""
        raise UserError(f"{path}{where}: YAML syntax error: {err.problem or err}") from None
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: cannot read known issues ({err})") from None
    return parse_registry(data, str(path))


def parse_registry(data: Any, source: str) -> Registry:
    if data is None:
        return Registry(source=source)
    if not isinstance(data, list):
        raise UserError(
            f"{source}: the top level must be a list of known issues, not {type(data).__name__}"
        )
    return Registry(
        issues=tuple(_issue(entry, index, source) for index, entry in enumerate(data)),
        source=source,
    )


def _issue(entry: Any, index: int, source: str) -> KnownIssue:
    where = f"[{index}]"
    if not isinstance(entry, dict):
        raise UserError(f"{source}: {where}: {entry!r} is not a mapping with case, when, link")
    try:
        parsed = _Entry.model_validate(entry)
    except ValidationError as err:
        first = err.errors()[0]
        location = key_path([index, *first["loc"]])
        value = first.get("input")
        shown = f" {value!r}" if first["type"] != "missing" and _is_scalar(value) else ""
        raise UserError(f"{source}: {location}:{shown} {_message(first)}") from None

    case = parsed.case.strip()
    if not case:
        raise UserError(f"{source}: {where}.case: empty case id")
    if not parsed.link.startswith(("https://", "http://")):
        raise UserError(f"{source}: {where}.link: {parsed.link!r} is not an http(s) URL")
    if "\n" in parsed.note.strip():
        raise UserError(f"{source}: {where}.note: must be one line")
    if "\n" in parsed.possibly_fixed.strip():
        raise UserError(f"{source}: {where}.possibly_fixed: must be one line")

    when: list[tuple[str, SpecifierSet]] = []
    for package, spec in parsed.when.items():
        try:
            specifier = SpecifierSet(spec)
        except InvalidSpecifier:
            raise UserError(
                f"{source}: {where}.when.{package}: {spec!r} is not a PEP 440 specifier "
                "(e.g. '>=4.53,<4.56')"
            ) from None
        when.append((canonicalize_name(package), specifier))
    return KnownIssue(case=case, when=tuple(when), link=parsed.link, note=parsed.note.strip(),
                      possibly_fixed=parsed.possibly_fixed.strip())  # fmt: skip


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _message(error: dict) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key (known: case, when, link, note, possibly_fixed)"
    if kind == "string_type" and isinstance(error.get("input"), float):
        return "is a number; quote it, e.g. '>=0.17'"
    return str(error["msg"])
