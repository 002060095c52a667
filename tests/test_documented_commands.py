"""Every command the docs show or the tool prints works: each ``nox -s NAME [-- ARGS]``
names a session ``nox -l`` lists (the arguments after ``--`` parse as the command that
session runs), each ``repromatrix CMD ...`` / ``python -m repromatrix CMD ...`` parses
with the CLI's own parser. Sources: README.md, docs/, cases/ and reports/ READMEs,
examples/, benchmarks/ docstrings, the noxfile's docstrings, the CLI's help texts and
module synopses, the reports the tool wrote that are committed (summary.md, results.json,
bisect.md/json), the lines it writes (repro, bisect, sweep, culprit, triage's
``locally:``, init's ``next:``) made here from small inputs, and what ``repromatrix
init`` puts in a project of one's own, checked against that project's noxfile.

How commands are found and what counts as a mistake: tests/support/commands.py.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version
from support.commands import (
    HARNESS,
    NOT_HARNESS,
    Command,
    Project,
    in_markdown,
    in_plain_text,
    in_python_docstrings,
    problems,
)

from repromatrix.cli import app
from repromatrix.hunt_table import hunt
from repromatrix.hunts.bisect import options
from repromatrix.hunts.bisect.options import commit_command
from repromatrix.hunts.bounds import options as bounds_options_module
from repromatrix.hunts.bounds.declared import Target
from repromatrix.hunts.bounds.probing import CellMaker
from repromatrix.hunts.bounds.ranges import Dependency
from repromatrix.hunts.sweep import options as sweep_options
from repromatrix.matrix import load_matrix
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.matrix.sessions import read_sessions
from repromatrix.nightly.triage import CulpritRequest
from repromatrix.pipeline import repro_command
from repromatrix.verdicts.transitions import bisect_command

SCAFFOLD = Path("src/repromatrix/scaffold")


@pytest.fixture(scope="module")
def nox_sessions(repo_root: Path) -> list[dict]:
    """``nox -l --json`` of this repository, every session (``-k True``: not only the
    default one), run once."""
    every = ["-k", "True"]
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(repo_root / "noxfile.py"), "-l", "--json", *every],
        capture_output=True, text=True, cwd=repo_root, timeout=120,
        env={**os.environ, "NOX_SCRIPT_MODE": "none"},  # the test venv has the script's deps
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


@pytest.fixture(scope="module")
def this_project(repo_root: Path, nox_sessions: list[dict]) -> Project:
    return Project(
        sessions={s["session"] for s in nox_sessions},
        combinations={c.id for c in load_matrix(repo_root / "matrix.yaml").combinations()},
        tags={tag for s in nox_sessions for tag in s["tags"]},
    )


@pytest.fixture(scope="module")
def scaffold_project(repo_root: Path) -> Project:
    """A project ``repromatrix init`` made: its noxfile's sessions (read statically; it
    lists its combinations with the installed repromatrix command) and its matrix."""
    sessions = read_sessions(repo_root / SCAFFOLD)
    assert sessions is not None and sessions.per_combination
    matrix = load_matrix(repo_root / SCAFFOLD / "matrix.yaml")
    combinations = {c.id for c in matrix.combinations()}
    return Project(set(sessions.names) | combinations, combinations, set(matrix.tiers))


def test_every_session_is_known_to_the_checker(this_project: Project) -> None:
    """A new session must say where its arguments go (support/commands.py HARNESS)."""
    unknown = this_project.sessions - set(HARNESS) - NOT_HARNESS - this_project.combinations
    assert not unknown


# -- the sources --------------------------------------------------------------------------


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def readme(root: Path) -> list[Command]:
    return in_markdown((root / "README.md").read_text(), "README.md")


def docs(root: Path) -> list[Command]:
    paths = sorted((root / "docs").rglob("*.md")) + sorted((root / "cases").glob("*.md"))
    paths += [root / "reports" / "README.md", *sorted(root.glob("reports/*/README.md"))]
    return [c for p in paths for c in in_markdown(p.read_text(), _relative(p, root))]


def examples(root: Path) -> list[Command]:
    found = []
    for path in sorted((root / "examples").rglob("*")) + sorted(root.glob("benchmarks/**/*.py")):
        name = _relative(path, root)
        if path.suffix == ".py":
            found += in_python_docstrings(path.read_text(), name)
        elif path.suffix == ".md":
            found += in_markdown(path.read_text(), name)
        elif path.is_file():
            found += in_plain_text(path.read_text(), name)
    return found


def noxfile(root: Path) -> list[Command]:
    return in_python_docstrings((root / "noxfile.py").read_text(), "noxfile.py")


def cli_help(root: Path) -> list[Command]:
    """Each command's --help (descriptions, option help, epilogs) and the usage
    synopses at the top of the cli modules."""
    parser = app.build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    # Past the usage block: argparse writes that from the parser itself.
    found = in_plain_text(_past_usage(parser), "repromatrix --help")
    for name, command in commands.choices.items():
        found += in_plain_text(_past_usage(command), f"repromatrix {name} --help")
    for path in sorted((root / "src" / "repromatrix" / "cli").glob("*.py")):
        found += in_python_docstrings(path.read_text(), _relative(path, root))
    return found


def _past_usage(parser: argparse.ArgumentParser) -> str:
    return parser.format_help().removeprefix(parser.format_usage())


def committed_reports(root: Path) -> list[Command]:
    """What the tool wrote and the repository keeps: the baseline's, the atlas's and
    bounds' summary.md, the baseline's results.json, the atlas's atlas.json (each
    cell's repro), bounds' bounds.json, the example bisects' bisect.json (their
    bisect.md are in docs/)."""
    found = []
    summaries = sorted(root.glob("reports/baseline-*/summary.md"))
    summaries += sorted(root.glob("reports/atlas-*/summary.md"))
    summaries += sorted(root.glob("reports/bounds-*/*/summary.md"))
    for path in summaries:
        found += in_markdown(path.read_text(), _relative(path, root))
    for path in (
        sorted(root.glob("reports/baseline-*/results.json"))
        + sorted(root.glob("reports/atlas-*/atlas.json"))
        + sorted(root.glob("docs/examples/*/*.json"))
        + sorted(root.glob("reports/bounds-*/*/bounds.json"))
    ):
        found += _json_commands(json.loads(path.read_text()), _relative(path, root))
    return found


def _json_commands(data: object, name: str, key: str = "") -> Iterator[Command]:
    if isinstance(data, dict):
        for k, value in data.items():
            yield from _json_commands(value, name, f"{key}.{k}" if key else k)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _json_commands(value, name, f"{key}[{i}]")
    elif isinstance(data, str) and key.rsplit(".", 1)[-1] in ("repro", "bisect", "command"):
        yield from in_plain_text(data, f"{name} {key}")


def written_by_the_tool(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[Command]:
    """The rerun lines the tool writes, made from small inputs with ``folder`` as the
    working folder (and the matrix's folder): this repository (nox sessions) or a
    folder without a noxfile (repromatrix commands)."""
    monkeypatch.chdir(folder)
    lines: list[tuple[str, str]] = []
    matrix = load_matrix(folder / "matrix.yaml")
    combo = next(iter(matrix.combinations()))
    lines.append(("results.json repro", repro_command(combo, matrix=matrix.path)))
    case = "test_whisper_lora.py::test_lora_gets_gradients[reentrant]"
    lines.append(("summary.md Repro", repro_command(combo, case, matrix=matrix.path)))
    other = folder / "nightly.yaml"
    if not other.exists():
        shutil.copy(matrix.path, other)
    lines.append(("repro, --matrix", repro_command(combo, case, matrix=other)))
    # verdicts/transitions.py: nox when the run's repro line was (_has_nox)
    nox = repro_command(combo, matrix=matrix.path).startswith("nox ")
    lines.append(
        ("summary.md bisect", bisect_command("peft", "0.15.2", "0.17.1", ["torch==2.13.0",
         "transformers=null"], case, "fixed", nox=nox))
    )  # fmt: skip

    (folder / "probe.py").write_text("raise SystemExit(0)\n")
    (folder / "wheels").mkdir(exist_ok=True)
    bisect_options = _options_from_cli([
        "bisect", "--package", "transformers", "--good", "4.46.3", "--bad", "4.56.2",
        "--pin", "torch==2.13.0", "--pin", "peft=null", "--script", "probe.py",
        "--find", "first-good", "--pre", "--as-of", "2025-01-01", "--jobs", "2",
        "--wheelhouse", "wheels",
    ])  # fmt: skip
    plan = options.Plan(
        package="transformers", good=Version("4.46.3"), bad=Version("4.56.2"), listing=None,
        candidates=[], walk=[], index=None, probe=bisect_options.probe, folder=folder,
        options=bisect_options,
    )  # fmt: skip
    lines.append(("bisect.md Reproduce with", options.reproduce_command(bisect_options, plan)))
    bisect_options.git = "https://github.com/huggingface/transformers"
    lines.append(("bisect.md (--git)", commit_command(bisect_options, plan.probe)))

    sweep_run_options = _options_from_cli([
        "sweep", "--package", "transformers", "--from", "4.50", "--to", "5.2",
        "--releases", "latest-patch", "--pin", "torch==2.13.0", "--script", "probe.py",
        "--jobs", "2", "--pre", "--wheelhouse", "wheels",
    ])  # fmt: skip
    sweep_plan = sweep_options.Plan(
        package="transformers", low=Version("4.50"), high=Version("5.2"), listing=None,
        candidates=[], index=None, probe=sweep_run_options.probe, folder=folder,
        options=sweep_run_options,
    )  # fmt: skip
    lines.append(
        ("sweep.md Reproduce with", sweep_options.reproduce_command(sweep_run_options, sweep_plan))
    )

    (folder / "good.txt").write_text("transformers==4.52.4\n")
    (folder / "bad.txt").write_text("transformers==5.0.0\n")
    culprit_options = _options_from_cli([
        "culprit", "--good-lock", "good.txt", "--bad-lock", "bad.txt", "--script", "probe.py",
        "--pin", "torch==2.13.0", "--jobs", "2",
    ])  # fmt: skip
    lines.append(("culprit.md Reproduce", culprit_options.command))

    bounds_options = _options_from_cli([
        "bounds", "trl==0.24.0", "--script", "probe.py", "--only", "transformers",
        "--extra", "peft", "--pin", "torch==2.13.0", "--wheelhouse", "wheels", "--jobs", "2",
    ])  # fmt: skip
    bounds_plan = bounds_options_module.Plan(
        options=bounds_options, python="3.11", interpreter="python", free=(), left_out=[],
        target=Target("trl", "0.24.0", "trl==0.24.0", Pin("trl", PinKind.EXACT, "0.24.0"), (), ()),
        dependencies=[Dependency("transformers", ">=4.56", (), (Version("4.56.0"),))],
        index=None, probe=bounds_options.probe, folder=folder,
    )  # fmt: skip
    lines.append(("bounds: reproduce", bounds_options_module.reproduce_command(bounds_plan)))
    # A cell's check line; a release the range shuts out travels as an override in --cell.
    maker = CellMaker(bounds_plan, prober=None, on_run=None)  # type: ignore[arg-type]
    lines.append(("bounds.json repro", maker.repro({"transformers": Version("4.56.0")})))
    lines.append(("bounds.json repro (shut out)", maker.repro({"transformers": Version("4.1")})))

    (folder / "project").mkdir(exist_ok=True)
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert app.main(["init", "--force", "project"]) == 0
    lines.append(("init's next: line", printed.getvalue()))

    found = []
    for where, text in lines:
        commands = in_plain_text(text, where)
        assert commands, f"{where}: no command found in {text!r}"
        found += commands
    return found


def triage_locally(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[Command]:
    """triage's ``locally:`` line for a culprit hunt, printed in ``folder``."""
    monkeypatch.chdir(folder)
    hunt = CulpritRequest(
        combination="tf-latest", case="test_a.py::test_b[x]", good=("peft==0.15.2",),
        bad=("peft==0.17.1",), pins=("torch==2.13.0",), changed=("peft 0.15.2 -> 0.17.1",),
        reason="two packages moved",
    )  # fmt: skip
    line = f"  locally: {hunt.command('reports/baseline', 'reports/nightly')}"
    return in_plain_text(line, "triage locally:")


def _options_from_cli(argv: list[str]) -> Any:
    """The options a hunt's command line builds from ``argv`` (its module's
    ``options``, as the command runs it)."""
    args = app.build_parser(argv[0]).parse_args(argv)
    return importlib.import_module(hunt(argv[0]).cli).options(args)


def scaffold(root: Path) -> list[Command]:
    """What ``repromatrix init`` puts in a project: its noxfile's and cases' docstrings,
    matrix.yaml's comments."""
    found = []
    for path in sorted((root / SCAFFOLD).rglob("*.py")):
        found += in_python_docstrings(path.read_text(), _relative(path, root))
    path = root / SCAFFOLD / "matrix.yaml"
    return found + in_plain_text(path.read_text(), _relative(path, root))


# -- the checks ---------------------------------------------------------------------------

# source -> (how to collect it, at least this many commands: a collector that silently
# finds nothing fails here)
SOURCES: dict[str, tuple[Callable[[Path], list[Command]], int]] = {
    "README.md": (readme, 15),
    "docs": (docs, 100),
    "examples and benchmarks": (examples, 2),
    "noxfile docstrings": (noxfile, 9),
    "cli help and synopses": (cli_help, 8),
    "committed reports": (committed_reports, 30),
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_documented_commands_work(source: str, repo_root: Path, this_project: Project) -> None:
    collect, at_least = SOURCES[source]
    commands = collect(repo_root)
    assert len(commands) >= at_least, [c.text for c in commands]
    found = [problem for command in commands for problem in problems(command, this_project)]
    assert not found, "\n".join(found)


def test_lines_the_tool_writes_here_name_sessions_this_repository_has(
    repo_root: Path, tmp_path: Path, this_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This repository's noxfile and matrix, in a folder the test may write to.
    for name in ("noxfile.py", "matrix.yaml"):
        shutil.copy(repo_root / name, tmp_path / name)
    commands = written_by_the_tool(tmp_path, monkeypatch)
    found = [problem for command in commands for problem in problems(command, this_project)]
    assert not found, "\n".join(found)
    by_program = {c.where.split(":")[0]: c.text.split()[0] for c in commands}
    assert by_program["bisect.md Reproduce with"] == "nox"
    assert by_program["culprit.md Reproduce"] == "nox"
    (locally,) = triage_locally(tmp_path, monkeypatch)
    assert not problems(locally, this_project)


def test_lines_the_tool_writes_without_a_noxfile_are_repromatrix_commands(
    repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(repo_root / "matrix.yaml", tmp_path / "matrix.yaml")
    no_sessions = Project(sessions=set(), combinations=set())
    commands = written_by_the_tool(tmp_path, monkeypatch)
    found = [problem for command in commands for problem in problems(command, no_sessions)]
    assert not found, "\n".join(found)
    assert not [c for c in commands if c.text.startswith("nox")]


def test_triage_says_repromatrix_culprit_where_no_noxfile_has_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (locally,) = triage_locally(tmp_path, monkeypatch)
    assert not problems(locally, Project(sessions=set(), combinations=set()))


def test_a_scaffolded_projects_commands_name_its_own_sessions(
    repo_root: Path, scaffold_project: Project
) -> None:
    commands = scaffold(repo_root)
    assert len(commands) >= 5, [c.text for c in commands]
    found = [problem for command in commands for problem in problems(command, scaffold_project)]
    assert not found, "\n".join(found)


# -- the checker can fail -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("nox -s culprt", "no nox session 'culprt'"),
        ("python3 -m nox -s lint tsets", "no nox session 'tsets'"),
        ("nox -l --json -t nightlies", "no nox session tagged 'nightlies'"),
        ("nox --lst", "unrecognized arguments: --lst"),
        ("repromatrix bisect --pakage x", "no option --pakage"),
        ("python -m repromatrix bsect", "invalid choice: 'bsect'"),
        ("repromatrix sweep --package P --from 1 --to 2 --script F.py --releases al", "'al'"),
        ("nox -s bisect -- --package P --good 1 --bad 2", "one of the arguments --case"),
        ("nox -s matrix -- --tierr smoke", "no option --tierr"),
        ("nox -s tf5-latest -- --reruns many", "invalid int value: 'many'"),
        ("repromatrix check (--case ID | --scipt F.py) --pin PKG==VER", "--scipt"),
    ],
)
def test_a_wrong_line_is_reported_with_where_it_is(
    line: str, says: str, this_project: Project
) -> None:
    text = f"Run it:\n\n```bash\n{line}   # a comment\n```\n"
    (command,) = in_markdown(text, "guide.md")
    found = problems(command, this_project)
    assert found, line
    assert found[0].startswith(f"guide.md:4: {line!r}: "), found
    assert says in found[0], found


def test_continuations_comments_and_chains_are_one_command_each(this_project: Project) -> None:
    text = (
        "```bash\n"
        "python3 -m pip install nox && python3 -m nox -s bisect -- --package p \\\n"
        "    --good 1 --bad 2 --script F.py   # first bad\n"
        "cd my-library && repromatrix init\n"
        "```\n"
        "Also `nox -s check -- --pin PKG==VER\n  --case ID` and `repromatrix` alone.\n"
    )
    found = in_markdown(text, "x.md")
    assert [(c.where, c.text) for c in found] == [
        ("x.md:2", "python3 -m nox -s bisect -- --package p --good 1 --bad 2 --script F.py"),
        ("x.md:4", "repromatrix init"),
        ("x.md:6", "nox -s check -- --pin PKG==VER --case ID"),
        ("x.md:7", "repromatrix"),
    ]
    assert not [p for c in found for p in problems(c, this_project)]
