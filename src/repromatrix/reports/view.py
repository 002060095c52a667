"""What every report shows, decided once: columns, case order, symbols, colours.

The outputs (Markdown, HTML, JUnit) are renderings of this view of judged results;
none of them looks at anything but the stored results.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from repromatrix.environment.source_tree import SourceTree
from repromatrix.outcomes import (
    FAILURES,
    MISSING_CELL,
    REGRESSED_CELL,
    STATUSES,
    VERDICT_TABLE,
)
from repromatrix.results import CaseResult, CombinationResult, Results
from repromatrix.results.bulk import without_cycle_collection
from repromatrix.verdicts import is_regression

REPORT_FILES = ("results.json", "summary.md", "index.html", "junit.xml")


def cell_status(case: CaseResult | None) -> str:
    """The status a grid cell shows: the case's status, with regressions singled out."""
    if case is None:
        return MISSING_CELL
    if is_regression(case):
        return REGRESSED_CELL
    return case.status if case.status in STATUSES else "error"


def is_problem(case: CaseResult) -> bool:
    """A case a reader must look at: it failed and nobody registered why."""
    return case.status in FAILURES


@dataclass
class View:
    results: Results
    packages: list[str]  # version columns, in matrix order
    case_ids: list[str]  # case columns, in first-seen order
    show_python: bool
    location: str  # where the full report lives, for "see ..." notes

    @classmethod
    @without_cycle_collection
    def of(cls, results: Results, results_dir: Path | None = None) -> View:
        packages: dict[str, None] = {}
        case_ids: dict[str, None] = {}
        pythons = set()
        for combination in results.combinations:
            packages.update(dict.fromkeys(combination.requested))
            case_ids.update(dict.fromkeys(c.id for c in combination.cases))
            if combination.environment.python:
                pythons.add(combination.environment.python)
        return cls(
            results=results,
            packages=list(packages),
            case_ids=list(case_ids),
            show_python=len(pythons) > 1,
            location=report_location(results_dir),
        )

    @property
    def combinations(self) -> list[CombinationResult]:
        return self.results.combinations

    @functools.cached_property
    def statuses(self) -> list[dict[str, str]]:
        """Per combination (matrix order), each case's cell status; absent = missing."""
        return [{case.id: cell_status(case) for case in c.cases} for c in self.combinations]

    def cells(self, case_id: str) -> list[str]:
        """The case's cell status in every combination, in matrix order."""
        return [row.get(case_id, MISSING_CELL) for row in self.statuses]

    def problem_cases(self) -> list[str]:
        """Cases that do not pass everywhere they ran, most alarming first (then in
        first-seen order): the rows of a report's main table."""
        statuses: dict[str, set[str]] = {case_id: set() for case_id in self.case_ids}
        for row in self.statuses:
            for case_id, status in row.items():
                statuses[case_id].add(status)
        worst = {
            case_id: min(
                (STATUSES[s].attention for s in seen if not STATUSES[s].quiet), default=None
            )
            for case_id, seen in statuses.items()
        }
        order = {case_id: i for i, case_id in enumerate(self.case_ids)}
        found = [case_id for case_id, rank in worst.items() if rank is not None]
        return sorted(found, key=lambda case_id: (worst[case_id], order[case_id]))

    def varying_packages(self) -> list[str]:
        """Version columns whose value is not the same in every combination."""
        return [
            package
            for package in self.packages
            if len({self.version(c, package)[0] for c in self.combinations}) > 1
        ]

    def sweep_package(self) -> str | None:
        """The one package a sweep-like tier moves (every other version is the same
        in all its combinations), else None. In such a tier every row changes a
        version, so reports mark the rows where an outcome changes instead."""
        varying = self.varying_packages()
        return varying[0] if len(varying) == 1 and len(self.combinations) > 2 else None

    def transition_rows(self) -> set[int]:
        """Rows (matrix order) where some case's outcome differs from the row above."""
        rows: set[int] = set()
        previous: dict[str, str] | None = None
        for index, now in enumerate(self.statuses):
            if previous and now and now != previous:
                rows.add(index)
            previous = now or previous
        return rows

    def version(self, combination: CombinationResult, package: str) -> tuple[str, bool]:
        """(text, resolved?) for a version cell: the resolved version, or the request
        when nothing was resolved (an install error, a skipped cell). A package built
        from a folder says which tree: ``0.1.0 (abc1234 + edits)``."""
        resolved = resolved_text(combination, package)
        if resolved is not None:
            return resolved, True
        requested = combination.requested.get(package)
        if requested in (None, "", "None", "null"):
            return "-", False
        return requested, False


