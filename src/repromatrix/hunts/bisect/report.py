"""What a bisect leaves behind: reports/bisect/<package>-<good>-<bad>/

    bisect.json   every step and the answer (schema below), rewritten after each step
    bisect.md     ready to paste into an issue: the answer, links to the two releases,
                  the step table, the command and environment (details block)
    steps/        per candidate: <version>.install.log, <version>.run.log, case records

bisect.json (schema 1): package, good, bad, find, status (running | found |
inconclusive | ends-mismatch | interrupted), first_bad + last_good (find
first-bad) or first_good + last_bad (find first-good), could_be_first,
candidates (PEP 440 order), steps [{version, outcome, seconds, role, detail, ...}],
plus what reproduces it (command, pins, probe, index, host). Fields are added,
never renamed. No absolute path of the machine appears in it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repromatrix import procs
from repromatrix.github.markdown import code_block, details, table_cell
from repromatrix.hunts.release_record import ReleaseRecord
from repromatrix.hunts.rerun import refusal_line
from repromatrix.hunts.sources import source_lines
from repromatrix.redact import redact, redact_text
from repromatrix.results import write_json_atomic, write_text_atomic

SCHEMA_VERSION = 1
SCRIPT_INLINE_LIMIT = 8000  # characters of a script shown in bisect.md
_GITHUB_REPO = re.compile(r"https?://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)")


class StepRecord(ReleaseRecord):
    role: str = "step"  # good end | bad end | step
    detail: str = ""
    environment: str | None = None  # identity (16 hex digits), None when not built
    reused: bool | None = None
    build_seconds: float | None = None  # resolve + (re)use or build, within seconds
    installed: str | None = None  # the version the environment really has
    round: int = 0  # k-section round (1, 2, ...)
    as_of: str | None = None  # the date the rest of the stack resolved as of


class BisectRecord(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: int = Field(default=SCHEMA_VERSION, alias="schema")
    package: str
    good: str
    bad: str
    find: str  # first-bad | first-good
    status: str = "running"
    first_bad: str | None = None
    last_good: str | None = None
    first_good: str | None = None
    last_bad: str | None = None
    could_be_first: list[str] = []
    verdict: str = ""  # the one line printed at the end
    reason: str = ""
    candidates: list[str] = []
    direction: str = "up"  # the walk: up or down in version
    steps: list[StepRecord] = []
    seconds: float = 0.0
    started: str = ""
    finished: str = ""
    pins: list[str] = []
    probe: dict[str, Any] = {}
    index: dict[str, Any] = {}
    pre: bool = False
    command: str = ""
    repository: str | None = None
    environment: dict[str, Any] = {}  # python, host, resolved versions at the answer
    repromatrix: str = ""
    mode: str = "releases"  # releases | commits | releases+commits
    jobs: int = 1
    rounds: int = 0
    # {"as_of": package | date | "none", "dates": {candidate: date}, "packages": [...],
    #  "notes": [why a candidate got today's stack]}
    as_of: dict[str, Any] = {}
    commits: dict[str, Any] = {}  # the commit bisect: repository, refs, steps, answer
    # The tree of each package built from a folder (hunts/sources.py), and how it
    # moved while the hunt ran.
    sources: dict[str, dict[str, Any]] = {}
    sources_changed: list[str] = []

    @property
    def first(self) -> str | None:
        return self.first_bad if self.find == "first-bad" else self.first_good

    @property
    def last(self) -> str | None:
        return self.last_good if self.find == "first-bad" else self.last_bad

    @property
    def first_word(self) -> str:
        return "bad" if self.find == "first-bad" else "good"

    @property
    def last_word(self) -> str:
        return "good" if self.find == "first-bad" else "bad"

    def dump(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        # Only the two answer fields of this mode: first_bad/last_good or first_good/last_bad.
        for key in (
            ("first_good", "last_bad")
            if self.find == "first-bad"
            else (
                "first_bad",
                "last_good",
            )
        ):
            data.pop(key, None)
        return redact(data)


# --------------------------------------------------------------------------- text


def duration(seconds: float) -> str:
    """2m10s, 45s, 1h02m."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def verdict_line(record: BisectRecord) -> str:
    steps = f"{len(record.steps)} step{'s' if len(record.steps) != 1 else ''}"
    tail = f"{steps}, {duration(record.seconds)}"
    if record.status == "found":
        return (
            f"first {record.first_word}: {record.package} {record.first} "
            f"(last {record.last_word}: {record.last}), {tail}"
        )
    if record.status == "inconclusive":
        one_of = ", ".join(record.could_be_first)
        return (
            f"could not conclude: first {record.first_word} is one of {one_of} "
            f"({record.reason}), {tail}"
        )
    return f"could not conclude: {record.reason}, {tail}"


