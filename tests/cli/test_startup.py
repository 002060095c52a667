"""Start-up: a command imports only what it uses. Building the parser and every
``--help`` load none of the commands' implementations (pydantic models, YAML, rich,
bisect/, the environment builder, the results and reports); ``check`` on a cell
loads no models either. Structural, in a fresh interpreter: which modules are in
sys.modules, not how long it took (benchmarks/bench_startup.py has the figures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repromatrix.bisect.search import Find
from repromatrix.bisect.sweep import Releases
from repromatrix.cli import bisect as bisect_commands
from repromatrix.cli import sweep as sweep_commands

# Modules whose import costs a command's start-up tens of milliseconds, and that
# the parser never needs.
HEAVY = (
    "pydantic",
    "yaml",
    "rich",
    "packaging.requirements",
    "repromatrix.bisect.check",
    "repromatrix.bisect.flow",
    "repromatrix.bisect.sweep",
    "repromatrix.bisect.culprit",
    "repromatrix.environment.as_of",
    "repromatrix.environment.store",
    "repromatrix.execution.runner",
    "repromatrix.matrix.model",
    "repromatrix.matrix.load",
    "repromatrix.pipeline",
    "repromatrix.reports",
    "repromatrix.results",
    "repromatrix.verdicts",
    "repromatrix.nightly.triage",
)
COMMANDS = (
    "list", "run", "report", "bisect", "check", "culprit", "ci-matrix", "merge", "triage",
    "hunt-inputs", "baseline", "sweep", "init", "issue",
)  # fmt: skip


def _loaded_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after ``code`` (sys.path as ours)."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


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


def test_check_on_a_cell_loads_no_models() -> None:
    # What `check` imports to parse its pins, find its cell and run a script in it.
    loaded = _loaded_after(
        "import repromatrix.cli.app, repromatrix.bisect.check\n"
        "from repromatrix.bisect.check import parse_pin_option\n"
        "parse_pin_option('torch==2.13.0')\n"
    )
    assert "repromatrix.bisect.check" in loaded and "repromatrix.environment.store" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("pydantic", "yaml", "rich")] == []
    assert "repromatrix.matrix.model" not in loaded and "repromatrix.results" not in loaded


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
