"""Reports, rendered only from stored results: nothing here runs a case.

    results.json   the results with verdict fields (results_json.py)
    junit.xml      one testsuite per combination (junit.py)
    summary.md     for a GitHub issue / the CI step summary, <= 65,536 chars (markdown.py;
                   its sections in markdown_problems.py, markdown_details.py, markdown_grid.py)
    index.html     the grid, self-contained (html.py)

``Reporting.prepare`` reads the known-issue registry and the baseline before a run
starts (bad input fails in one line before an hour of work; and a baseline inside
the results folder is read before a fresh run moves it aside); ``finish`` judges
the results and writes every report. ``rerender`` does the same from a results
folder alone (``repromatrix report``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.github.client import GitHub
from repromatrix.outcomes import UNEXPECTED, VERDICTS, verdict_attention
from repromatrix.redact import masked_already, portable_path
from repromatrix.reports import environment, html, junit, markdown, results_json, step_summary
from repromatrix.reports.view import REPORT_FILES, View
from repromatrix.results import Results, ResultsDir, load_results, write_text_atomic
from repromatrix.results.bulk import side_by_side, without_cycle_collection
from repromatrix.verdicts import judge
from repromatrix.verdicts.knownissues import Registry, RegistryLocation

Say = Callable[[str], None]
MAX_LINES_SHOWN = 20


@dataclass
class Reporting:
    registry: Registry
    baseline: Results | None = None
    baseline_name: str | None = None
    issue: int | None = None

    @classmethod
    def prepare(
        cls,
        *,
        known_issues: RegistryLocation | None,
        baseline: Path | None = None,
        issue: int | None = None,
    ) -> Reporting:
        registry = known_issues.load() if known_issues is not None else Registry()
        previous = load_results(baseline) if baseline is not None else None
        return cls(
            registry=registry,
            baseline=previous,
            baseline_name=portable_path(baseline) if baseline is not None else None,
            issue=issue,
        )

    def finish(
        self,
        results: Results,
        folder: Path,
        say: Say = print,
        ran: Iterable[str] | None = None,
    ) -> tuple[Results, int]:
        """At the end of a run: the environment block the run collected, verdicts,
        every report. Returns the judged results and the run's exit status, which
        counts only the combinations in ``ran`` when given (``nox -s <id>`` updates
        one combination in a folder that holds others)."""
        environment.attach(results, folder)
        judged, code = self.render(results, folder, say)
        if ran is not None:
            wanted = set(ran)
            code = int(any(c.verdict in UNEXPECTED for c in judged.combinations if c.id in wanted))
        return judged, code

    def render(self, results: Results, folder: Path, say: Say = print) -> tuple[Results, int]:
        judge(results, self.registry, self.baseline, baseline_name=self.baseline_name)
        written = write_all(results, folder)
        summary_text = written["summary.md"].read_text(encoding="utf-8")
        step = step_summary.append_step_summary(summary_text)
        _tell(results, folder, say)
        if step is not None:
            say("summary appended to $GITHUB_STEP_SUMMARY")
        if self.issue is not None:
            GitHub(say=say).comment(self.issue, written["summary.md"])
        code = results.summary.exit_code if results.summary else 0
        return results, code


# From this many case results on, write_all renders in two processes (side_by_side): a
# fork costs milliseconds, each half of the reports of 2,000 combinations a second.
SIDE_BY_SIDE_FROM_CASES = 2_000


@without_cycle_collection
def write_all(
    results: Results, folder: Path, *, side_by_side_from: int = SIDE_BY_SIDE_FROM_CASES
) -> dict[str, Path]:
    """Every report of judged ``results`` into ``folder``: results.json and index.html
    here, junit.xml and summary.md in a forked child while they are written, for a large
    matrix (the same files, byte for byte, as one after the other)."""
    folder = Path(folder)
    view = View.of(results, folder)

    def write(name: str, render: Callable[[View], str]) -> None:
        write_text_atomic(folder / name, render(view), scrub=masked_already)  # each renders masked

    def here() -> None:
        results_json.write(results, folder)
        write("index.html", html.render)

    def there() -> None:
        write("junit.xml", junit.render)
        write("summary.md", markdown.render)

    if sum(len(c.cases) for c in results.combinations) >= side_by_side_from:
        side_by_side(here, there)
    else:
        here()
        there()
    return {name: folder / name for name in REPORT_FILES}


def rerender(
    folder: Path,
    *,
    baseline: Path | None = None,
    known_issues: RegistryLocation | None = None,
    issue: int | None = None,
    say: Say = print,
) -> int:
    """``repromatrix report``: judge and render the results stored in ``folder`` again."""
    folder = Path(folder)
    if folder.is_file():
        folder = folder.parent
    if not (folder / results_json.FILE_NAME).exists():
        raise UserError(f"{folder}: no results.json here (run the matrix first, or pass --results)")
    reporting = Reporting.prepare(
        known_issues=known_issues,
        baseline=baseline,
        issue=issue,
    )
    # The run's lock: a run still writing this folder gets a clear error, not a race.
    with ResultsDir(folder).claimed("update"):
        results = load_results(folder)
        _results, code = reporting.render(results, folder, say)
    return code


def _tell(results: Results, folder: Path, say: Say) -> None:
    summary = results.summary
    counts = summary.verdicts if summary else {}
    ordered = sorted(counts.items(), key=lambda kv: verdict_attention(kv[0]))
    code = summary.exit_code if summary else 0
    say(
        "verdicts: "
        + (", ".join(f"{n} {v}" for v, n in ordered) or "no combinations")
        + f" (exit status {code})"
    )
    shown = 0
    for combination in results.combinations:
        row = VERDICTS.get(combination.verdict) if combination.verdict else None
        if row is not None and row.quiet:
            continue
        if shown == MAX_LINES_SHOWN:
            say("  … more in summary.md")
            break
        say(f"  {combination.verdict:<13} {combination.id}: {combination.verdict_reason}")
        shown += 1
    seen = set()
    for change in results.regressions:
        step = change.transition
        if step and step.bisect and step.bisect not in seen and len(seen) < MAX_LINES_SHOWN:
            seen.add(step.bisect)
            say(f"  bisect: {step.bisect}")
    say(f"reports in {_terminal_path(folder)}: {', '.join(REPORT_FILES)}")


def _terminal_path(path: Path) -> str:
    """For this terminal only: relative when inside the working directory."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)
