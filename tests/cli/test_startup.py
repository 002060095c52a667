"""Start-up: a command imports only what it uses. Building the parser and every
``--help`` load none of the commands' implementations (pydantic models, YAML, rich,
bisect/, the environment builder, the results and reports); ``check`` on a cell
loads no models either. Structural, in a fresh interpreter: which modules are in
sys.modules, not how long it took (benchmarks/bench_startup.py has the figures)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.pip import PIP

from repromatrix.cli import bisect as bisect_commands
from repromatrix.cli import sweep as sweep_commands
from repromatrix.search.bisection import Find
from repromatrix.search.ranges import Releases

# Modules whose import costs a command's start-up tens of milliseconds, and that
# the parser never needs.
HEAVY = (
    "pydantic",
    "yaml",
    "rich",
    "packaging.requirements",
    "repromatrix.probe.check",
    "repromatrix.probe.rounds",
    "repromatrix.hunts.bisect",
    "repromatrix.hunts.sweep",
    "repromatrix.hunts.culprit",
    "repromatrix.search.ranges",
    "repromatrix.environment.as_of",
    "repromatrix.environment.store",
    "repromatrix.execution.runner",
    "repromatrix.matrix.model",
    "repromatrix.matrix.load",
    "repromatrix.matrix.read",
    "repromatrix.matrix.validation",
    "repromatrix.matrix.levels",
    "repromatrix.matrix.tiers",
    "repromatrix.pipeline",
    "repromatrix.reports",
    "repromatrix.results",
    "repromatrix.verdicts",
    "repromatrix.nightly.triage",
)
COMMANDS = (
    "list", "run", "report", "bisect", "check", "culprit", "ci-matrix", "merge", "triage",
    "hunt-inputs", "baseline", "hunt-comment", "sweep", "init", "issue", "dry-run", "atlas",
    "bounds", "bounds-post", "gc",
)  # fmt: skip


def _fresh(code: str, cwd: Path | None = None, timeout: float = 60) -> Any:
    """What ``code``, run in a fresh interpreter (sys.path as ours), printed as JSON on
    its last line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _loaded_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after ``code``."""
    return _fresh(code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n")


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_help_of_every_command_loads_no_implementation() -> None:
    loaded = _loaded_after(
        textwrap.dedent(f"""
        import contextlib, io
        from repromatrix.cli.app import build_parser, main
        build_parser()
        for argv in [["--help"], *([c, "--help"] for c in {list(COMMANDS)!r})]:
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(argv) == 0, argv
        """)
    )
    assert "repromatrix.cli.app" in loaded and "repromatrix.cli.nightly" in loaded
    assert _heavy(loaded) == []


def test_the_parser_knows_every_command() -> None:
    # The list above is the parser's: a command added later is checked too.
    from repromatrix.cli.app import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    assert sorted(commands.choices) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_line_builds_its_own_parser_as_the_full_one_has_it(command: str) -> None:
    # build_parser(command) builds only that command's group: what it parses must be
    # what the full parser parses, and a group must declare every command it adds.
    from repromatrix.cli.app import build_parser

    def subcommand(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        (commands,) = [a for a in parser._actions if a.dest == "command"]
        return commands.choices[command]

    alone = build_parser(command)
    assert subcommand(alone).format_help() == subcommand(build_parser()).format_help()
    (commands,) = [a for a in alone._actions if a.dest == "command"]
    assert len(commands.choices) < len(COMMANDS)


def test_each_group_module_defines_the_commands_the_app_names_for_it() -> None:
    # The app imports a group's module by the names it lists for it: a command added to
    # a module but not to that list would never be parsed.
    import importlib

    from repromatrix.cli.app import COMMAND_GROUPS

    for names, module in COMMAND_GROUPS:
        assert tuple(importlib.import_module(module).COMMANDS) == names, module


@pytest.mark.parametrize(
    ("command", "absent"),
    [
        ("check", ("repromatrix.cli.nightly", "repromatrix.github.client", "repromatrix.cli.init")),
        ("run", ("repromatrix.cli.bisect", "repromatrix.cli.nightly", "repromatrix.cli.issue")),
        ("triage", ("repromatrix.cli.bisect", "repromatrix.cli.init")),
    ],
)
def test_a_command_line_loads_only_its_own_group(command: str, absent: tuple[str, ...]) -> None:
    loaded = _loaded_after(
        f"from repromatrix.cli.app import build_parser\nbuild_parser({command!r})\n"
    )
    assert "repromatrix.cli.app" in loaded
    assert [m for m in absent if m in loaded] == []


def test_a_misspelt_command_gets_every_choice(capsys: pytest.CaptureFixture) -> None:
    from repromatrix.cli.app import main

    assert main(["chek", "--pin", "six==1.16.0"]) == 2
    said = capsys.readouterr().err
    assert "invalid choice: 'chek'" in said and "'check'" in said and "'sweep'" in said


def test_check_on_a_cell_loads_no_models() -> None:
    # What `check` imports to parse its pins, find its cell and run a script in it.
    loaded = _loaded_after(
        "import repromatrix.cli.app, repromatrix.probe.check\n"
        "from repromatrix.matrix.pins import parse_pin_option\n"
        "parse_pin_option('torch==2.13.0')\n"
    )
    assert "repromatrix.probe.check" in loaded and "repromatrix.environment.store" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("pydantic", "yaml", "rich")] == []
    assert "repromatrix.matrix.model" not in loaded and "repromatrix.results" not in loaded
    # packaging.utils loads packaging.tags (platform, sysconfig, logging): names.py
    # stands in for it; the upload-date client loads only for --as-of.
    assert "packaging.tags" not in loaded and "repromatrix.environment.as_of" not in loaded


@pytest.mark.e2e
def test_check_in_a_reused_cell_loads_only_what_it_runs(tmp_path: Path) -> None:
    # The whole command, twice, in fresh interpreters: the first builds the cell of a
    # script probe, the second finds it again and runs the script.
    house = tmp_path / "wheels"
    subprocess.run([*PIP, "download", "-d", str(house), "six==1.16.0"], check=True)
    (tmp_path / "ok.py").write_text("print('ok')\n")
    argv = ["check", "--script", "ok.py", "--pin", "six==1.16.0", "--wheelhouse", str(house)]
    argv += ["--env-dir", str(tmp_path / "envs")]
    code = (
        "import contextlib, io, json, sys\n"
        "from repromatrix.cli.app import main\n"
        "with contextlib.redirect_stderr(io.StringIO()) as said:\n"
        f"    code = main({argv!r})\n"
        "print(json.dumps([code, said.getvalue(), sorted(sys.modules)]))\n"
    )
    (built_code, built_said, _), (code_again, said, loaded) = (
        _fresh(code, tmp_path, timeout=600),  # builds the cell
        _fresh(code, tmp_path),
    )
    assert built_code == code_again == 0, built_said + said
    assert " built" in built_said and " reused" in said
    # A script probe's cell is its pins, as raw uv builds it: no runner tooling.
    (cell,) = [p for p in (tmp_path / "envs").iterdir() if (p / "resolved.json").exists()]
    assert sorted(json.loads((cell / "resolved.json").read_text())) == ["six"]
    lazy = ("packaging.tags", "repromatrix.environment.as_of", "repromatrix.matrix.load", "uv")
    lazy += ("repromatrix.matrix.case_ids",)  # what a case probe needs, not a script
    assert [m for m in lazy if m in loaded] == []
    assert _heavy(loaded) == [
        "repromatrix.environment.store",
        "repromatrix.execution.runner",
        "repromatrix.probe.check",
    ]


@pytest.mark.parametrize(
    ("spelt", "enum"), [(bisect_commands.FIND, Find), (sweep_commands.RELEASES, Releases)]
)
def test_choices_spelt_in_the_parser_are_the_enums(spelt: tuple[str, ...], enum: type) -> None:
    # The parser spells them so as not to import bisect/; they must not drift apart.
    assert spelt == tuple(member.value for member in enum)


def test_the_issue_config_file_spelt_in_the_parser_is_issue_configs() -> None:
    from repromatrix.cli import issue as issue_commands
    from repromatrix.issue import config

    assert issue_commands.CONFIG_FILE == config.CONFIG_FILE


def test_init_loads_no_models(tmp_path: Path) -> None:
    # init runs after every other command group has declined it: none of them may load
    # its implementation to say no.
    loaded = _loaded_after(
        "import contextlib, io\n"
        "from repromatrix.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['init', {str(tmp_path)!r}]) == 0\n"
    )
    assert "repromatrix.install_source" in loaded
    assert _heavy(loaded) == []
