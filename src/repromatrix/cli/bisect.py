"""The ``bisect`` and ``check`` commands of the command line (cli.py adds them).

    repromatrix bisect --package NAME --good V1 --bad V2 (--case ID | --script F.py)
                       [--pin PKG==VER ...] [--find first-bad|first-good] [--pre]
                       [--wheelhouse DIR] [--as-of PACKAGE|DATE|none] [--jobs N]
                       [--git URL]  (then --good/--bad may be tags, branches, shas)
    repromatrix check (--case ID | --script F.py) --pin PKG==VER [--pin ...]
                      [--as-of PACKAGE|DATE]

``check`` speaks git bisect run's language: exit 0 good, 1 bad, 125 untestable
(install failure, exit 125, skipped case). Bad input exits 128, which makes
``git bisect run`` stop instead of marking the commit bad.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.environment.indexes import IndexSettings
    from repromatrix.matrix import Combination, Pin
    from repromatrix.probe.check import CellSettings, Probe

# Each command imports its implementation when it runs: building the parser (and
# --help) loads no environment builder, no bisect flow.

# bisect.search's Find, spelt here for the same reason (tests/cli/test_startup.py
# checks that the two agree).
FIND = ("first-bad", "first-good")

DEFAULT_RUN_TIMEOUT = 900.0
DEFAULT_INSTALL_TIMEOUT = 1800.0


class CheckInputError(UserError):
    """Bad input to ``check``: git bisect run stops on exit codes above 127 (1-127,
    125 aside, would mark the commit bad)."""

    exit_code = 128


def _seconds(text: str) -> float:
    """A time limit: a finite number of seconds above zero (NaN would never expire,
    a negative one would expire at once)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return value


def _probe_options(parser: argparse.ArgumentParser) -> None:
    probe = parser.add_mutually_exclusive_group(required=True)
    probe.add_argument(
        "--case",
        metavar="CASE_ID",
        help="a case: pytest node id relative to cases/ (passed = good)",
    )
    probe.add_argument(
        "--script",
        type=Path,
        metavar="FILE.py",
        help="a standalone script run with the candidate's Python: "
        "exit 0 = good, 125 = untestable, anything else = bad",
    )
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="PKG==VER",
        help="another package, held fixed (repeatable): PKG==VER, PKG>=A,<B, "
        "PKG=system, PKG=latest, PKG=null, PKG@URL",
    )
    parser.add_argument(
        "--wheelhouse",
        type=Path,
        metavar="DIR",
        help="offline: candidates and installs only from this folder of wheels",
    )
    parser.add_argument(
        "--cell",
        metavar="ID|JSON",
        help="build every environment as this combination's cell: a combination id of the "
        "matrix, or one as JSON (what the nightly hands a hunt): its null packages, "
        "system and git pins, overrides, indexes, Python and env; --pin and the searched "
        "package come on top",
    )
    parser.add_argument(
        "--cases",
        type=Path,
        default=Path("cases"),
        help="the cases folder (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )
    parser.add_argument(
        "--env-dir",
        type=Path,
        help="where environments are kept "
        "(default: $REPROMATRIX_ENV_DIR or ~/.cache/repromatrix/envs)",
    )
    parser.add_argument("--python", help="the cells' Python (a version or a path)")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_RUN_TIMEOUT,
        metavar="SECONDS",
        help="time limit of one run of the case or script; over it = bad (default: %(default)s)",
    )
    parser.add_argument(
        "--install-timeout",
        type=_seconds,
        default=DEFAULT_INSTALL_TIMEOUT,
        metavar="SECONDS",
        help="time limit of one environment build (default: %(default)s)",
    )


# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("bisect", "check")


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
    _probe_options(bisect)

    check = commands.add_parser(
        "check",
        help="one environment, one verdict: exit 0 good, 1 bad, 125 untestable (git bisect run)",
        description="Build (or reuse) the environment of the pins and run a case or script in "
        "it. Exit 0 good, 1 bad, 125 untestable (install failure, exit 125, skipped case); "
        "128 for bad input, which stops git bisect run.",
    )
    check.add_argument(
        "--as-of",
        metavar="PACKAGE|DATE",
        help="the stack's other packages as of a date, or of the upload of a package's "
        "pinned release (--pin transformers==4.46.3 --as-of transformers)",
    )
    _probe_options(check)
    # argparse's own errors too: git bisect run reads 2 as "bad".
    check.bad_input_exit = CheckInputError.exit_code  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Cell:
    """What ``--cell`` adds to a command's own options."""

    pins: tuple[Pin, ...]  # the command's --pin on top of the combination's
    python: str | None
    index: IndexSettings | None
    settings: CellSettings