def pypi_link(package: str, version: str) -> str:
    return f"https://pypi.org/project/{package}/{version}/"


def github_repository(urls: list[str]) -> str | None:
    """The first github.com/<owner>/<repo> among a project's URLs."""
    for url in urls:
        match = _GITHUB_REPO.match(url.strip())
        if match:
            owner, repo = match.groups()
            repo = repo.removesuffix(".git")
            return f"https://github.com/{owner}/{repo}"
    return None


def release_link(repository: str, version: str) -> str:
    # The tag name is a guess: most projects tag releases v<version> (transformers, peft).
    return f"{repository}/releases/tag/v{version}"


def compare_link(repository: str, older: str, newer: str) -> str:
    return f"{repository}/compare/v{older}...v{newer}"


# Runs inside a cell (stdlib only): the project's URLs from its installed metadata.
_PROJECT_URLS = r"""
import json, sys
import importlib.metadata as md
meta = md.metadata(sys.argv[1])
urls = [meta.get("Home-page") or ""]
urls += [entry.split(",", 1)[-1].strip() for entry in (meta.get_all("Project-URL") or [])]
print(json.dumps([u for u in urls if u]))
"""


def project_urls(python: Path, package: str) -> list[str]:
    """The URLs a package's metadata names, asked of ``python``, the interpreter of
    the cell it is installed in (works with any index or wheelhouse, with no
    network)."""
    done = procs.run([str(python), "-c", _PROJECT_URLS, package], timeout=60)
    if done.returncode != 0:
        return []
    try:
        return [str(u) for u in json.loads(done.stdout)]
    except json.JSONDecodeError:
        return []


def _version_links(record: BisectRecord, version: str) -> str:
    links = [f"[{version}]({pypi_link(record.package, version)})"]
    if record.repository:
        links.append(f"([GitHub release]({release_link(record.repository, version)}))")
    return " ".join(links)


def markdown(record: BisectRecord, *, script_text: str | None = None) -> str:
    """bisect.md: the answer first, as an issue comment reads best."""
    lines = [
        f"### Bisect of {record.package}: {record.find}",
        "",
        f"**{verdict_line(record)}**",
        "",
    ]
    low, high = (record.candidates[0], record.candidates[-1]) if record.candidates else ("", "")
    lines.append(
        f"- searched: {len(record.candidates)} releases of {record.package} from {low} to {high}"
        f" (good end {record.good}, bad end {record.bad}"
        + (", pre-releases included" if record.pre else "")
        + ")"
    )
    lines += source_lines(record.sources, record.sources_changed)
    releases = (record.commits or {}).get("releases") or {}
    if record.mode != "releases" and releases:
        first = releases.get(f"first_{record.first_word}")
        last = releases.get(f"last_{record.last_word}")
        lines.append(
            f"- releases: first {record.first_word} {_version_links(record, first)}, "
            f"last {record.last_word} {_version_links(record, last)}"
        )
    if record.mode != "releases":
        if record.could_be_first:
            lines.append(
                f"- first {record.first_word} is one of: "
                + ", ".join(f"`{sha[:12]}`" for sha in record.could_be_first)
            )
    elif record.status == "found" and record.first and record.last:
        lines.append(f"- first {record.first_word}: {_version_links(record, record.first)}")
        lines.append(f"- last {record.last_word}: {_version_links(record, record.last)}")
        if record.repository:
            older, newer = (
                (record.last, record.first)
                if record.direction == "up"
                else (record.first, record.last)
            )
            lines.append(f"- changes: {compare_link(record.repository, older, newer)}")
    elif record.could_be_first:
        listed = ", ".join(_version_links(record, v) for v in record.could_be_first)
        lines.append(f"- first {record.first_word} is one of: {listed}")
    lines.append(f"- probe: {_probe_text(record.probe)}")
    if record.pins:
        lines.append(f"- pinned: {', '.join(f'`{p}`' for p in record.pins)}")
    lines.append(f"- mode: {record.mode}; {_rounds_text(record)}")
    lines.append(f"- stack: {_as_of_text(record)}")
    refused = (record.as_of or {}).get("refused") or {}
    if refused.get("rerun"):
        what = "candidate" if record.mode == "releases" else "commit"
        lines.append(f"- **date cap**: {redact_text(refusal_line(refused, what, '`'))}")
    lines += _commits_lines(record)
    dated = any(step.as_of for step in record.steps)
    lines += [
        "",
        "| # | round | version | outcome | seconds |"
        + (" stack as of |" if dated else "")
        + " detail |",
        "| ---: | ---: | --- | --- | ---: |" + (" --- |" if dated else "") + " --- |",
    ]
    for number, step in enumerate(record.steps, 1):
        role = f" ({step.role})" if step.role != "step" else ""
        when = f" {(step.as_of or 'today')[:10]} |" if dated else ""
        lines.append(
            f"| {number} | {step.round or number} | {step.version}{role} | {step.outcome} "
            f"| {step.seconds:.1f} |{when} {table_cell(redact_text(step.detail))} |"
        )
    lines += ["", "<details>", "<summary>command and environment</summary>", "", "Reproduce with:"]
    lines += ["", code_block(redact_text(record.command), "sh")]
    env = record.environment
    facts = [
        ("python", env.get("python")),
        ("platform", (env.get("host") or {}).get("platform")),
        ("packages from", _index_text(record.index)),
    ]
    if env.get("at"):
        resolved = env.get("resolved") or {}
        shown = ", ".join(f"{name} {version}" for name, version in resolved.items())
        facts.append((f"installed with {record.package} {env['at']}", shown))
    for name, value in facts:
        if value:
            lines.append(f"- {name}: {redact_text(str(value))}")
    if script_text is not None:
        name = record.probe.get("script", "script")
        shown = (
            script_text
            if len(script_text) <= SCRIPT_INLINE_LIMIT
            else (script_text[:SCRIPT_INLINE_LIMIT] + "\n# ... (cut)")
        )
        # The script's fence outgrows any backtick run in it ("```\t" closed a fixed one).
        lines += ["", details(str(name), code_block(redact_text(shown), "python")).rstrip("\n")]
    lines += ["", f"bisected with repromatrix {record.repromatrix}", "", "</details>", ""]
    return "\n".join(lines)


