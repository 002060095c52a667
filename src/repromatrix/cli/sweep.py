"""The ``sweep`` command of the command line (cli/app.py adds it).

    repromatrix sweep --package NAME --from V1 --to V2 (--case ID | --script F.py)
                      [--releases all|latest-patch|first-and-last-patch] [--pin PKG==VER ...]
                      [--jobs N] [--pre] [--wheelhouse DIR] [--issue N] [--as-of PACKAGE|DATE|none]

Exit status: 0 done (whatever the outcomes), 1 nothing could be tested (every
release untestable), 2 bad input; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from repromatrix.cli.bisect import _probe_options  # the probe options bisect and check share

# bisect.sweep_ranges's Releases, spelt here so that building the parser does not
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
    _probe_options(sweep)


def run_command(args: argparse.Namespace) -> int | None:
    """Run ``sweep``; None for any other command."""
    if args.command != "sweep":
        return None
    from repromatrix import procs
    from repromatrix.cli.bisect import cell_options, project_packages
    from repromatrix.environment.as_of import parse_as_of
    from repromatrix.hunts.sweep.run import Releases, SweepOptions, run_sweep
    from repromatrix.names import canonicalize_name
    from repromatrix.probe.check import Probe

    cell = cell_options(args, searched=canonicalize_name(args.package))
    options = SweepOptions(
        package=args.package,
        start=args.start,
        end=args.end,
        probe=Probe(
            case=args.case, script=args.script, cases_root=args.cases, timeout=args.timeout
        ),
        pins=cell.pins,
        index=cell.index,
        cell=cell.settings,
        releases=Releases(args.releases),
        jobs=args.jobs,
        pre=args.pre,
        wheelhouse=args.wheelhouse,
        out=args.out,
        python=cell.python,
        env_dir=args.env_dir,
        install_timeout=args.install_timeout,
        issue=args.issue,
        as_of=parse_as_of(args.package if args.as_of is None else args.as_of),
        stack=project_packages(),
    )
    try:
        _record, code = run_sweep(options)
    except KeyboardInterrupt as stopped:
        why, code = procs.interrupt_words(stopped)
        print(f"repromatrix: {why}; the releases done are in sweep.json", file=sys.stderr)
        return code
    return code
