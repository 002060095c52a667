"""What the hunt commands share (bisect, sweep, check, culprit): the probe and cell
options, the cell a command line asks for (``--pin`` over ``--cell``), the probe, the
prober that makes the probes, and what a stopped hunt says.

Each command imports its implementation when it runs: building the parser (and
--help) loads no environment builder, no hunt.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.environment.indexes import IndexSettings
    from repromatrix.matrix import Combination, Matrix
    from repromatrix.matrix.cell import CellSpec
    from repromatrix.probe.prober import Prober
    from repromatrix.probe.spec import Probe

DEFAULT_RUN_TIMEOUT = 900.0
DEFAULT_INSTALL_TIMEOUT = 1800.0


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


def probe_options(parser: argparse.ArgumentParser) -> None:
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
        "PKG=system, PKG=latest, PKG=null, PKG@URL, or PKG=./FOLDER (your own package, built "
        "from that folder, relative to here: mylib=.)",
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


def subcommand(commands: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    """A hunt's command, with its help and description from its row (hunt_table.py)."""
    from repromatrix.hunt_table import hunt

    words = hunt(name).words
    return commands.add_parser(name, help=words.help, description=f"{words.about} {words.exits}")


def out_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(default),
        help="where the report folder goes (default: %(default)s "
        "beside the matrix.yaml found upward, else here)",
    )


def jobs_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help=f"{what} (default: %(default)s)"
    )


def as_of_option(parser: argparse.ArgumentParser, searched: str = "", also: str = "") -> None:
    """``--as-of``: for a search over releases (bisect, sweep) ``searched`` says what
    the default, the searched package, gives each candidate; without one (check) the
    stack is today's unless asked."""
    if not searched:
        parser.add_argument(
            "--as-of",
            metavar="PACKAGE|DATE",
            help="the stack's other packages as of a date, or of the upload of a package's "
            "pinned release (--pin transformers==4.46.3 --as-of transformers)",
        )
        return
    parser.add_argument(
        "--as-of",
        metavar="PACKAGE|DATE|none",
        help="the rest of the stack as of a date, or of the upload of a package's pinned "
        f"release (default: {searched} with the stack of its day, what an exact pin newer "
        f"than that day needs as today{also}); none: today's stack",
    )


def searched(args: argparse.Namespace) -> dict[str, Any]:
    """What a search over one package's releases takes from its command line
    (hunts.searched.Searched): the package, the probe, the cell (its stack as of each
    candidate's day by default), where candidates come from, how many at once."""
    from repromatrix.environment.as_of import parse_as_of
    from repromatrix.names import canonicalize_name

    cell = cell_spec(args, searched=canonicalize_name(args.package))
    as_of = parse_as_of(args.package if args.as_of is None else args.as_of)
    return {
        "package": args.package,
        "probe": probe(args),
        "cell": cell.with_time_travel(as_of, project_packages()),
        "pre": args.pre,
        "wheelhouse": args.wheelhouse,
        "jobs": args.jobs,
    }


def cell_spec(
    args: argparse.Namespace, *, searched: str | None = None, held_only: bool = False
) -> CellSpec:
    """The command's cell: its ``--pin`` (and ``--python``) over ``--cell``'s
    combination, or else over the nearest matrix.yaml's ``defaults:`` (every hunt's
    road: matrix.cell.CellSpec.from_command says what comes from each; the hunt's
    first line says what came from the defaults)."""
    from repromatrix.matrix.cell import CellSpec
    from repromatrix.matrix.pins import parse_pin_option, unique_pins

    pins = unique_pins([parse_pin_option(p) for p in args.pin])
    combo = _combination(args.cell) if args.cell else None
    defaults = None if combo else matrix_defaults()
    return CellSpec.from_command(
        pins,
        cell=combo,
        defaults=defaults,
        searched=searched,
        held_only=held_only,
        python=args.python,
    )


def matrix_defaults() -> Combination | None:
    """The ``defaults:`` of the nearest matrix.yaml (None: there is none): what a
    hunt's cell starts from, as the matrix's own combinations do."""
    matrix = nearest_matrix()
    return None if matrix is None else matrix.defaults


def nearest_matrix() -> Matrix | None:
    """The nearest matrix.yaml upward, loaded (a broken one is said in one line); None
    where there is none."""
    from repromatrix.matrix.locate import find_matrix

    found = find_matrix()
    if found is None:
        return None
    from repromatrix.matrix.load import load_matrix  # its models load only for a matrix

    return load_matrix(found)


def cell_index(args: argparse.Namespace, cell: CellSpec) -> IndexSettings | None:
    """``--wheelhouse`` with the cell's own indexes over it (check, culprit); None
    without one (the user's configuration, the cell's over it)."""
    from repromatrix.environment.indexes import IndexSettings

    if args.wheelhouse is None:
        return None
    return IndexSettings.wheelhouse(args.wheelhouse).for_cell(cell)


def _combination(text: str) -> Combination:
    from repromatrix.matrix.cell import parse_cell

    if text.lstrip().startswith("{"):
        return parse_cell(text, "--cell")
    matrix = nearest_matrix()
    if matrix is None:
        raise UserError(f"--cell {text}: no matrix.yaml here or above to find it in")
    return matrix.find(text)


def project_packages() -> tuple[str, ...]:
    """What ``--as-of`` moves in time beside the default stack (as_of.time_travel adds
    it): the ``packages:`` of the nearest matrix.yaml (the project's own packages),
    else the default stack alone."""
    from repromatrix.matrix import DEFAULT_PACKAGES

    matrix = nearest_matrix()
    return DEFAULT_PACKAGES if matrix is None else matrix.packages


def probe(args: argparse.Namespace) -> Probe:
    from repromatrix.probe.spec import Probe

    return Probe(case=args.case, script=args.script, cases_root=args.cases, timeout=args.timeout)


def prober(args: argparse.Namespace, given: Prober | None = None) -> Prober:
    """The prober a hunt's probes are made with: ``given`` (a test's), else the real
    one: cells in ``--env-dir``, built within ``--install-timeout``."""
    if given is not None:
        return given
    from repromatrix.probe.prober import CellProber

    return CellProber(env_dir=args.env_dir, install_timeout=args.install_timeout)


def run(args: argparse.Namespace, given: Prober | None = None) -> int:
    """The hunt a command line names, on the one road (hunts.hunt.run_hunt): its cli
    module's ``options(args)``, its runner (``runner(args, given)``: a Prober, or the
    atlas's cells), its exit status. A step of its command that runs no hunt (the
    atlas's plan, query, ...) is its cli module's ``run_command``."""
    import importlib

    from repromatrix.hunt_table import hunt
    from repromatrix.hunts.hunt import run_hunt

    row = hunt(args.command)
    command = importlib.import_module(row.cli)
    other_step = getattr(command, "run_command", None)
    if other_step is not None and (code := other_step(args)) is not None:
        return code
    found = getattr(importlib.import_module(row.module), row.attribute)
    return run_hunt(found, command.options(args), command.runner(args, given))[1]