def cell_options(
    args: argparse.Namespace,
    *,
    searched: str | None = None,
    held_only: bool = False,
    index: IndexSettings | None = None,
) -> Cell:
    """The command's pins, Python and indexes with ``--cell``'s combination under
    them. ``searched``: the package the command varies (its pin in the cell gives
    way). ``held_only``: only the pins a lock cannot carry (null, system, git), for
    culprit, whose locks pin every other package exactly."""
    from repromatrix.environment.indexes import IndexSettings
    from repromatrix.matrix.pins import PinKind
    from repromatrix.probe.check import CellSettings, parse_pin_option, unique_pins

    pins = unique_pins([parse_pin_option(p) for p in args.pin])
    combo = _combination(args.cell) if args.cell else None
    if combo is None:
        return Cell(pins, args.python, index, CellSettings())
    given = {pin.package for pin in pins}
    lockless = (PinKind.ABSENT, PinKind.SYSTEM, PinKind.DIRECT)
    under = tuple(
        pin
        for pin in combo.pins
        if pin.package not in given
        and pin.package != searched
        and (not held_only or pin.kind in lockless)
    )
    base = index or IndexSettings.from_environment()
    return Cell(
        pins=(*under, *pins),
        python=args.python or combo.python,
        index=base.overlaid(
            index_url=combo.index_url,
            extra_index_urls=combo.extra_index_urls,
            find_links=combo.find_links,
        ),
        settings=CellSettings(overrides=combo.overrides, env=combo.env),
    )


def _combination(text: str) -> Combination:
    from repromatrix.matrix.cell import parse_cell
    from repromatrix.matrix.load import load_matrix
    from repromatrix.matrix.locate import find_matrix

    if text.lstrip().startswith("{"):
        return parse_cell(text, "--cell")
    path = find_matrix()
    if path is None:
        raise UserError(f"--cell {text}: no matrix.yaml here or above to find it in")
    return load_matrix(path).find(text)


def project_packages() -> tuple[str, ...]:
    """What ``--as-of`` moves in time beside the default stack (as_of.time_travel adds
    it): the ``packages:`` of the nearest matrix.yaml (the project's own packages; a
    broken matrix.yaml is said in one line), else the default stack alone."""
    from repromatrix.matrix import DEFAULT_PACKAGES
    from repromatrix.matrix.load import load_matrix
    from repromatrix.matrix.locate import find_matrix

    found = find_matrix()
    return DEFAULT_PACKAGES if found is None else load_matrix(found).packages


def _index(args: argparse.Namespace) -> IndexSettings | None:
    from repromatrix.environment.indexes import IndexSettings

    return None if args.wheelhouse is None else IndexSettings.wheelhouse(args.wheelhouse)


def _probe(args: argparse.Namespace) -> Probe:
    from repromatrix.probe.check import Probe

    return Probe(case=args.case, script=args.script, cases_root=args.cases, timeout=args.timeout)


def run_command(args: argparse.Namespace) -> int | None:
    """Run ``bisect`` or ``check``; None for any other command."""
    if args.command == "bisect":
        return _bisect(args)
    if args.command == "check":
        try:
            return _check(args)
        except UserError as err:
            raise CheckInputError(str(err)) from None
    return None


def _bisect(args: argparse.Namespace) -> int:
    from repromatrix import procs
    from repromatrix.environment.as_of import parse_as_of
    from repromatrix.hunts.bisect.run import BisectOptions, run_bisect
    from repromatrix.names import canonicalize_name
    from repromatrix.search.bisection import Find

    cell = cell_options(args, searched=canonicalize_name(args.package))
    options = BisectOptions(
        package=args.package,
        good=args.good,
        bad=args.bad,
        probe=_probe(args),
        pins=cell.pins,
        cell=cell.settings,
        index=cell.index,
        find=Find(args.find),
        pre=args.pre,
        wheelhouse=args.wheelhouse,
        out=args.out,
        python=cell.python,
        env_dir=args.env_dir,
        install_timeout=args.install_timeout,
        as_of=parse_as_of(args.package if args.as_of is None else args.as_of),
        stack=project_packages(),
        jobs=args.jobs,
        git=args.git,
    )
    try:
        _record, code = run_bisect(options)
    except KeyboardInterrupt as stopped:
        why, code = procs.interrupt_words(stopped)
        print(f"repromatrix: {why}; the steps done are in bisect.json", file=sys.stderr)
        return code
    return code


def _check(args: argparse.Namespace) -> int:
    if not args.pin and not args.cell:
        raise UserError("check: give the environment with --pin PKG==VER (repeatable) or --cell")
    from repromatrix.environment.indexes import IndexSettings
    from repromatrix.probe.check import CheckOptions, run_check

    cell = cell_options(args, index=_index(args))
    as_of = None
    if args.as_of is not None:  # the time-travel module loads only when asked for
        from repromatrix.environment.as_of import parse_as_of

        as_of = parse_as_of(args.as_of)
    options = CheckOptions(
        pins=cell.pins,
        probe=_probe(args),
        index=cell.index or IndexSettings.from_environment(),
        python=cell.python,
        cell=cell.settings,
        env_dir=args.env_dir,
        install_timeout=args.install_timeout,
        as_of=as_of,
        # Read (matrix.yaml: the YAML reader and the models) only when it travels.
        stack=project_packages() if as_of else (),
    )
    return run_check(options, say=lambda line: print(line, file=sys.stderr))
