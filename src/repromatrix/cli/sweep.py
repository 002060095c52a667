"""The ``sweep`` command of the command line (cli/app.py adds it).

    repromatrix sweep --package NAME --from V1 --to V2 (--case ID | --script F.py)
                      [--releases all|latest-patch|first-and-last-patch] [--pin PKG==VER ...]
                      [--jobs N] [--pre] [--wheelhouse DIR] [--issue N] [--as-of PACKAGE|DATE|none]

Exit status: 0 done (whatever the outcomes), 1 nothing could be tested (every
release untestable), 2 bad input; 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.cli.hunting import (
    cell_spec,
    hunted,
    probe,
    probe_options,
    prober,
    project_packages,
)

if TYPE_CHECKING:
    from repromatrix.hunts.sweep.options import SweepOptions
    from repromatrix.probe.prober import Prober

# search.ranges's Releases, spelt here so that building the parser does not
# load the sweep (tests/cli/test_startup.py checks that the two agree).
RELEASES = ("all", "latest-patch", "first-and-last-patch")


# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("sweep",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="run a case or script on every release of one package between two versions",
        description="Test each selected release of one package between --from and --to, each "
        "in its own environment, and collapse the outcomes into ranges. Writes "
        "reports/sweep/<package>-<from>-<to>/sweep.json, sweep.md and a reproducer script "
        "per bad release. Exit status: 0 done, 1 nothing could be tested (every release "
        "untestable), 2 bad input.",
    )
    sweep.add_argument("--package", required=True, help="the package whose releases are swept")
    sweep.add_argument("--from", dest="start", required=True, metavar="VERSION", help="one end")
    sweep.add_argument("--to", dest="end", required=True, metavar="VERSION", help="the other end")
    sweep.add_argument(
        "--releases",
        choices=RELEASES,
        default="all",
        help="all; latest-patch: the newest patch of each minor series; first-and-last-patch: "
        "its oldest and newest (default: %(default)s)",
    )
    sweep.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="releases tested at once, each in its own environment (default: %(default)s)",
    )
    sweep.add_argument("--pre", action="store_true", help="include pre-releases")
    sweep.add_argument(
        "--as-of",
        metavar="PACKAGE|DATE|none",
        help="the rest of the stack as of a date, or of the upload of a package's pinned "
        "release (default: the swept package: each release with the stack of its day, "
        "what an exact pin newer than that day needs as today, as bisect); none: today's stack",
    )
    sweep.add_argument(
        "--out",
        type=Path,
        default=Path("reports/sweep"),
        help="where the report folder goes (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )
    sweep.add_argument(
        "--issue",
        type=int,
        metavar="N",
        help="post sweep.md as a comment on GitHub issue N with gh "
        "(prints the gh command when gh is missing or not logged in)",
    )
    probe_options(sweep)


def options(args: argparse.Namespace) -> SweepOptions:
    """The sweep a command line asks for."""
    from repromatrix.environment.as_of import parse_as_of
    from repromatrix.hunts.sweep.run import Releases, SweepOptions
    from repromatrix.names import canonicalize_name

    cell = cell_spec(args, searched=canonicalize_name(args.package))
    as_of = parse_as_of(args.package if args.as_of is None else args.as_of)
    return SweepOptions(
        package=args.package,
        start=args.start,
        end=args.end,
        probe=probe(args),
        cell=cell.with_time_travel(as_of, project_packages()),
        releases=Releases(args.releases),
        jobs=args.jobs,
        pre=args.pre,
        wheelhouse=args.wheelhouse,
        out=args.out,
        issue=args.issue,
    )


def run(args: argparse.Namespace, with_prober: Prober | None = None) -> int:
    """Run ``sweep``; ``with_prober`` makes its probes (default: cells in --env-dir)."""
    from repromatrix.hunt_table import hunt
    from repromatrix.hunts.sweep.run import run_sweep

    return hunted(hunt("sweep"), lambda: run_sweep(options(args), with_prober or prober(args))[1])
