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

# --case/--script/--pin/--cell ... as every hunt has them
from repromatrix.cli.hunting import cell_index, cell_spec, hunted, probe, probe_options, prober
from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.hunts.culprit.options import CulpritOptions
    from repromatrix.probe.prober import Prober

# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("culprit",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    culprit = commands.add_parser(
        "culprit",
        help="which of the packages that moved between a good and a bad lock broke it",
        description="Delta debugging over the packages that differ between two locks "
        "(requirements files of exact pins, as uv pip compile writes them): mixes of the good "
        "lock with some changes applied are built and probed until the smallest set that "
        "turns good into bad is left; a single culprit's releases are then bisected. Writes "
        "reports/culprit/<name>/culprit.json and culprit.md. Exit status: 0 found, 1 could "
        "not conclude, 2 bad input.",
    )
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
    culprit.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="test N mixes at a time (default: 1)"
    )
    culprit.add_argument(
        "--no-release-bisect",
        action="store_true",
        help="stop at the culprit package; do not bisect its releases",
    )
    culprit.add_argument("--name", help="the report folder's name (default: from the locks)")
    culprit.add_argument(
        "--out",
        type=Path,
        default=Path("reports/culprit"),
        help="where the report folder goes (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )
    probe_options(culprit)


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
    cell = cell_spec(args, held_only=True)
    probe_args = ["--case", args.case] if args.case else ["--script", shown_path(args.script)]
    shown = [*origin, *probe_args]
    for pin in args.pin:
        shown += ["--pin", pin]
    if args.cell:
        shown += ["--cell", args.cell]
    return CulpritOptions(
        good=good,
        bad=bad,
        probe=probe(args),
        cell=cell,
        name=args.name,
        jobs=args.jobs,
        releases=not args.no_release_bisect,
        out=args.out,
        index=cell_index(args, cell),
        command=reproduce_command(shown),
    )


def run(args: argparse.Namespace, with_prober: Prober | None = None) -> int:
    """Run ``culprit``; ``with_prober`` makes its probes (default: cells in --env-dir)."""
    from repromatrix.hunt_table import hunt
    from repromatrix.hunts.culprit.run import run_culprit

    return hunted(
        hunt("culprit"), lambda: run_culprit(options(args), with_prober or prober(args))[1]
    )
