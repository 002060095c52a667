"""What a bounds hunt leaves behind: reports/bounds/<target>-<version>/

    bounds.json      the record (record.py), rewritten as cells come in
    summary.md       the table, each wrong bound with the cells that show it (their
                     errors, signatures and ``check`` lines), the diff; ready to paste
                     into an issue of the target's project
    pyproject.diff   the suggested edit of pyproject.toml's ``dependencies``
    steps/           per cell: cell-NN.install.log, cell-NN.run.log

Everything quoted (errors, specifiers, names) is in code spans or blocks: summary.md
is what the tracking issue and the pull-request comment show (tracking.py).
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

from rich.console import Console
from rich.table import Table

from repromatrix.execution._cell.signature import Signature
from repromatrix.github.markdown import code_block, code_span, details, one_line, table_cell
from repromatrix.hunts.bounds.record import BoundsRecord, DependencyRecord, EndRecord, Run
from repromatrix.outcomes import BOUNDS, BoundVerdict
from repromatrix.results import write_json_atomic, write_text_atomic

CELLS_SHOWN = 6  # cells quoted per dependency in summary.md
ANY = "(any)"  # how a range that declares no bound reads


def write(folder: Path, record: BoundsRecord) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / "bounds.json", record.dump())
    write_text_atomic(folder / "summary.md", markdown(record))
    if record.diff:
        write_text_atomic(folder / "pyproject.diff", record.diff)


def headline(record: BoundsRecord) -> str:
    """``trl 1.16.0: 1 of 2 declared bounds wrong (transformers floor-too-low); 14 cells``."""
    wrong = record.wrong
    total = len(record.dependencies)
    name = f"{record.name} {record.version}".strip()
    if record.status != "done":
        said = f"{record.status} after {record.cells} cells"
    elif wrong:
        listed = ", ".join(f"{d.name} {d.verdict.value}" for d in wrong)
        said = f"{len(wrong)} of {total} declared bounds wrong ({listed})"
    elif record.holds:
        said = f"every declared bound holds ({total} dependencies)"
    else:
        untestable = [d.name for d in record.dependencies if d.verdict is BoundVerdict.UNTESTABLE]
        said = f"no bound shown wrong; untestable: {', '.join(untestable)}"
    return f"{name}: {said}; {record.cells} cells"


def end_text(end: EndRecord, which: str) -> str:
    """One end, in words: ``4.56.2 fails; 4.57.0 works``."""
    if end.verdict is BoundVerdict.UNTESTABLE:
        return f"untestable: {end.reason}"
    if which == "floor":
        if end.verdict is BoundVerdict.FLOOR_TOO_LOW:
            return f"{end.tested} fails; {end.works} works" + _untested(end)
        if end.verdict is BoundVerdict.FLOORS_CONFLICT:
            return f"{end.tested} works alone; {end.reason}"
        return f"{end.tested} works"
    if end.verdict is BoundVerdict.CEILING_MISSING:
        return f"{end.tested} fails; {end.works} works, {end.fails} fails first" + _untested(end)
    if end.verdict is BoundVerdict.CEILING_TOO_TIGHT:
        fails = f", {end.fails} fails" if end.fails else ""
        return f"{end.tested} works; shut out, {end.works} works{fails}"
    text = f"{end.tested} works"
    if end.excluded:
        text += f"; {end.fails or end.excluded}, shut out, fails"
    return text


def _untested(end: EndRecord) -> str:
    return f" ({', '.join(end.untested)} could not be tested)" if end.untested else ""


def markdown(record: BoundsRecord) -> str:
    lines = [
        f"## Bounds: {code_span(f'{record.name} {record.version}'.strip())}",
        "",
        f"**{table_cell(headline(record))}**",
        "",
        f"Probe: {code_span(_probe(record))} · Python {record.python}"
        + (f" · held: {code_span(' '.join(record.pins))}" if record.pins else ""),
    ]
    if record.working_set:
        shown = ", ".join(f"{n}=={v}" for n, v in sorted(record.working_set.items()))
        lines += ["", f"Each end judged beside {code_span(shown)} ({record.working_from})."]
    lines += [
        "",
        "| dependency | declared | verdict | suggested | floor | ceiling | cells |",
        "|---|---|---|---|---|---|---:|",
    ]
    for d in record.dependencies:
        cells = {r.cell for r in (*d.floor.cells, *d.ceiling.cells)}
        lines.append(
            f"| {code_span(d.name, cell=True)} | {code_span(d.declared or ANY, cell=True)} | "
            f"{BOUNDS[d.verdict].symbol} {d.verdict.value} | "
            f"{code_span(d.suggested or ANY, cell=True)} | "
            f"{code_span(end_text(d.floor, 'floor'), cell=True, limit=160)} | "
            f"{code_span(end_text(d.ceiling, 'ceiling'), cell=True, limit=160)} | {len(cells)} |"
        )
    for d in record.dependencies:
        if d.verdict is not BoundVerdict.OK:
            lines += ["", *_evidence(d)]
    if record.diff:
        lines += ["", "Suggested change to `pyproject.toml`:", "", code_block(record.diff, "diff")]
    more = [f"Reproduce the whole hunt with:\n\n{code_block(record.command, 'sh')}"]
    if record.left_out:
        more.append(f"Requirements that do not apply here:\n\n{_left_out(record)}\n")
    if record.notes:
        more.append("Notes:\n\n" + "\n".join(f"- {code_span(n)}" for n in record.notes) + "\n")
    if record.source:
        more.append(f"Source: {code_span(str(record.source))}\n")
    more.append(f"{record.cells} cells, {record.seconds:.0f} s, repromatrix {record.repromatrix}\n")
    lines += ["", details("command, what was left out, notes", "\n".join(more))]
    return "\n".join(lines) + "\n"


def _left_out(record: BoundsRecord) -> str:
    """One line per extra not asked for (how many requirements), one per other."""
    extras: dict[str, int] = {}
    lines = []
    for x in record.left_out:
        if x["why"].startswith("extra "):
            name = x["why"].split()[1]
            extras[name] = extras.get(name, 0) + 1
        else:
            lines.append(f"- {code_span(x['requirement'])}: {code_span(x['why'])}")
    if extras:
        counted = ", ".join(f"{code_span(name)} ({n})" for name, n in extras.items())
        lines.append(f"- the extras not asked for (`--extra NAME`): {counted}")
    return "\n".join(lines)


def _evidence(d: DependencyRecord) -> list[str]:
    """A dependency's answer with the cells that show it."""
    row = BOUNDS[d.verdict]
    lines = [
        f"### {row.symbol} {code_span(d.name)}: {d.verdict.value}",
        "",
        f"Declared {code_span(d.declared or ANY)}; suggested {code_span(d.suggested or ANY)}.",
    ]
    for which, end in (("floor", d.floor), ("ceiling", d.ceiling)):
        if end.verdict is BoundVerdict.OK and which == "ceiling" and not end.excluded:
            continue
        said = f"- {which}: {end.verdict.value}: {code_span(end.reason or end_text(end, which))}"
        lines.append(said + (f" ({end.evidence})" if end.evidence else ""))
    shown = _showing(d)
    if shown:
        lines += ["", "Cells that show it:", ""]
        for run in shown:
            pins = " ".join(f"{n}=={v}" for n, v in sorted(run.pins.items()))
            said = f"- cell {run.cell} ({run.role}): {code_span(pins)} **{run.outcome.value}**"
            if run.error:
                said += f": {code_span(run.error, limit=300)}"
            if run.signature:
                died = Signature.from_dict(run.signature)
                said += f" (signature `{died.key}`: {code_span(died.line(), limit=200)})"
            lines += [said, "", code_block(run.repro, "sh")]
    return lines


