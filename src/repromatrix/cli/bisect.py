"""The ``bisect`` command of the command line (cli/app.py adds it).

repromatrix bisect --package NAME --good V1 --bad V2 (--case ID | --script F.py)
                   [--pin PKG==VER ...] [--find first-bad|first-good] [--pre]
                   [--wheelhouse DIR] [--as-of PACKAGE|DATE|none] [--jobs N]
                   [--git URL]  (then --good/--bad may be tags, branches, shas)
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
    from repromatrix.hunts.bisect.options import BisectOptions
    from repromatrix.probe.prober import Prober

# Each command imports its implementation when it runs: building the parser (and
# --help) loads no environment builder, no bisect.

# search.bisection's Find, spelt here for the same reason (tests/cli/test_startup.py
# checks that the two agree).
FIND = ("first-bad", "first-good")

# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("bisect",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    bisect = commands.add_parser(
        "bisect",
        help="find the release of one package where a case or script changed outcome",
        description="Binary search over the released versions of one package between two "
        "ends. Writes reports/bisect/<package>-<good>-<bad>/bisect.json and bisect.md. "
        "Exit status: 0 found, 1 could not conclude, 2 bad input.",
    )
    bisect.add_argument("--package", required=True, help="the package whose releases are searched")
    bisect.add_argument("--good", required=True, metavar="VERSION", help="a release that is good")
    bisect.add_argument("--bad", required=True, metavar="VERSION", help="a release that is bad")
    bisect.add_argument(
        "--find",
        choices=FIND,
        default="first-bad",
        help="first-bad: when it broke (walks from --good to --bad); first-good: when it "
        "was fixed (walks from --bad to --good); either version order (default: %(default)s)",
    )
    bisect.add_argument("--pre", action="store_true", help="include pre-releases")
    bisect.add_argument(
        "--out",
        type=Path,
        default=Path("reports/bisect"),
        help="where the report folder goes (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )
    bisect.add_argument(
        "--as-of",
        metavar="PACKAGE|DATE|none",
        help="the rest of the stack as of a date, or of the upload of a package's pinned "
        "release (default: the bisected package: each candidate with the stack of its day, "
        "what an exact pin newer than that day needs as today); none: today's stack",
    )
    bisect.add_argument(
        "--git",
        metavar="URL",
        help="the package's git repository: --good/--bad may then be tags, branches or "
        "shas (a commit bisect); a release bisect goes on into the commits between the "
        "two releases it finds (tags v1.2.3 or 1.2.3)",
    )
    bisect.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="test N candidates at once, each in its own environment (default: %(default)s)",
    )
    probe_options(bisect)


def options(args: argparse.Namespace) -> BisectOptions:
    """The bisect a command line asks for."""
    from repromatrix.environment.as_of import parse_as_of
    from repromatrix.hunts.bisect.options import BisectOptions
    from repromatrix.names import canonicalize_name
    from repromatrix.search.bisection import Find

    cell = cell_spec(args, searched=canonicalize_name(args.package))
    as_of = parse_as_of(args.package if args.as_of is None else args.as_of)
    return BisectOptions(
        package=args.package,
        good=args.good,
        bad=args.bad,
        probe=probe(args),
        cell=cell.with_time_travel(as_of, project_packages()),
        find=Find(args.find),
        pre=args.pre,
        wheelhouse=args.wheelhouse,
        out=args.out,
        jobs=args.jobs,
        git=args.git,
        env_dir=args.env_dir,
    )


def run(args: argparse.Namespace, with_prober: Prober | None = None) -> int:
    """Run ``bisect``; ``with_prober`` makes its probes (default: cells in --env-dir)."""
    from repromatrix.hunt_table import hunt
    from repromatrix.hunts.bisect.run import run_bisect

    return hunted(hunt("bisect"), lambda: run_bisect(options(args), with_prober or prober(args))[1])
