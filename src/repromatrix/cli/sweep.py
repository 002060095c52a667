"""The ``sweep`` command of the command line (cli/app.py adds it).

    repromatrix sweep --package NAME --from V1 --to V2 (--case ID | --script F.py)
                      [--releases all|latest-patch|first-and-last-patch] [--pin PKG==VER ...]
                      [--jobs N] [--pre] [--wheelhouse DIR] [--issue N] [--as-of PACKAGE|DATE|none]

Exit status: 0 done (whatever the outcomes), 1 nothing could be tested (every
release untestable), 2 bad input; 130 interrupted.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from repromatrix.cli import hunting  # the options, cell and probe every hunt has

if TYPE_CHECKING:
    from repromatrix.hunts.sweep.options import SweepOptions

COMMANDS = ("sweep",)  # what add_commands adds (cli/app.py builds only its group)

# search.ranges's Releases, spelt here so that building the parser does not
# load the sweep (tests/cli/test_startup.py checks that the two agree).
RELEASES = ("all", "latest-patch", "first-and-last-patch")


def add_commands(commands: argparse._SubParsersAction) -> None:
    sweep = hunting.subcommand(commands, "sweep")
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
    hunting.jobs_option(sweep, "releases tested at once, each in its own environment")
    sweep.add_argument("--pre", action="store_true", help="include pre-releases")
    hunting.as_of_option(sweep, "the swept package: each release", ", as bisect")
    hunting.out_option(sweep, "reports/sweep")
    sweep.add_argument(
        "--issue",
        type=int,
        metavar="N",
        help="post sweep.md as a comment on GitHub issue N with gh "
        "(prints the gh command when gh is missing or not logged in)",
    )
    hunting.probe_options(sweep)


def options(args: argparse.Namespace) -> SweepOptions:
    """The sweep a command line asks for."""
    from repromatrix.hunts.sweep.run import Releases, SweepOptions

    ends = {"start": args.start, "end": args.end, "releases": Releases(args.releases)}
    return SweepOptions(**hunting.searched(args), **ends, out=args.out, issue=args.issue)


# Its probes: the real prober (cells in --env-dir), or the one a test hands main().
runner = hunting.prober
