"""``repromatrix atlas``: which versions of the stack work together (hunts/atlas/).

    repromatrix atlas run [--wheelhouse DIR] [--budget N] [--jobs N]
                                  plan tonight's cells, run them, update reports/atlas/
    repromatrix atlas plan        the cells a run would test and why; runs nothing
    repromatrix atlas query PKG==VER OTHER [--json]
                                  each release of OTHER with PKG==VER: works, breaks,
                                  conflict or untested, and the evidence
    repromatrix atlas recommend [--pin PKG==VER ...]
                                  the newest set known to work with the pins
    repromatrix atlas report      re-render index.html and answers.csv from atlas.json
    repromatrix atlas plan --tier-file FILE
                                  a nightly's fan-out: tonight's cells as a tier
    repromatrix atlas fold --plan FILE --artifacts DIR
                                  and each planned cell's own artifact folded back

Exit status: 0 done, 1 (recommend) no set is known to work, 2 bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.hunt_table import hunt

if TYPE_CHECKING:
    from repromatrix.hunts.atlas.engine import CellRunner
    from repromatrix.hunts.atlas.run import AtlasOptions
    from repromatrix.probe.prober import Prober

COMMANDS = ("atlas",)
OUT = Path("reports/atlas")


def add_commands(commands: argparse._SubParsersAction) -> None:
    words = hunt("atlas").words
    atlas = commands.add_parser(
        "atlas", help=words.help, description=f"{words.about} {words.exits}"
    )
    steps = atlas.add_subparsers(dest="step", required=True, metavar="STEP")

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--matrix",
            type=Path,
            help="the matrix file with the atlas: block (default: the nearest matrix.yaml)",
        )
        parser.add_argument(
            "--out",
            type=Path,
            default=OUT,
            help="the atlas folder (default: %(default)s beside the matrix.yaml found upward)",
        )

    run = steps.add_parser("run", help="plan tonight's cells, run them, update the atlas")
    common(run)
    run.add_argument("--wheelhouse", type=Path, metavar="DIR", help="only this folder's wheels")
    run.add_argument(
        "--budget", type=int, metavar="N", help="the most cells (default: atlas.budget)"
    )
    run.add_argument("--jobs", type=int, default=1, metavar="N", help="cells at once (default: 1)")
    run.add_argument("--env-dir", type=Path, help="where environments are kept")
    run.add_argument("--cases", type=Path, help="the cases folder (default: beside the matrix)")
    run.add_argument(
        "--reruns", type=int, default=2, help="reruns of a failing case (default: %(default)s)"
    )

    plan = steps.add_parser("plan", help="the cells a run would test and why; runs nothing")
    common(plan)
    plan.add_argument("--wheelhouse", type=Path, metavar="DIR", help="only this folder's wheels")
    plan.add_argument(
        "--budget", type=int, metavar="N", help="the most cells (default: atlas.budget)"
    )
    plan.add_argument("--json", action="store_true", help="one JSON object")
    plan.add_argument(
        "--tier-file",
        type=Path,
        metavar="FILE",
        help="also write the cells as a matrix file with one tier, atlas, for a nightly "
        "to fan out (repromatrix run --matrix FILE --tier atlas; then atlas fold)",
    )

    fold = steps.add_parser(
        "fold", help="fold a nightly's results of the planned tier into the atlas"
    )
    common(fold)
    fold.add_argument(
        "--plan",
        type=Path,
        required=True,
        metavar="FILE",
        help="the plan's tier file (atlas plan --tier-file), checked against atlas.json",
    )
    fold.add_argument(
        "--artifacts",
        type=Path,
        required=True,
        metavar="DIR",
        help="the downloaded combination-atlas-NNN artifacts (one folder each)",
    )

    query = steps.add_parser("query", help="each release of OTHER with PKG==VER")
    common(query)
    query.add_argument("pin", metavar="PKG==VER")
    query.add_argument("other", metavar="OTHER")
    query.add_argument("--json", action="store_true", help='{"versions": [...]}')

    recommend = steps.add_parser("recommend", help="the newest set known to work with the pins")
    common(recommend)
    recommend.add_argument(
        "--pin", action="append", default=[], metavar="PKG==VER", help="a version to keep"
    )
    recommend.add_argument("--json", action="store_true", help="one JSON object")

    report = steps.add_parser("report", help="re-render index.html and answers.csv (runs nothing)")
    common(report)


def run_command(args: argparse.Namespace) -> int | None:
    """The steps that run no hunt (plan, fold, query, recommend, report); None for
    ``atlas run``, which takes the one road (cli/hunting.run)."""
    if args.step in ("query", "recommend"):
        from repromatrix.hunts.atlas import query

        if args.step == "query":
            return query.query_command(args.out, args.pin, args.other, as_json=args.json)
        return query.recommend_command(args.out, args.pin, as_json=args.json)
    from repromatrix.hunts.atlas import commands

    if args.step == "report":
        return commands.report(args.out)
    if args.step == "plan":
        return commands.plan(
            args.matrix, args.out, args.wheelhouse, args.budget, args.json, args.tier_file
        )
    if args.step == "fold":
        return _fold(args)
    return None


def options(args: argparse.Namespace) -> AtlasOptions:
    """``atlas run``'s options, named as AtlasOptions names them (known_issues: the
    default)."""
    from repromatrix.hunts.atlas.run import AtlasOptions

    given = ("out", "wheelhouse", "budget", "jobs", "env_dir", "cases", "reruns")
    return AtlasOptions.read(args.matrix, **{name: getattr(args, name) for name in given})


def runner(_args: argparse.Namespace, _given: Prober | None = None) -> CellRunner | None:
    """The atlas's cells run through the pipeline (None): a Prober makes one probe,
    the atlas runs whole cells (engine.CellRunner), so one handed to main() is not
    its; tests hand theirs to hunts.atlas.run.run."""
    return None


def _fold(args: argparse.Namespace) -> int:
    """``atlas fold``: the cell jobs of the plan's tier file made again (the plan
    ci-matrix cut), so each cell is taken from its own job's artifact."""
    from repromatrix.hunts.atlas import commands
    from repromatrix.hunts.atlas.cells import TIER
    from repromatrix.hunts.atlas.fold import expected_cells
    from repromatrix.matrix.load import load_matrix
    from repromatrix.nightly import slices

    tier = load_matrix(args.plan)
    combos = tier.tier(TIER)
    parts = slices.plan(combos, count=1, settings=tier.settings_of(TIER))
    artifact_of = {
        cell: f"combination-{job.combinations[0]}"
        for part in parts
        for job in part
        for cell in job.combinations
    }
    expected = expected_cells(combos, artifact_of)
    return commands.fold(args.out, args.matrix, args.plan, args.artifacts, expected)
