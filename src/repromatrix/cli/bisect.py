"""The ``bisect`` command of the command line (cli/app.py adds it).

repromatrix bisect --package NAME --good V1 --bad V2 (--case ID | --script F.py)
                   [--pin PKG==VER ...] [--find first-bad|first-good] [--pre]
                   [--wheelhouse DIR] [--as-of PACKAGE|DATE|none] [--jobs N]
                   [--git URL]  (then --good/--bad may be tags, branches, shas)
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from repromatrix.cli import hunting  # the options, cell and probe every hunt has

if TYPE_CHECKING:
    from repromatrix.hunts.bisect.options import BisectOptions

COMMANDS = ("bisect",)  # what add_commands adds (cli/app.py builds only its group)

# Each command imports its implementation when it runs: building the parser (and
# --help) loads no environment builder, no bisect.

# search.bisection's Find, spelt here for the same reason (tests/cli/test_startup.py
# checks that the two agree).
FIND = ("first-bad", "first-good")


def add_commands(commands: argparse._SubParsersAction) -> None:
    bisect = hunting.subcommand(commands, "bisect")
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
    hunting.out_option(bisect, "reports/bisect")
    hunting.as_of_option(bisect, "the bisected package: each candidate")
    bisect.add_argument(
        "--git",
        metavar="URL",
        help="the package's git repository: --good/--bad may then be tags, branches or "
        "shas (a commit bisect); a release bisect goes on into the commits between the "
        "two releases it finds (tags v1.2.3 or 1.2.3)",
    )
    hunting.jobs_option(bisect, "test N candidates at once, each in its own environment")
    hunting.probe_options(bisect)


def options(args: argparse.Namespace) -> BisectOptions:
    """The bisect a command line asks for."""
    from repromatrix.hunts.bisect.options import BisectOptions
    from repromatrix.search.bisection import Find

    ends = {"good": args.good, "bad": args.bad, "find": Find(args.find)}
    # --env-dir: the repository's mirror is kept beside the cells.
    return BisectOptions(
        **hunting.searched(args), **ends, out=args.out, git=args.git, env_dir=args.env_dir
    )


# Its probes: the real prober (cells in --env-dir), or the one a test hands main().
runner = hunting.prober
