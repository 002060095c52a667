"""Dry-run the nightly under act before pushing it: ``nox -s nightly-dry-run``.

Night 1 of a tier (default: smoke) of this checkout's matrix.yaml and cases/, through
the real .github/workflows, on this machine, offline but for the package indexes: act
in host mode (tests/support/act.py) and a ``gh`` test double standing in for GitHub
(tests/support/gh_double.py). It prints each combination's verdict, what gh would have
been asked (issues opened, workflows dispatched) and where act's full log is; its exit
status is the run's (0 green).

    python tests/support/nightly_dry_run.py [--tier T] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `support` as a package

from support.act import REPO, missing
from support.nights import Scenario


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nightly-dry-run", description=__doc__.split("\n")[0])
    parser.add_argument("--tier", default="smoke", help="tier of matrix.yaml (default: smoke)")
    parser.add_argument("--work", type=Path, help="keep the run here (default: a temp folder)")
    args = parser.parse_args(argv)
    lacking = missing()
    if lacking:
        print(f"nightly-dry-run: {lacking}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="nightly-dry-run-"))
    scenario = Scenario(work)
    scenario.copy_project(REPO)
    print(f"nightly-dry-run: tier {args.tier} under act; log in {work}/runs/", flush=True)
    run = scenario.night(tier=args.tier)
    if "nightly-results" in run.artifact_names():
        results = json.loads((run.artifact("nightly-results") / "results.json").read_text())
        for combination in results["combinations"]:
            print(f"  {combination['verdict'] or combination['status']:<14} {combination['id']}")
    else:
        print("  no nightly-results: the run ended before the gather job (see the log)")
    calls = scenario.gh.calls()
    print(f"gh was asked {len(calls)} time(s):")
    for call in calls:
        print(f"  gh {shlex.join(call['argv'])}  (exit {call['exit']})")
    print(f"act exit status {run.returncode}; full log: {run.log_path}")
    return 0 if run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