def _showing(d: DependencyRecord) -> list[Run]:
    """The cells of the ends that are not ok, failures first, at most CELLS_SHOWN."""
    runs: dict[int, Run] = {}
    for end in (d.floor, d.ceiling):
        if end.verdict is not BoundVerdict.OK or end.excluded:
            for run in end.cells:
                runs.setdefault(run.cell, run)
    ordered = sorted(runs.values(), key=lambda r: (r.outcome.value == "good", r.cell))
    return ordered[:CELLS_SHOWN]


def _probe(record: BoundsRecord) -> str:
    return str(record.probe.get("case") or record.probe.get("script") or "?")


def console_table(record: BoundsRecord, console: Console) -> None:
    table = Table(title=headline(record), title_justify="left")
    for column in ("dependency", "declared", "verdict", "suggested"):
        table.add_column(column, no_wrap=True)
    for column in ("floor", "ceiling"):
        table.add_column(column)
    for d in record.dependencies:
        row = BOUNDS[d.verdict]
        table.add_row(
            d.name, d.declared or ANY, f"{row.symbol} {d.verdict.value}", d.suggested or ANY,
            one_line(end_text(d.floor, "floor"), 80), one_line(end_text(d.ceiling, "ceiling"), 80),
        )  # fmt: skip
    console.print(table)


