"""What a sweep leaves behind: reports/sweep/<package>-<from>-<to>/

    sweep.json          every release tested (schema below), rewritten as results come in
    sweep.md            for an issue: the results collapsed into ranges, the transitions,
                        a non-monotone warning, the table, the command (details block)
    reproduce-<version>.py
                        one per bad release: a standalone PEP 723 script that re-runs the
                        probe with that release's exact pins (``uv run reproduce-….py``)
    steps/              per release: <version>.install.log, <version>.run.log

sweep.json (schema 1): package, from, to, releases (all | latest-patch |
first-and-last-patch), candidates, results [{version, outcome: good | bad | skip,
seconds, message, installed, environment}], ranges [{first, last, outcome, count}],
transitions [{before, after, old, new, between, untested, bisect}], monotone, reproducers
{version: file}, as_of_refused {packages, candidates, rerun} (releases the --as-of date cap
kept from installing; each result's as_of_cap names the cap), plus what reproduces the
sweep (command, pins, probe, index, as_of).
Fields are added, never renamed. No absolute path of the machine appears in it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repromatrix.github.markdown import code_block, table_cell
from repromatrix.hunts.release_record import ReleaseRecord
from repromatrix.hunts.rerun import refusal_line
from repromatrix.hunts.sources import source_lines
from repromatrix.redact import URL_CREDENTIALS, redact, redact_text
from repromatrix.results import write_json_atomic, write_text_atomic
from repromatrix.search.ranges import Range, Transition

SCHEMA_VERSION = 1
# Where a reproducer of a CPU run takes torch from (PyPI's torch is the CUDA build).
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PYTORCH_CPU_INDEX_NAME = "pytorch-cpu"
# A PEP 723 block already in the user's script: replaced by the reproducer's own.
_SCRIPT_BLOCK = re.compile(r"(?ms)^# /// script[ \t]*$.*?^# ///[ \t]*$\n?")


class ResultRecord(ReleaseRecord):
    message: str = ""  # the error's last line ("" when good)
    installed: str | None = None  # the version the environment really has
    environment: str | None = None  # identity (16 hex digits), None when not built
    python: str | None = None  # the environment's interpreter
    # every distribution of the environment -> version
    resolved: dict[str, str] = Field(default_factory=dict)
    as_of: dict[str, Any] | None = None  # time travel: the date and what travelled
    # The date cap refused what a pin needs: {as_of, date, packages} (probe.DateCap).
    as_of_cap: dict[str, Any] | None = None


class SweepRecord(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: int = Field(default=SCHEMA_VERSION, alias="schema")
    package: str
    from_: str = Field(alias="from")
    to: str
    releases: str = "all"
    status: str = "running"  # running | done | interrupted
    candidates: list[str] = []
    results: list[ResultRecord] = []
    ranges: list[Range] = []
    transitions: list[Transition] = []
    monotone: bool = True
    summary: str = ""  # the one line printed at the end
    reproducers: dict[str, str] = {}  # bad version -> reproducer file name
    seconds: float = 0.0
    started: str = ""
    finished: str = ""
    jobs: int = 1
    pins: list[str] = []
    probe: dict[str, Any] = {}
    index: dict[str, Any] = {}
    as_of: str | None = None  # --as-of as given: a package, a date; None: today's stack
    # The tree of each package built from a folder (hunts/sources.py), and how it
    # moved while the hunt ran.
    sources: dict[str, dict[str, Any]] = {}
    sources_changed: list[str] = []
    # Releases the date cap kept from installing: {packages, candidates, rerun}.
    as_of_refused: dict[str, Any] | None = None
    python: str | None = None
    command: str = ""
    repromatrix: str = ""

    def dump(self) -> dict[str, Any]:
        return redact(self.model_dump(mode="json", by_alias=True))


# --------------------------------------------------------------------------- sweep.md


def nothing_tested(record: SweepRecord) -> bool:
    """No release said good or bad: every one was untestable (an install error, exit
    125, a skipped case). Such a sweep has no answer, whatever its ranges say."""
    return not any(r.outcome != "skip" for r in record.ranges)


def headline(record: SweepRecord) -> str:
    """The ranges, or what stands instead of them: "nothing could be tested", and
    for a sweep that did not finish how far it got ("interrupted after 3 of 6
    releases"): a partial sweep must not read as a complete one."""
    if nothing_tested(record) and record.status == "done":
        said = f"nothing could be tested: all {len(record.results)} releases were untestable"
    elif nothing_tested(record):
        said = "none testable so far" if record.results else "nothing tested yet"
    else:
        said = " · ".join(r.text() for r in record.ranges)
    if record.status == "done":
        return said
    done, total = len(record.results), len(record.candidates)
    if record.status == "interrupted":
        return f"interrupted after {done} of {total} releases: {said}"
    # "running" in a file nobody writes any more: the sweep was killed without a word
    return f"unfinished (running, or killed) after {done} of {total} releases: {said}"


def summary_line(record: SweepRecord) -> str:
    """``tiny-pkg: 1.0.0–1.2.0 good · 1.3.0–2.0.0 bad (9 releases, 1 transition)``."""
    flips = len(record.transitions)
    counted = f"{len(record.results)} release{'s' if len(record.results) != 1 else ''}"
    counted += f", {flips} transition{'s' if flips != 1 else ''}"
    if not record.monotone:
        counted += ", NON-MONOTONE"
    return f"{record.package}: {headline(record)} ({counted})"


def markdown(record: SweepRecord, script_text: str | None = None) -> str:
    probe = record.probe.get("case") or record.probe.get("script") or "?"
    tested = f"{len(record.results)}"
    if record.status != "done":
        tested += f" of {len(record.candidates)}"
    head = headline(record)
    lines = [
        f"## Sweep: {record.package} {record.from_} … {record.to}",
        "",
        f"**{head[0].upper() + head[1:]}**",
        "",
        f"{tested} releases ({record.releases}) with `{probe}`"
        + (f", other pins: `{' '.join(record.pins)}`" if record.pins else "")
        + _as_of_words(record),
    ]
    if record.sources:
        lines += ["", *source_lines(record.sources, record.sources_changed)]
    if record.as_of_refused and record.as_of_refused.get("rerun"):
        lines += ["", f"> **Date cap:** {refusal_line(record.as_of_refused, 'release', '`')}"]
    if record.status != "done":
        lines += [
            "",
            f"> Sweep {record.status}: the table shows only the releases tested so far; "
            "the ranges say nothing about the others.",
        ]
    elif nothing_tested(record):
        lines += [
            "",
            "> Nothing could be tested: the messages below say why each release was untestable.",
        ]
    if record.transitions:
        lines += ["", "Transitions:", ""]
        for transition in record.transitions:
            lines.append(f"- {transition.text()}")
            if transition.bisect:
                lines.append(f"  (narrow it: `{transition.bisect}`)")
    if not record.monotone:
        lines += [
            "",
            f"> **Non-monotone:** the outcome flips {len(record.transitions)} times in this "
            "range; a bisect over it would report only one of these transitions. Bisect "
            "between the two releases of one transition instead.",
        ]
    lines += ["", "| version | outcome | seconds | message |", "|---|---|---:|---|"]
    for result in record.results:
        repro = record.reproducers.get(result.version)
        message = table_cell(redact_text(result.message)) + (f" (`{repro}`)" if repro else "")
        lines.append(f"| {result.version} | {result.outcome} | {result.seconds:.1f} | {message} |")
    if record.reproducers:
        lines += [
            "",
            "Each bad release has a standalone reproducer beside this file: "
            f"`uv run {next(iter(record.reproducers.values()))}`.",
        ]
    lines += ["", "<details>", "<summary>command and environment</summary>", "", "Reproduce with:"]
    lines += ["", code_block(record.command)]
    if record.index:
        shown = "; ".join(
            f"{key}: {', '.join(value) if isinstance(value, list) else value}"
            for key, value in record.index.items()
        )
        lines.append(f"Index: {shown}")
    if record.python:
        lines.append(f"Python: {record.python}")
    if script_text is not None:
        lines += ["", code_block(redact_text(script_text), "python").rstrip("\n")]
    lines += ["", f"swept with repromatrix {record.repromatrix}", "", "</details>", ""]
    return "\n".join(lines)


def _as_of_words(record: SweepRecord) -> str:
    if not record.as_of:
        return ", today's stack (--as-of none)"
    if record.as_of == record.package:
        return f", each release with the stack of its upload day (--as-of {record.as_of})"
    return f", the rest of the stack as of {record.as_of}"


# --------------------------------------------------------------------------- reproducers


def reproducer_name(version: str) -> str:
    return f"reproduce-{version}.py"


def reproducer(
    *,
    requirements: list[str],
    index: dict[str, Any],
    body: str,
    python: str | None = None,
    exclude_newer: dict[str, str] | None = None,
    cpu_packages: tuple[str, ...] = (),
    header: str = "",
    folders: dict[str, str] | None = None,
    package_indexes: dict[str, str] | None = None,
) -> str:
    """A PEP 723 script: ``dependencies`` with the exact pins, ``[tool.uv]`` with the
    index settings (no credentials: uv takes them from its keyring / netrc / env),
    exclude-newer when the sweep ran as of a date, ``cpu_packages`` (torch, ...) from
    the PyTorch CPU index and each of ``package_indexes`` from its own (explicit
    indexes), then the probe's code."""
    sourced = {name: (PYTORCH_CPU_INDEX_NAME, PYTORCH_CPU_INDEX) for name in cpu_packages}
    sourced |= {name: (f"{name}-index", url) for name, url in (package_indexes or {}).items()}
    explicit = dict(sourced.values())
    lines = ["# /// script"]
    if python:
        lines.append(f'# requires-python = ">={python}"')
    lines.append("# dependencies = [")
    lines += [f"#   {_toml_string(r)}," for r in requirements]
    lines.append("# ]")
    uv: list[str] = []
    if index.get("no_index"):
        uv.append("# no-index = true")
    if index.get("index_url"):
        uv.append(f"# index-url = {_toml_string(index['index_url'])}")
    for key, setting in (("extra_index_urls", "extra-index-url"), ("find_links", "find-links")):
        if index.get(key):
            uv.append(f"# {setting} = [{', '.join(map(_toml_string, index[key]))}]")
    if exclude_newer:  # per package, as the sweep's probe resolved them
        table = ", ".join(
            f"{_toml_string(k)} = {_toml_string(v)}" for k, v in exclude_newer.items()
        )
        uv.append(f"# exclude-newer-package = {{ {table} }}")
    if uv or sourced:
        lines += ["# [tool.uv]", *uv]
    for name, url in explicit.items():
        # An explicit index serves only the packages whose source names it.
        lines += [
            "#",
            "# [[tool.uv.index]]",
            f"# name = {_toml_string(name)}",
            f"# url = {_toml_string(url)}",
            "# explicit = true",
        ]
    if sourced or folders:
        # A package built from a folder: its absolute path (a relative one is read from
        # where the script is: a copy of it elsewhere would point at another folder).
        lines += [
            "#",
            "# [tool.uv.sources]",
            *(
                f"# {name} = {{ index = {_toml_string(index)} }}"
                for name, (index, _) in sourced.items()
            ),
            *(
                f"# {name} = {{ path = {_toml_string(path)} }}"
                for name, path in (folders or {}).items()
            ),
        ]
    lines.append("# ///")
    text = "\n".join(lines) + "\n"
    if header:
        text += "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return text + _SCRIPT_BLOCK.sub("", body, count=1)


def portable_index(locations: list[tuple[str, str]]) -> tuple[dict[str, Any], list[str]]:
    """The sources a sweep read ((kind, location), the default index first) as
    ``[tool.uv]`` settings fit for another machine: credentials stripped from URLs
    (userinfo removed, not masked, so uv can take them from its own configuration);
    local folders and file:// indexes left out and returned as notes."""
    settings: dict[str, Any] = {}
    notes: list[str] = []
    first_index = True
    for kind, location in locations:
        if location.startswith("file:") or "://" not in location:
            name = location.rstrip("/").rsplit("/", 1)[-1]
            notes.append(f"this sweep also read a local {kind} ({name}); point uv at your copy")
            first_index = first_index and kind != "index"
            continue
        url = redact_text(URL_CREDENTIALS.sub("://", location))
        if kind == "index" and first_index:
            if url.rstrip("/") != "https://pypi.org/simple":
                settings["index_url"] = url
            first_index = False
        elif kind == "index":
            settings.setdefault("extra_index_urls", []).append(url)
        else:
            settings.setdefault("find_links", []).append(url)
    return settings, list(dict.fromkeys(notes))


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --------------------------------------------------------------------------- writing


def write(
    folder: Path,
    record: SweepRecord,
    *,
    script_text: str | None = None,
    reproducers: dict[str, str] | None = None,
) -> None:
    """sweep.json, sweep.md and the reproducers (name -> text) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (reproducers or {}).items():
        write_text_atomic(folder / name, redact_text(text))
    write_json_atomic(folder / "sweep.json", record.dump())
    write_text_atomic(folder / "sweep.md", markdown(record, script_text))
