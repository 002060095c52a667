"""What a culprit hunt leaves behind: reports/culprit/<name>/

    culprit.json  the changes, every set tried and the answer (schema below),
                  rewritten after each step
    culprit.md    ready to paste into an issue: the verdict line first, the culprit(s),
                  the steps, the changes (collapsed), the command
    steps/        per step: step-NN.install.log, step-NN.run.log (the probe's files)
    releases/     the release bisect of a single culprit (bisect's own report)

culprit.json (schema 1): status (running | found | inconclusive | ends-mismatch |
interrupted), verdict, reason, culprits [{package, good, bad, lock_bad, last_good,
moved_along}] (bad: the first bad release after the release bisect, else the bad
lock's version), changed [{package, good, bad, kind}], steps [{number, role,
requested, applied, moved_along, outcome, seconds, detail, ran}], runs (cell runs
of the search), release_bisect (its folder, status and step count), command, probe,
pins. Fields are added, never renamed; no absolute path of the machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repromatrix.github.markdown import code_block, table_cell
from repromatrix.hunts.bisect.report import duration
from repromatrix.hunts.sources import source_lines
from repromatrix.redact import redact, redact_text
from repromatrix.results import write_json_atomic, write_text_atomic

SCHEMA_VERSION = 1


class CulpritStep(BaseModel):
    model_config = ConfigDict(extra="allow")

    number: int
    role: str  # good lock | bad lock | subset | complement
    requested: list[str]
    applied: list[str]
    moved_along: list[str] = []
    outcome: str  # good | bad | skip | unresolvable
    seconds: float = 0.0
    detail: str = ""
    ran: bool = True  # False: unresolvable, or the same mix as an earlier step


class CulpritRecord(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: int = Field(default=SCHEMA_VERSION, alias="schema")
    name: str
    status: str = "running"
    verdict: str = ""
    reason: str = ""
    good_lock: str = ""
    bad_lock: str = ""
    culprits: list[dict[str, Any]] = []
    minimal: list[str] = []
    changed: list[dict[str, Any]] = []
    steps: list[CulpritStep] = []
    runs: int = 0
    most_runs: int = 0  # the bound with one culprit and no skips
    release_bisect: dict[str, Any] | None = None
    seconds: float = 0.0
    started: str = ""
    finished: str = ""
    pins: list[str] = []
    probe: dict[str, Any] = {}
    index: dict[str, Any] = {}  # where the cells resolved from (credentials masked)
    command: str = ""
    repromatrix: str = ""
    # The tree of each package built from a folder (hunts/sources.py), and how it
    # moved while the hunt ran.
    sources: dict[str, dict[str, Any]] = {}
    sources_changed: list[str] = []


def verdict_line(record: CulpritRecord) -> str:
    took = (
        f"{len(record.changed)} changes, {record.runs} cell runs"
        + (
            f" + {record.release_bisect.get('steps', 0)} for the release bisect"
            if record.release_bisect
            else ""
        )
        + f", {duration(record.seconds)}"
    )
    if record.status == "found" and record.culprits:
        parts = []
        for culprit in record.culprits:
            good, bad = culprit["good"] or "(none)", culprit["bad"] or "(none)"
            text = f"{culprit['package']} {good} -> {bad}"
            if culprit.get("last_good") and culprit.get("bad") != culprit.get("lock_bad"):
                text += f" (first bad release; last good {culprit['last_good']})"
            parts.append(text)
        together = " together" if len(parts) > 1 else ""
        return f"culprit: {' + '.join(parts)}{together} ({took})"
    if record.status == "running":
        return f"culprit hunt running ({took})"
    return f"no culprit: {record.reason or record.status} ({took})"


def markdown(record: CulpritRecord) -> str:
    lines = [f"**{record.verdict or verdict_line(record)}**", ""]
    if record.culprits:
        lines += ["| culprit | good lock | bad lock | first bad release | moved along |"]
        lines += ["|---|---|---|---|---|"]
        for c in record.culprits:
            along = ", ".join(c.get("moved_along") or []) or "-"
            lines.append(
                f"| {c['package']} | {c.get('good') or '-'} | {c.get('lock_bad') or '-'} | "
                f"{c.get('bad') or '-'} | {table_cell(along)} |"
            )
        lines.append("")
    if record.release_bisect:
        rb = record.release_bisect
        lines += [f"Release bisect: {table_cell(rb.get('verdict', rb.get('status', '')))}", ""]
    lines += [
        f"Probe: {_probe_text(record.probe)}; {len(record.changed)} packages differ between "
        f"the locks; {record.runs} cell runs (at most {record.most_runs} with one culprit "
        "and no skips).",
        "",
        *source_lines(record.sources, record.sources_changed),
        *([""] if record.sources else []),
        "<details><summary>Cell runs</summary>",
        "",
        "| # | role | changes applied | outcome | seconds | detail |",
        "|---|---|---|---|---|---|",
    ]
    for step in record.steps:
        if not step.ran:
            continue  # refused by the resolver, or a mix tested before: in culprit.json
        applied = _applied_text(step, len(record.changed))
        lines.append(
            f"| {step.number} | {step.role} | {table_cell(applied)} | {step.outcome} | "
            f"{step.seconds:.1f} | {table_cell(step.detail[:200])} |"
        )
    refused = sum(1 for step in record.steps if step.outcome == "unresolvable")
    if refused:
        lines += [
            "",
            f"{refused} mixes were refused by the resolver (conflicting pins) and adapted by "
            "moving the package it named along; every attempt is in culprit.json.",
        ]
    lines += ["", "</details>", "", "<details><summary>Changes between the locks</summary>", ""]
    lines += ["| package | good | bad |", "|---|---|---|"]
    for change in record.changed:
        lines.append(f"| {change['package']} | {change['good'] or '-'} | {change['bad'] or '-'} |")
    lines += ["", "</details>", "", "Reproduce:", "", code_block(record.command)]
    if record.index:
        shown = "; ".join(
            f"{key}: {', '.join(value) if isinstance(value, list) else value}"
            for key, value in record.index.items()
        )
        lines += [f"Index: {shown}", ""]
    return redact_text("\n".join(lines))


def _applied_text(step: CulpritStep, total: int) -> str:
    if not step.applied:
        return "none (the good lock)"
    if len(step.applied) == total:
        return f"all {total} (the bad lock)"
    shown = ", ".join(step.applied[:8]) + (" …" if len(step.applied) > 8 else "")
    if step.moved_along:
        shown += f" (moved along: {', '.join(step.moved_along)})"
    return f"{len(step.applied)}: {shown}"


def _probe_text(probe: dict[str, Any]) -> str:
    if "case" in probe:
        return f"case `{probe['case']}`"
    return f"script `{probe.get('script', '')}`"


def write(folder: Path, record: CulpritRecord) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = redact(record.model_dump(by_alias=True))
    write_json_atomic(folder / "culprit.json", data)
    write_text_atomic(folder / "culprit.md", markdown(record))