def resolved_text(combination: CombinationResult, package: str) -> str | None:
    """The resolved version of ``package``; for one built from a folder, with its
    tree: ``0.1.0 (abc1234 + edits)`` (the version alone names no edit)."""
    resolved = combination.resolved.get(package)
    record = combination.environment.sources.get(package)
    if resolved is None or not record:
        return resolved
    return f"{resolved} ({SourceTree.of_record(package, record).short()})"


def version_key(text: str) -> tuple:
    """Versions in release order (2.9 before 2.13), then what is not a version (a
    git ref, ``system``) by its text: the order of every report's version lists."""
    try:
        return (0, Version(text), "")
    except InvalidVersion:
        return (1, Version("0"), text)


def split_case(case_id: str) -> tuple[str, str, str]:
    """(file, test name, parameter) of a pytest node id:
    'test_lora.py::test_grads[reentrant]' -> ('test_lora.py', 'test_grads', '[reentrant]')."""
    file, _, rest = case_id.rpartition("::") if "::" in case_id else ("", "", case_id)
    if file and "::" in file:  # a test inside a class: the class goes with the name
        file, _, klass = file.partition("::")
        rest = f"{klass}::{rest}"
    name, bracket, param = rest.partition("[")
    return file, name, f"{bracket}{param}"


def report_location(results_dir: Path | None) -> str:
    """Where the full report is, in words that mean something off this machine: the
    CI run's page, or the results folder relative to the working directory."""
    server, repo, run_id = (
        os.environ.get("GITHUB_SERVER_URL"),
        os.environ.get("GITHUB_REPOSITORY"),
        os.environ.get("GITHUB_RUN_ID"),
    )
    if server and repo and run_id:
        return f"{server}/{repo}/actions/runs/{run_id} (artifacts)"
    if results_dir is None:
        return "the results folder"
    folder = Path(results_dir).resolve()
    try:
        return f"{folder.relative_to(Path.cwd().resolve())}/"
    except ValueError:
        return f"{folder.name}/ (the results folder)"


def first_line(text: str, limit: int = 300) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def short_traceback(text: str, lines: int = 30, chars: int = 2500) -> str:
    """The end of a traceback, where the error is: its last lines, at most ``chars``."""
    kept = text.rstrip().splitlines()[-lines:]
    out = "\n".join(kept)
    if len(out) > chars:
        out = "…" + out[-(chars - 1) :]
    return out


@dataclass(frozen=True)
class Fact:
    """One item of a report's header line: words, then a value (code-styled or not)."""

    words: str
    value: str
    code: bool = False


def _words(verdicts: list[str]) -> str:
    return ", ".join(verdicts[:-1]) + f" or {verdicts[-1]}" if len(verdicts) > 1 else verdicts[0]


# Exit status 1 names the unexpected verdicts, most alarming first.
_ORDERED = sorted(VERDICT_TABLE, key=lambda row: row.attention)
EXIT_TEXT = {
    0: "nothing regressed or failed unexpectedly (pass, known-broken, fixed or skipped)",
    1: "something regressed or failed unexpectedly ("
    + _words([r.verdict for r in _ORDERED if r.unexpected])
    + ")",
}


def run_sources(results: Results) -> list[SourceTree]:
    """The trees the run built its folder pins from (``mylib: "."``), each once, in
    matrix order: one per package, unless merged jobs saw different trees."""
    found: dict[tuple[str, str], SourceTree] = {}
    for combination in results.combinations:
        for package, record in combination.environment.sources.items():
            tree = SourceTree.of_record(package, record)
            found.setdefault((package, tree.digest), tree)
    return list(found.values())


def run_facts(view: View) -> list[Fact]:
    """The facts every report's header gives about the run, in order."""
    results = view.results
    run, summary = results.run, results.summary
    candidates = [
        Fact("run", run.id, code=True),
        Fact("tier", run.tier or "", code=True),
        Fact("", f"{len(view.combinations)} combinations × {len(view.case_ids)} cases"),
        Fact("started", run.started),
        Fact("repromatrix", run.repromatrix),
        Fact("cases", (run.cases_commit or "")[:12], code=True),
        Fact(run.matrix, run.matrix_sha256[:12], code=True),
        # Which source of the user's own package the answers are about.
        *(Fact("your source", tree.label(), code=True) for tree in run_sources(results)),
    ]
    if summary and summary.baseline:
        base = summary.baseline
        candidates.append(
            Fact("baseline: run", f"{base.get('run') or '?'} ({base.get('started')})")
        )
    else:
        candidates.append(Fact("", "no baseline run"))
    if summary and summary.known_issues:
        # The registry's path without this machine's folders.
        name = "/".join(summary.known_issues.replace("\\", "/").split("/")[-2:])
        candidates.append(Fact("known issues:", name, code=True))
    return [fact for fact in candidates if fact.value]
