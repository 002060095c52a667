"""The commands the nightly workflow calls (kept apart from cli.py's core ones):

repromatrix ci-matrix --tier nightly [--slices 4]      the tier as job matrices
repromatrix merge --into DIR SOURCE...                 per-job results -> one
repromatrix triage --results DIR [--baseline DIR] ...  verdicts (as `report`),
                                                       regressions, tracking
                                                       issue, bisect dispatch
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from repromatrix import gh
from repromatrix.errors import UserError
from repromatrix.matrix.defaults import KNOWN_ISSUES_FILE
from repromatrix.nightly import slices

# What the commands run is imported when they run: building the parser loads no
# results models, no triage.


def add_commands(commands: argparse._SubParsersAction) -> None:
    matrix = commands.add_parser("ci-matrix", help="a tier as GitHub Actions job matrices")
    matrix.add_argument("--matrix", type=Path)  # default: found upward (app.main)
    matrix.add_argument("--tier", required=True)
    matrix.add_argument(
        "--slices", type=int, default=4, help="slice jobs in the workflow (default: 4)"
    )
    matrix.add_argument(
        "--size",
        type=int,
        default=slices.GITHUB_MATRIX_LIMIT,
        help="jobs per slice at most (default: GitHub's limit, %(default)s)",
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
        help="when something regressed, open or update the tracking issue with this body",
    )
    triaging.add_argument("--label", default=gh.TRACKING_LABEL)
    triaging.add_argument("--title", default=gh.TRACKING_TITLE)
    triaging.add_argument(
        "--dispatch",
        action="store_true",
        help="start the bisect workflow for each culprit hunt (gh workflow run)",
    )
    triaging.add_argument("--workflow", default="bisect.yml")
    triaging.add_argument(
        "--culprit-workflow",
        default="culprit.yml",
        help="the workflow of a culprit hunt (several packages moved): %(default)s",
    )
    triaging.add_argument("--ref", help="the branch the bisect workflow runs on")
    triaging.add_argument(
        "--github-output",
        type=Path,
        default=Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None,
        help="step outputs file (default: $GITHUB_OUTPUT)",
    )


def run_command(args: argparse.Namespace) -> int | None:
    """The exit status of a command of this module, None for another one."""
    if args.command == "ci-matrix":
        from repromatrix.matrix.load import load_matrix

        combos = load_matrix(args.matrix).tier(args.tier)
        for key, value in slices.github_outputs(combos, count=args.slices, size=args.size).items():
            print(f"{key}={value}")
        return 0
    if args.command == "merge":
        from repromatrix.matrix.load import load_matrix
        from repromatrix.results.gather import merge

        order = (
            [c.id for c in load_matrix(args.matrix).combinations()] if args.matrix.exists() else []
        )
        merged = merge(args.into, args.sources, order=order, replace=args.replace)
        print(f"merged {len(merged.combinations)} combinations into {args.into}")
        return 0
    if args.command == "triage":
        return _triage(args)
    return None


def _triage(args: argparse.Namespace) -> int:
    from repromatrix.nightly.triage import triage
    from repromatrix.results import load_results, write_json_atomic
    from repromatrix.verdicts.knownissues import RegistryLocation

    tonight = load_results(args.results)
    baseline = load_results(args.baseline) if args.baseline else None
    # The verdicts `report` gave: the same rule finds the same registry.
    registry = RegistryLocation.of(
        matrix=args.matrix, cases=args.cases, explicit=args.known_issues
    ).load()
    found = triage(tonight, baseline, limit=args.limit, registry=registry)
    folder = args.results if args.results.is_dir() else args.results.parent
    write_json_atomic(folder / "triage.json", found.dump())

    if baseline is None:
        print("no baseline: nothing to compare with, nothing dispatched")
    for r in found.regressions:
        print(f"regressed: {r.combination} {r.case} ({r.before} -> {r.now})")
    for line in found.not_bisected:
        print(f"not bisected: {line}")

    client = gh.GitHub()
    issue = None
    if found.regressed and args.summary is not None:
        if not args.summary.is_file():
            raise UserError(f"{args.summary}: no such summary (run `repromatrix report` first)")
        issue = client.ensure_tracking_issue(args.summary, label=args.label, title=args.title)
    for request in found.bisects:
        print(f"culprit hunt: {request.package} {request.good}..{request.bad} ({request.reason})")
        if args.dispatch:
            client.dispatch(args.workflow, request.workflow_inputs(issue), ref=args.ref)
    for hunt in found.culprits:
        print(f"culprit hunt: {hunt.combination} {hunt.case}: {', '.join(hunt.changed)}")
        baseline_dir = args.baseline if args.baseline and args.baseline.is_dir() else "BASELINE"
        print(f"  locally: {hunt.command(str(baseline_dir), str(folder))}")
        if args.dispatch:
            client.dispatch(args.culprit_workflow, hunt.workflow_inputs(issue), ref=args.ref)

    if args.github_output is not None:
        with open(args.github_output, "a") as handle:
            handle.write(f"regressed={'true' if found.regressed else 'false'}\n")
            handle.write(f"issue={issue or ''}\n")
            handle.write(f"bisects={len(found.bisects)}\n")
            handle.write(f"culprits={len(found.culprits)}\n")
    return 0
