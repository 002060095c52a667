"""The command line: ``repromatrix <command>`` (also ``python -m repromatrix``).

Each command parses its options, calls one library function and turns the
outcome into an exit status; a UserError becomes one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from repromatrix import __version__, procs
from repromatrix.errors import UserError
from repromatrix.hunt_table import HUNTS
from repromatrix.matrix.defaults import DEFAULT_TIER
from repromatrix.matrix.locate import FILE_NAME, beside, find_matrix
from repromatrix.redact import console

if TYPE_CHECKING:
    from repromatrix.matrix.model import Combination, Matrix
    from repromatrix.probe.prober import Prober

# Building the parser and --help import none of the commands' implementations
# (pydantic models, the environment builder, hunts/): each command imports what it
# uses when it runs (tests/cli/test_startup.py holds this).


def _matrix_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--matrix",
        type=Path,
        help="the matrix file (default: the nearest matrix.yaml in this folder or above)",
    )


def _report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE|DIR",
        help="a previous results.json (or its folder): passed there and fails now = "
        "REGRESSED, failed there and passes now = FIXED",
    )
    parser.add_argument(
        "--known-issues",
        type=Path,
        metavar="FILE",
        help="the known-issue registry (default: known_issues.yaml in the cases folder)",
    )
    parser.add_argument(
        "--cases", type=Path, help="the cases folder (default: cases/ beside the matrix)"
    )


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block: a CI log shows the line that
    matters) and a per-command exit code (``bad_input_exit``: check's 128)."""

    bad_input_exit = 2
    commands: argparse._SubParsersAction | None = None

    def error(self, message: str) -> NoReturn:
        self.exit(self.bad_input_exit, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given ``command`` (the first word of a command
    line), only the group of commands that defines it is built: each start (a
    bisect's `check` step) skips some 150 options it will not read. ``--help``,
    ``--version`` and a misspelt command get every command."""
    parser = _Parser(prog="repromatrix", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"repromatrix {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parser.commands = commands
    if command not in COMMANDS or command in _RUN_COMMANDS:
        _add_commands(commands)
    for group in _command_groups(command):
        group.add_commands(commands)
    return parser


def _add_commands(commands: argparse._SubParsersAction) -> None:
    """list, run and report: the matrix run itself."""
    listing = commands.add_parser("list", help="list combinations, or (--cases) case ids")
    _matrix_option(listing)
    listing.add_argument("--tier", help="only this tier")
    listing.add_argument(
        "--cases",
        action="store_true",
        help="list case ids: each combination's selection (with --tier / --combination), "
        "or every case in cases/",
    )
    listing.add_argument(
        "--combination", action="append", default=[], metavar="ID", help="only this combination"
    )
    listing.add_argument(
        "--hunts",
        action="store_true",
        help="list the hunts (bisect, sweep, check...: init's noxfile makes a session of each)",
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per combination")

    runner = commands.add_parser("run", help="run combinations and write results")
    _matrix_option(runner)
    runner.add_argument("--tier", help=f"the tier to run (default: {DEFAULT_TIER})")
    runner.add_argument(
        "--combination",
        action="append",
        default=[],
        metavar="ID",
        help="run only this combination (repeatable)",
    )
    runner.add_argument(
        "--shard",
        metavar="I/N",
        help="run only the I-th of N deterministic parts of the tier (1..N, or 0..N-1), "
        "for another scheduler (Kubernetes indexed Jobs, Buildkite parallelism)",
    )
    runner.add_argument(
        "--results",
        type=Path,
        default=Path("reports/latest"),
        help="results directory (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )
    runner.add_argument(
        "--env-dir",
        type=Path,
        help="where environments are kept "
        "(default: $REPROMATRIX_ENV_DIR or ~/.cache/repromatrix/envs)",
    )
    mode = runner.add_mutually_exclusive_group()
    mode.add_argument(
        "--resume",
        dest="mode",
        action="store_const",
        const="resume",
        help="keep what an interrupted run finished; run only what is missing",
    )
    mode.add_argument(
        "--update",
        dest="mode",
        action="store_const",
        const="update",
        help="replace only the combinations run now; keep the others",
    )
    runner.add_argument(
        "--reruns",
        type=int,
        default=2,
        help="reruns of a failing case in fresh interpreters (default: 2)",
    )
    runner.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="combinations run at once; on a host with several GPUs each gets its own (default: 1)",
    )
    runner.add_argument(
        "--workers",
        type=int,
        default=1,
        help="pytest-xdist workers inside each combination (default: 1)",
    )
    _report_options(runner)
    runner.add_argument(
        "selection", nargs="*", help="cases to run: pytest node ids or paths relative to cases/"
    )

    report = commands.add_parser(
        "report", help="re-render the reports from stored results (runs nothing)"
    )
    report.add_argument(
        "--results",
        type=Path,
        default=Path("reports/latest"),
        help="results directory to render (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )
    _matrix_option(report)
    _report_options(report)
    report.add_argument(
        "--issue",
        type=int,
        metavar="N",
        help="post summary.md as a comment on GitHub issue N with gh "
        "(prints the gh command when gh is missing or not logged in)",
    )


_RUN_COMMANDS = ("list", "run", "report")  # this module's own, _add_commands
# The other command groups of cli/: the names each defines, and its module (COMMANDS,
# add_commands; a hunt's run(args, prober), the others' run_command). A command line
# imports only the module of the command it names: `check`, each step of a bisect,
# does not load the nightly's gh client, init's templates or the issue command. The
# hunts come from their table (hunt_table.py), one module each. The parser is built,
# and a command line offered to each, in this order. (tests/cli/test_startup.py holds
# each module's COMMANDS to this.)
HUNT_GROUPS = tuple(((row.name,), row.cli) for row in HUNTS)
COMMAND_GROUPS = (
    *HUNT_GROUPS,
    (
        ("ci-matrix", "merge", "triage", "hunt-inputs", "baseline", "dry-run"),
        "repromatrix.cli.nightly",
    ),
    (("hunt-comment",), "repromatrix.cli.comments"),
    (("init",), "repromatrix.cli.init"),
    (("issue",), "repromatrix.cli.issue"),
    (("gc",), "repromatrix.cli.gc"),
    (("bounds-post",), "repromatrix.cli.bounds_post"),
)
COMMANDS = frozenset(_RUN_COMMANDS).union(*(names for names, _module in COMMAND_GROUPS))
HUNT_NAMES = frozenset(row.name for row in HUNTS)


def _command_groups(command: str | None) -> list[Any]:
    """The modules of the groups that define ``command``; every group's for --help,
    --version or a misspelt command."""
    return [
        importlib.import_module(module)
        for names, module in COMMAND_GROUPS
        if command not in COMMANDS or command in names
    ]


def main(argv: Sequence[str] | None = None, *, prober: Prober | None = None) -> int:
    """Run a command line. ``prober`` makes the probes of a hunt that probes (default:
    cells built in --env-dir); a test hands its own."""
    # The console's door: whatever a command prints, secrets masked (redact.py); a
    # reader that goes away stops the run as an interrupt would. SIGTERM and SIGHUP
    # are interrupts too (procs.stop_signals).
    with console(on_closed=procs.output_closed), procs.stop_signals():
        return _main(argv, prober)


def _main(argv: Sequence[str] | None = None, prober: Prober | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words[0] if words else None)
    try:
        args, unknown = parser.parse_known_args(argv)
    except SystemExit as done:  # --help, --version, or argparse's own one-line error
        return done.code if isinstance(done.code, int) else 0 if done.code is None else 2
    if unknown:
        # Each command's own bad-input exit: check's 128 (git bisect run stops), else 2.
        assert parser.commands is not None
        code = parser.commands.choices[args.command].bad_input_exit
        print(
            f"repromatrix {args.command}: error: unrecognized arguments: {' '.join(unknown)}",
            file=sys.stderr,
        )
        return code
    given = getattr(args, "matrix", None)
    found = None if given is not None else find_matrix()
    if hasattr(args, "matrix") and given is None:
        # Not given: the nearest matrix.yaml upward (like git's .git); none found leaves
        # matrix.yaml, whose absence each command reports (or, for report, tolerates).
        args.matrix = found or Path(FILE_NAME)
    if found is not None:
        _beside_the_matrix(parser, args, found)
    try:
        if args.command == "list":
            return _list(args)
        if args.command == "run":
            return _run(args)
        if args.command == "report":
            from repromatrix.reports import rerender
            from repromatrix.verdicts.knownissues import RegistryLocation

            return rerender(
                args.results,
                baseline=args.baseline,
                known_issues=RegistryLocation.of(
                    matrix=args.matrix, cases=args.cases, explicit=args.known_issues
                ),
                issue=args.issue,
            )
        if args.command in HUNT_NAMES:
            from repromatrix.cli import hunting

            return hunting.run(args, prober)
        for group in _command_groups(args.command):
            if (code := group.run_command(args)) is not None:
                return code
    except UserError as err:
        print(f"repromatrix: error: {err}", file=sys.stderr)
        # A command's own bad-input status (check's 128) for plain bad input.
        bad_input = parser.commands.choices[args.command].bad_input_exit
        return bad_input if err.exit_code == UserError.exit_code else err.exit_code
    except KeyboardInterrupt as stopped:  # the one place an interrupt is said
        why, code = procs.interrupt_words(stopped)
        kept = KEPT.get(args.command)
        print(f"repromatrix: {why}{f'; {kept}' if kept else ''}", file=sys.stderr)
        return code
    raise AssertionError(args.command)


# What an interrupted command leaves: the matrix run's finished results, each hunt's
# record (its row's words).
KEPT = {
    "run": "finished results are kept (--resume continues)",
    **{row.name: row.words.kept for row in HUNTS},
}


# Options whose default is a place in the project (reports/latest, reports/bisect,
# cases): from a subfolder, they are beside the matrix.yaml found upward.
PROJECT_PLACES = ("results", "out", "cases")


def _beside_the_matrix(parser: _Parser, args: argparse.Namespace, matrix: Path) -> None:
    """The options of PROJECT_PLACES left at their default, moved beside ``matrix``.
    A default is the parser's own object: a value typed on the command line, even
    the same text, is a new one and stays relative to the working directory."""
    assert parser.commands is not None
    command = parser.commands.choices[args.command]
    for dest in PROJECT_PLACES:
        default = command.get_default(dest)
        relative = isinstance(default, Path) and not default.is_absolute()
        if relative and getattr(args, dest, None) is default:
            setattr(args, dest, beside(matrix, default))


def _list(args: argparse.Namespace) -> int:
    from repromatrix.matrix.load import load_matrix

    if args.hunts:
        return _list_hunts(json_lines=args.json)
    matrix = load_matrix(args.matrix)
    if args.combination:
        combos = [matrix.find(c) for c in args.combination]
    else:
        combos = matrix.tier(args.tier) if args.tier else matrix.combinations()
    if args.cases:
        return _list_cases(args, matrix, combos)
    for combo in combos:
        if args.json:
            print(
                json.dumps(
                    {
                        "id": combo.id,
                        "tier": combo.tier,
                        "device": combo.device,
                        "requested": combo.requested(),
                        "tags": list(combo.tags),
                    }
                )
            )
        else:
            pins = ", ".join(f"{k} {v}" for k, v in combo.requested().items())
            print(f"{combo.tier:<8} {combo.id:<32} {pins}")
    return 0


def _list_hunts(*, json_lines: bool) -> int:
    """The hunts' table (hunt_table.py), read by init's noxfile: a session per row."""
    for row in HUNTS:
        if json_lines:
            words = {"usage": row.words.usage, "exits": row.words.exits}
            print(json.dumps({"name": row.name, "session": list(row.session), **words}))
        else:
            print(f"{row.name:<10} {row.words.help}")
    return 0


def _list_cases(args: argparse.Namespace, matrix: Matrix, combos: Sequence[Combination]) -> int:
    """Case ids, read from cases/ without running anything. A function whose
    parameter ids are computed at collection time is listed without them."""
    from repromatrix.matrix.case_ids import CaseIndex

    index = CaseIndex(matrix.path.parent / "cases")
    if not (args.tier or args.combination):
        for case_id in index.ids():
            print(json.dumps({"id": case_id}) if args.json else case_id)
        return 0
    for combo in combos:
        ids = index.ids(list(combo.cases))
        if args.json:
            print(json.dumps({"combination": combo.id, "cases": ids}))
        else:
            print(f"{combo.id}:")
            print("\n".join(f"  {case_id}" for case_id in ids))
    return 0


def _run(args: argparse.Namespace) -> int:
    from repromatrix.matrix.shards import Shard
    from repromatrix.pipeline import RunOptions, run

    options = RunOptions(
        shard=Shard.parse(args.shard) if args.shard is not None else None,
        matrix=args.matrix,
        tier=args.tier,
        combinations=args.combination,
        results=args.results,
        env_dir=args.env_dir,
        cases=args.cases,
        selection=args.selection,
        mode=args.mode or "fresh",
        reruns=args.reruns,
        workers=args.workers,
        jobs=args.jobs,
        baseline=args.baseline,
        known_issues=args.known_issues,
    )
    _results, code = run(options)
    return code
