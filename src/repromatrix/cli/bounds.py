"""The ``bounds`` command of the command line (cli/app.py adds it).

    repromatrix bounds TARGET (--script FILE | --case CASE) [--only DEP ...] [--extra X ...]
                       [--wheelhouse DIR] [--json] [--out DIR] [--jobs N] [--pin PKG==VER ...]

TARGET: a folder (``.``, ``./pkgs/mylib``) or a release ``NAME==VERSION``. Exit status:
0 every declared bound holds, 1 one is wrong (or could not be judged), 2 bad input;
130 interrupted.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from repromatrix.cli import hunting  # the options, cell and probe every hunt has

if TYPE_CHECKING:
    from repromatrix.hunts.bounds.options import BoundsOptions

COMMANDS = ("bounds",)  # what add_commands adds (cli/app.py builds only its group)


def add_commands(commands: argparse._SubParsersAction) -> None:
    bounds = hunting.subcommand(commands, "bounds")
    bounds.add_argument(
        "target",
        metavar="TARGET",
        help="the package whose declared ranges are tested: a folder (., ./pkgs/mylib: built "
        "from its source) or a release NAME==VERSION from the index or --wheelhouse",
    )
    bounds.add_argument(
        "--only",
        action="extend",
        nargs="+",
        default=[],
        metavar="DEP",
        help="test these direct dependencies only (default: every one that applies here)",
    )
    bounds.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="NAME",
        help="the dependencies of this extra of TARGET count too (repeatable)",
    )
    bounds.add_argument(
        "--json", action="store_true", help="print bounds.json on stdout instead of the headline"
    )
    hunting.jobs_option(bounds, "cells probed at once, each in its own environment")
    hunting.out_option(bounds, "reports/bounds")
    hunting.probe_options(bounds)


def options(args: argparse.Namespace) -> BoundsOptions:
    """The bounds hunt a command line asks for."""
    from repromatrix.hunts.bounds.options import BoundsOptions

    cell = hunting.cell_spec(args)
    return BoundsOptions(
        target=args.target,
        probe=hunting.probe(args),
        only=tuple(args.only),
        extras=tuple(args.extra),
        cell=cell,
        wheelhouse=args.wheelhouse,
        out=args.out,
        jobs=args.jobs,
        json=args.json,
    )


runner = hunting.prober
