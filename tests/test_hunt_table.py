"""hunt_table.py: one row per hunt, and everything that offers a hunt reads it: the
command line, the noxfile (and its static read), the issue bot, the nightly's triage.
A hunt is one folder under hunts/ and one row; these tests hold every reader to it."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

from repromatrix.cli.app import COMMAND_GROUPS
from repromatrix.hunt_table import HUNT_NAMES, HUNTS
from repromatrix.hunts.hunt import Hunt
from repromatrix.issue.command import HUNT_KINDS, KINDS, WORDS
from repromatrix.issue.offered import offer
from repromatrix.issue.plan import JOB_KINDS
from repromatrix.matrix.model import RESERVED_IDS
from repromatrix.matrix.sessions import read_sessions
from repromatrix.nightly.follow import WORKFLOWS


def _positional(function) -> list[inspect.Parameter]:
    found = inspect.signature(function).parameters.values()
    return [p for p in found if p.kind is not inspect.Parameter.KEYWORD_ONLY]


@pytest.mark.parametrize("row", HUNTS, ids=lambda row: row.name)
def test_each_row_names_a_hunt_of_the_one_shape(row) -> None:
    declared = getattr(importlib.import_module(row.module), row.attribute)
    assert isinstance(declared, Hunt) and declared.name == row.name and declared.row is row
    # plan(options, voice), run(plan, runner, voice): the hunt is handed its runner
    # (what a test hands in besides, keyword-only, is not the road's).
    assert len(_positional(declared.plan)) == 2
    assert len(_positional(declared.run)) == 3
    if row.name == "atlas":
        # Its probe is a whole cell: it is handed a cell runner, not a Prober.
        runner = _positional(declared.run)[1]
        assert runner.name == "cells" and "CellRunner" in str(runner.annotation)
    command = importlib.import_module(row.cli)
    assert (row.name,) == command.COMMANDS
    assert callable(command.options) and callable(command.runner)
    assert ((row.name,), row.cli) in COMMAND_GROUPS
    assert Path(importlib.import_module(f"repromatrix.hunts.{row.name}").__file__).name == (
        "__init__.py"
    ), "one folder per hunt"
    if row.issue:  # offered on issues: its module in issue/offered/, the same hunt
        assert offer(row.name).hunt is declared
    else:
        with pytest.raises(ModuleNotFoundError):
            offer(row.name)


def test_every_reader_offers_the_tables_hunts(repo_root: Path) -> None:
    sessions = read_sessions(repo_root)
    assert sessions is not None and sessions.names >= HUNT_NAMES, "one nox session per hunt"
    assert HUNT_NAMES <= RESERVED_IDS, "no combination may take a hunt's session name"
    assert set(HUNT_KINDS) == {row.name for row in HUNTS if row.issue}
    assert set(KINDS) == {*HUNT_KINDS, *WORDS} and set(WORDS) == {"approve", "keep"}
    assert set(JOB_KINDS) == {*HUNT_KINDS, "watch"}, "the bot's jobs: the table's, and the watch"
    assert {row.name: row.workflow for row in HUNTS if row.workflow} == WORKFLOWS
    for workflow in WORKFLOWS.values():
        assert (repo_root / ".github" / "workflows" / workflow).is_file(), workflow


def test_init_s_noxfile_reads_the_table_from_list_hunts(
    repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """repromatrix init's noxfile makes a session of each row `list --hunts` prints
    (a hunt added to the table, such as bounds, appears there with no edit), and the
    static read of that noxfile knows it does."""
    from repromatrix import cli

    assert cli.main(["list", "--hunts", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["name"] for row in rows] == [row.name for row in HUNTS]
    for listed, row in zip(rows, HUNTS, strict=True):
        assert listed == {"name": row.name, "session": list(row.session),
                          "usage": row.words.usage, "exits": row.words.exits}  # fmt: skip
    scaffold = read_sessions(repo_root / "src" / "repromatrix" / "scaffold")
    assert scaffold is not None and scaffold.names >= HUNT_NAMES


def test_the_table_loads_no_hunt() -> None:
    """The parser, --help and the noxfile read the table: it imports nothing."""
    source = Path(importlib.import_module("repromatrix.hunt_table").__file__).read_text()
    imported = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imported == ["from __future__ import annotations", "from dataclasses import dataclass"]
