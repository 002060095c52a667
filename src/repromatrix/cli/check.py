"""The ``check`` command of the command line (cli/app.py adds it).

    repromatrix check (--case ID | --script F.py) --pin PKG==VER [--pin ...]
                      [--as-of PACKAGE|DATE]

``check`` speaks git bisect run's language: exit 0 good, 1 bad, 125 untestable
(install failure, exit 125, skipped case). Bad input exits 128, which makes
``git bisect run`` stop instead of marking the commit bad.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from repromatrix.cli import hunting  # the options, cell and probe every hunt has
from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.hunts.check.run import CheckOptions
    from repromatrix.probe.prober import Prober

COMMANDS = ("check",)  # what add_commands adds (cli/app.py builds only its group)


# Bad input: git bisect run stops on exit codes above 127 (1-127, 125 aside, would
# mark the commit bad). cli/app.py gives every UserError of check this status.
BAD_INPUT = 128


def add_commands(commands: argparse._SubParsersAction) -> None:
    check = hunting.subcommand(commands, "check")
    hunting.as_of_option(check)
    hunting.probe_options(check)
    # argparse's own errors too: git bisect run reads 2 as "bad".
    check.bad_input_exit = BAD_INPUT  # type: ignore[attr-defined]


def options(args: argparse.Namespace) -> CheckOptions:
    """The check a command line asks for. Its verdict line goes to stdout, everything
    else to stderr; bad input exits 128 (``BAD_INPUT``)."""
    from repromatrix.hunts.check.run import CheckOptions

    cell = hunting.cell_spec(args)
    if not cell.pins:
        raise UserError(
            "check: give the environment with --pin PKG==VER (repeatable) or --cell "
            "(or pin packages under matrix.yaml's defaults:)"
        )
    if args.as_of is not None:  # the time-travel module loads only when asked for
        from repromatrix.environment.as_of import parse_as_of

        # The project's packages (matrix.yaml: the YAML reader and the models) are read
        # only when the stack travels.
        cell = cell.with_time_travel(parse_as_of(args.as_of), hunting.project_packages())
    return CheckOptions(probe=hunting.probe(args), cell=cell, index=hunting.cell_index(args, cell))


def runner(args: argparse.Namespace, given: Prober | None = None) -> Prober:
    """The real prober, its cell's build said on stderr (which cell, reused or built),
    or the one a test hands main()."""
    if given is not None:
        return given
    from repromatrix.probe.prober import CellProber

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    return CellProber(env_dir=args.env_dir, install_timeout=args.install_timeout, log=say)
