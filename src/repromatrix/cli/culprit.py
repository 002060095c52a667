"""The ``culprit`` command of the command line (cli/app.py adds it).

    repromatrix culprit (--good-lock A --bad-lock B
                         | --good-results DIR --bad-results DIR --combination ID)
                        (--case ID | --script F.py) [--pin PKG==VER ...] [--jobs N]

Exit status: 0 found, 1 could not conclude, 2 bad input (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.cli import hunting  # the options, cell and probe every hunt has
from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.hunts.culprit.options import CulpritOptions

COMMANDS = ("culprit",)  # what add_commands adds (cli/app.py builds only its group)


def add_commands(commands: argparse._SubParsersAction) -> None:
    culprit = hunting.subcommand(commands, "culprit")
    culprit.add_argument("--good-lock", type=Path, metavar="FILE", help="the lock that passes")
    culprit.add_argument("--bad-lock", type=Path, metavar="FILE", help="the lock that fails")
    culprit.add_argument(
        "--good-results", type=Path, metavar="DIR", help="a results folder where it passed"
    )
    culprit.add_argument(
        "--bad-results", type=Path, metavar="DIR", help="a results folder where it failed"
    )
    culprit.add_argument(
        "--combination", metavar="ID", help="whose resolved versions form the two locks"
    )
    hunting.jobs_option(culprit, "test N mixes at a time")
    culprit.add_argument(
        "--no-release-bisect",
        action="store_true",
        help="stop at the culprit package; do not bisect its releases",
    )
    culprit.add_argument("--name", help="the report folder's name (default: from the locks)")
    hunting.out_option(culprit, "reports/culprit")
    hunting.probe_options(culprit)


def options(args: argparse.Namespace) -> CulpritOptions:
    """The culprit hunt a command line asks for."""
    from repromatrix.hunts.culprit.locks import read_lock
    from repromatrix.hunts.culprit.options import (
        CulpritOptions,
        checked_name,
        locks_from_results,
        reproduce_command,
    )
    from repromatrix.hunts.rerun import shown_path

    lock_files = (args.good_lock, args.bad_lock)
    results = (args.good_results, args.bad_results, args.combination)
    if any(lock_files) and any(results):
        raise UserError("give --good-lock/--bad-lock or --good-results/--bad-results, not both")
    if any(lock_files):
        if not all(lock_files):
            raise UserError("--good-lock and --bad-lock go together")
        good = read_lock(args.good_lock, "--good-lock")
        bad = read_lock(args.bad_lock, "--bad-lock")
        origin = [
            "--good-lock",
            shown_path(args.good_lock),
            "--bad-lock",
            shown_path(args.bad_lock),
        ]
    elif all(results):
        good, bad = locks_from_results(*results)
        origin = [
            "--good-results", shown_path(args.good_results),
            "--bad-results", shown_path(args.bad_results),
            "--combination", args.combination,
        ]  # fmt: skip
    else:
        raise UserError(
            "give --good-lock A --bad-lock B, or --good-results DIR --bad-results DIR "
            "--combination ID"
        )
    checked_name(args.name)  # bad input before anything else: it must stay inside --out
    cell = hunting.cell_spec(args, held_only=True)
    probe_args = ["--case", args.case] if args.case else ["--script", shown_path(args.script)]
    shown = [*origin, *probe_args]
    for pin in args.pin:
        shown += ["--pin", pin]
    if args.cell:
        shown += ["--cell", args.cell]
    return CulpritOptions(
        good=good,
        bad=bad,
        probe=hunting.probe(args),
        cell=cell,
        name=args.name,
        jobs=args.jobs,
        releases=not args.no_release_bisect,
        out=args.out,
        index=hunting.cell_index(args, cell),
        command=reproduce_command(shown),
    )


# Its probes: the real prober (cells in --env-dir), or the one a test hands main().
runner = hunting.prober