def _rounds_text(record: BisectRecord) -> str:
    rounds = record.rounds or len(record.steps)
    at_once = f"{record.jobs} candidates at a time" if record.jobs > 1 else "one at a time"
    return f"{len(record.steps)} tests in {rounds} round{'s' if rounds != 1 else ''} ({at_once})"


def _as_of_text(record: BisectRecord) -> str:
    """Which stack each candidate got: today's, or as of a date (and which)."""
    as_of = record.as_of or {}
    asked = as_of.get("as_of", "none")
    if asked in (None, "none"):
        return "today's (--as-of none)"
    dates = {v: d for v, d in (as_of.get("dates") or {}).items() if d}
    travelled = ", ".join(as_of.get("packages") or []) or "nothing"
    if asked == record.package:
        head = f"as of each {record.package} release's upload date (--as-of {asked})"
    else:
        head = f"as of {asked}"
    text = f"{head}: {travelled} resolved as of then"
    if dates:
        text += "; dates: " + ", ".join(f"{v} {d[:10]}" for v, d in dates.items())
    if as_of.get("today"):
        text += (
            f"; today's {', '.join(as_of['today'])} where "
            f"{', '.join(as_of.get('needed_by') or ['an exact pin'])} (newer) needs them"
        )
    for note in dict.fromkeys(as_of.get("notes") or []):
        text += f"; {note}"
    return text


def _commits_lines(record: BisectRecord) -> list[str]:
    commits = record.commits or {}
    if not commits:
        return []
    lines = [
        f"- commits: {commits.get('count', 0)} first-parent commits of "
        f"{redact_text(str(commits.get('repository', '')))} from {commits.get('good_ref')} "
        f"to {commits.get('bad_ref')}"
    ]
    answer = commits.get("first")
    if answer:
        pr = f" (PR #{answer['pr']})" if answer.get("pr") else ""
        lines.append(
            f"- first {record.first_word} commit: `{answer['sha']}` "
            f"{table_cell(redact_text(answer['subject']))}{pr}"
        )
    return lines


def _index_text(index: dict[str, Any]) -> str:
    """'PyPI; find-links <local>/wheels' from IndexSettings.describe()."""
    parts = [] if index.get("no_index") else [index.get("index_url") or "PyPI"]
    parts += [f"extra index {url}" for url in index.get("extra_index_urls", [])]
    parts += [f"find-links {link}" for link in index.get("find_links", [])]
    return "; ".join(parts)


def _probe_text(probe: dict[str, Any]) -> str:
    if probe.get("case"):
        return f"case `{probe['case']}` (passed = good, skipped = untestable)"
    return f"script `{probe.get('script')}` (exit 0 = good, 125 = untestable, other = bad)"


def write(folder: Path, record: BisectRecord, *, script_text: str | None = None) -> None:
    write_json_atomic(folder / "bisect.json", record.dump())
    write_text_atomic(folder / "bisect.md", markdown(record, script_text=script_text))