# --------------------------------------------------------------------------- the diff


def pyproject_diff(record: BoundsRecord, folder: Path | None) -> str:
    """The edit of pyproject.toml's ``dependencies`` that the suggestions make: the
    target's own file where it is a folder with one, else its Requires-Dist written
    as a ``dependencies`` list ("" when nothing changes)."""
    changes = {
        d.name: d.suggested
        for d in record.dependencies
        if d.verdict is not BoundVerdict.OK and d.suggested != d.declared and d.requirements
    }
    if not changes:
        return ""
    path = folder / "pyproject.toml" if folder is not None else None
    if path is not None and path.is_file():
        before = path.read_text(encoding="utf-8")
    else:
        before = _declared_toml(record)
    after = before
    for name, suggested in changes.items():
        after = _replaced(after, name, suggested)
    if after == before:
        return ""
    diff = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        "a/pyproject.toml",
        "b/pyproject.toml",
    )
    return "".join(diff)


def _declared_toml(record: BoundsRecord) -> str:
    """The tested dependencies' Requires-Dist as pyproject.toml writes them: the
    extras' under ``[project.optional-dependencies]``, without their ``extra`` marker."""
    base: list[str] = []
    extras: dict[str, list[str]] = {}
    for d in record.dependencies:
        for line in d.requirements:
            if d.extra is None:
                base.append(line)
            else:
                bare = _EXTRA_MARKER.sub("", line)
                extras.setdefault(d.extra, []).append(bare)
    quoted = lambda line: json.dumps(line)  # noqa: E731 -- a TOML basic string
    text = "[project]\ndependencies = [\n" + "".join(f"    {quoted(x)},\n" for x in base) + "]\n"
    if extras:
        text += "\n[project.optional-dependencies]\n"
        for extra, lines in extras.items():
            text += f"{extra} = [{', '.join(quoted(x) for x in lines)}]\n"
    return text


_EXTRA_MARKER = re.compile(r"""\s*;\s*extra\s*==\s*["'][^"']*["']\s*$""")


def _replaced(text: str, name: str, suggested: str) -> str:
    """Each quoted requirement on ``name``: its specifier replaced (extras and
    markers kept)."""
    spelled = re.escape(name).replace(r"\-", "[-_.]")
    pattern = re.compile(
        rf"(?P<q>[\"'])(?P<name>(?i:{spelled}))(?P<extras>\[[^\]]*\])?\s*"
        rf"(?P<spec>[<>=!~][^;\"']*)?(?P<rest>;[^\"']*)?(?P=q)"
    )

    def edit(match: re.Match) -> str:
        rest = match.group("rest") or ""
        extras = match.group("extras") or ""
        return f"{match['q']}{match['name']}{extras}{suggested}{rest}{match['q']}"

    return pattern.sub(edit, text)
