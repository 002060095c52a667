"""summary.md: ready to paste into a GitHub issue (also the CI step summary).

Sections, in reading order: the verdicts and the run's facts, regressions (with the
bisect command for each transition), the new failures by cause (one line per failure
signature, naming the combinations it covers), the cases that do not pass everywhere (the main
table: one row per such case, the combinations as columns when there are few; with
many, one row per combination that has a problem, listing its cases by name), one
collapsed <details> per failure (error, short traceback, one-line repro), the
known-broken issues (each with its error line and a repro, collapsed), fixed and
flaky, the environment block, then, collapsed, the full grid (combinations x cases)
and every resolved version.

GitHub refuses a body over 65,536 characters, so every section gets a share of that
budget. What does not fit is left out by a fixed rule (most important first, matrix
order within) and the section says so and where the full report is: the same
results always give the same summary.

Here: ``render`` (the budget and the order), and the short sections: the headline,
regressions, new failures by cause, the environment block, the footer. The others, one module each:

    markdown_problems.py  the main table (cases not passing everywhere)
    markdown_details.py   the collapsed blocks: failures; known-broken, fixed, flaky
    markdown_grid.py      the collapsed tables: full grid, resolved versions
    markdown_text.py      what they are all made of: code spans, cutting to a budget
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.outcomes import Verdict, verdict_attention, verdict_symbol
from repromatrix.redact import redact_text
from repromatrix.reports import environment
from repromatrix.reports.markdown_details import details, lists
from repromatrix.reports.markdown_grid import grid, resolved_versions
from repromatrix.reports.markdown_problems import problems
from repromatrix.reports.markdown_text import code, code_block, fit, more_note
from repromatrix.reports.view import (
    EXIT_TEXT,
    View,
    run_facts,
)
from repromatrix.results.bulk import without_cycle_collection
from repromatrix.verdicts.causes import by_cause, new_failures

MAX_CHARS = COMMENT_LIMIT
COLLECT_ENV_CHARS = 6_000
# Shares of what is left after the fixed parts (headline, environment, footer),
# in the order the sections are filled; what one section leaves unused flows on.
SHARES = (
    ("lost", 0.04),
    ("regressions", 0.10),
    ("causes", 0.06),
    ("problems", 0.22),
    ("details", 0.22),
    ("lists", 0.12),
    ("grid", 0.20),
    ("resolved", 0.08),
)


@without_cycle_collection
def render(view: View) -> str:
    fixed_head = _head(view)
    fixed_env = _environment(view)
    footer = _footer(view)
    builders: dict[str, Callable[[int], str]] = {
        "lost": lambda budget: _lost(view, budget),
        "regressions": lambda budget: _regressions(view, budget),
        "causes": lambda budget: _causes(view, budget),
        "problems": lambda budget: problems(view, budget),
        "details": lambda budget: details(view, budget),
        "lists": lambda budget: lists(view, budget),
        "grid": lambda budget: grid(view, budget),
        "resolved": lambda budget: resolved_versions(view, budget),
    }
    remaining = MAX_CHARS - len(fixed_head) - len(fixed_env) - len(footer) - 64
    built: dict[str, str] = {}
    shares_left = sum(share for _, share in SHARES)
    for name, share in SHARES:
        budget = max(0, int(remaining * share / shares_left))
        built[name] = builders[name](budget)
        remaining -= len(built[name])
        shares_left -= share
    text = "".join(
        [
            fixed_head,
            built["lost"],
            built["regressions"],
            built["causes"],
            built["problems"],
            built["details"],
            built["lists"],
            fixed_env,
            built["grid"],
            built["resolved"],
            footer,
        ]
    )
    return _capped(redact_text(text), view)


def _capped(text: str, view: View) -> str:
    """The last guard: never over the limit, whatever the parts did."""
    if len(text) <= MAX_CHARS:
        return text
    note = f"\n\n… cut at {MAX_CHARS} characters; full report: {view.location}\n"
    return text[: MAX_CHARS - len(note)] + note


def _head(view: View) -> str:
    results = view.results
    summary = results.summary
    counts = summary.verdicts if summary else {}
    ordered = sorted(counts.items(), key=lambda kv: verdict_attention(kv[0]))
    verdicts = " · ".join(f"{verdict_symbol(v)} {n} {v}" for v, n in ordered)
    exit_code = summary.exit_code if summary else 0
    lines = [f"## repromatrix: {verdicts or 'no combinations'}\n\n"]
    lines.append(f"**Exit status {exit_code}**: {EXIT_TEXT[exit_code]}.\n\n")
    facts = [
        " ".join(filter(None, [f.words, code(f.value) if f.code else f.value]))
        for f in run_facts(view)
    ]
    lines.append(" · ".join(facts) + "\n\n")
    return "".join(lines)


def _regressions(view: View, budget: int) -> str:
    results = view.results
    if not results.regressions:
        return ""
    # One line per transition (or per case for a baseline regression with no single
    # package to blame), naming every combination that shows it.
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    bisects: dict[tuple[str, str], str] = {}
    for change in results.regressions:
        step = change.transition
        key = (change.case, step.text if step else change.text)
        groups[key].append(change.combination)
        if step and step.bisect:
            bisects[key] = step.bisect
    items = []
    for (case_id, text), combinations in groups.items():
        shown = ", ".join(code(c) for c in combinations[:6])
        extra = f" (+{len(combinations) - 6})" if len(combinations) > 6 else ""
        item = f"- {code(case_id)}: {text}: {shown}{extra}\n"
        if (case_id, text) in bisects:
            item += f"  bisect: {code(bisects[(case_id, text)])}\n"
        items.append(item)
    return fit("### Regressions\n\n", items, budget, more_note("regressions", view)) + "\n"


def _causes(view: View, budget: int) -> str:
    """New failures grouped by what they died of: one line per signature, with how
    many failures, the combinations it covers and its cases."""
    causes = by_cause(new_failures(view.results))
    if not causes:
        return ""
    failures = sum(len(cause.failures) for cause in causes)
    title = (
        f"### New failures by cause\n\n{failures} new failure{'s' * (failures != 1)}, "
        f"{len(causes)} cause{'s' * (len(causes) != 1)}.\n\n"
    )
    items = []
    for cause in causes:
        combinations, cases = cause.combinations, cause.cases
        shown = ", ".join(code(c) for c in combinations[:6])
        shown += f" (+{len(combinations) - 6})" if len(combinations) > 6 else ""
        named = ", ".join(code(c.split("::")[-1]) for c in cases[:3])
        named += f" (+{len(cases) - 3})" if len(cases) > 3 else ""
        count = len(cause.failures)
        items.append(
            f"- {code(cause.signature.line())}: {count} failure{'s' * (count != 1)} in "
            f"{len(combinations)} combination{'s' * (len(combinations) != 1)} ({shown})"
            + (f"; {named}" if named else "")
            + "\n"
        )
    return fit(title, items, budget, more_note("causes", view)) + "\n"


def _lost(view: View, budget: int) -> str:
    """The CI jobs that reported nothing (merge --tier): one line per job, its
    message naming the job, then its combinations."""
    jobs: dict[str, list[str]] = defaultdict(list)
    for combination in view.combinations:
        if combination.verdict == Verdict.LOST:
            jobs[combination.message].append(combination.id)
    items = [
        f"- {', '.join(code(c) for c in combinations[:8])}"
        + (f" (+{len(combinations) - 8})" if len(combinations) > 8 else "")
        + f": {message}\n"
        for message, combinations in jobs.items()
    ]
    if not items:
        return ""
    return fit("### Lost jobs\n\n", items, budget, more_note("lost jobs", view)) + "\n"


def _environment(view: View) -> str:
    host = view.results.run.host or {}
    collected = host.get("collect_env")
    lines = ["### Environment\n\n"]
    pairs = environment.headline(collected)
    if pairs:
        where = code(collected.get("combination", "?"))
        lines.append(
            " · ".join(f"**{label}** {value}" for label, value in pairs)
            + f" (`python -m torch.utils.collect_env` in {where})\n\n"
        )
    elif collected and collected.get("error"):
        lines.append(f"torch.utils.collect_env failed: {code(collected['error'][:300])}\n\n")
    else:
        lines.append("torch.utils.collect_env: not collected (no cell was built in this run)\n\n")
    host_facts = [
        f"{host['platform']}" if host.get("platform") else "",
        f"{host['cpus']} CPUs" if host.get("cpus") else "",
        "GPUs: " + (", ".join(host["gpus"]) if host.get("gpus") else "none"),
        "CI" if host.get("ci") else "",
    ]
    lines.append("Host: " + ", ".join(f for f in host_facts if f) + "\n\n")
    if collected and collected.get("text"):
        text = collected["text"]
        if len(text) > COLLECT_ENV_CHARS:
            text = text[:COLLECT_ENV_CHARS] + "\n… (cut; the full text is in results.json)"
        lines.append(
            "<details><summary>python -m torch.utils.collect_env</summary>\n\n"
            + code_block(text)
            + "\n</details>\n\n"
        )
    return "".join(lines)


def _footer(view: View) -> str:
    return (
        f"---\n<sub>Full report: index.html, junit.xml and results.json in {view.location}. "
        "Re-render with `repromatrix report`.</sub>\n"
    )
