"""Benchmark: what a confirmed, bisected flip adds to the nightly watch, in cells.

    python benchmarks/bench_flip.py [--distances 1 3 7 15] [--moved 1 2 4] [--commits 16]
                                    [--real]

A watched issue costs the watch one cell a night (its check). A night that flips adds
the follow-up (issue/follow.py): ``confirm`` reruns (2 by default), then the release
hunt (a bisect when one package moved, a culprit hunt when several did), then the
commit bisect between the two releases found. This runs that follow-up, on the one
road the run job takes (``follow``), over a real package history: a local git
repository (tests/support/history.py: ``long_history``, ``--commits`` commits between
releases, the fix in one of them) and its releases as wheels in a find-links folder
(the index the hunts list), for each release distance (releases between the last
decisive night and tonight) and each number of packages that moved (the others,
noise, move from 1.0 to 1.1). The prober is a stand-in that answers as the package
does (its release, or the commit it is built from): the count is the hunts' own, no
cell is built. With ``--real``, one flip (distance 3, one package) also runs in real
cells (uv, offline from the folder, the commits built with hatchling) beside tonight's
check in the same run: the seconds the follow-up takes against the night's one cell.

Figures: benchmarks/results/flip.json, quoted in docs/issue-repro.md ("What a flip
costs the watch").
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from support.history import FIX_PR, long_history, long_wheels  # noqa: E402
from support.pip import PIP  # noqa: E402
from support.wheels import version_wheel  # noqa: E402

from repromatrix.environment import IndexSettings  # noqa: E402
from repromatrix.issue.answer import Result  # noqa: E402
from repromatrix.issue.follow import follow  # noqa: E402
from repromatrix.issue.plan import Job  # noqa: E402
from repromatrix.issue.state import Observed  # noqa: E402
from repromatrix.matrix.cell import CellSpec  # noqa: E402
from repromatrix.matrix.pins import PinKind, parse_pin_option  # noqa: E402
from repromatrix.outcomes import ProbeOutcome  # noqa: E402
from repromatrix.probe.observation import BuiltCell, Observation  # noqa: E402
from repromatrix.probe.prober import CellProber  # noqa: E402
from repromatrix.probe.spec import Probe, Trial  # noqa: E402
from repromatrix.results import write_json_atomic  # noqa: E402

PACKAGE = "benchflip"
NOISE = "benchnoise"
CONFIRM = 2
RESULTS = ROOT / "benchmarks" / "results" / "flip.json"
REPRO = f"import {PACKAGE}\n\nassert {PACKAGE}.answer() == 42, {PACKAGE}.answer()\n"


class StandIn:
    """Good where the package answers 42: a release from ``first_fixed`` on, a commit
    from the fix on (``fixed``: their shas). Counts the cells it was asked for."""

    def __init__(self, first_fixed: int, fixed: set[str]) -> None:
        self.first_fixed = first_fixed
        self.fixed = fixed
        self.cells = 0

    def __call__(self, trial: Trial) -> Observation:
        self.cells += 1
        pin = {p.package: p for p in trial.cell.pins}[PACKAGE]
        if pin.kind is PinKind.DIRECT:
            good = pin.spec.rsplit("@", 1)[-1] in self.fixed
        elif pin.kind is PinKind.LATEST:  # tonight's cell, rerun: the newest release
            good = True
        else:
            good = int(pin.spec.rsplit(".", 1)[-1]) >= self.first_fixed
        return Observation(ProbeOutcome.GOOD if good else ProbeOutcome.BAD, "", 0.0)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _job(url: str, before: dict[str, str]) -> Job:
    watched = list(before)
    return Job(
        issue=1, kind="watch", line="nightly watch", pins=[f"{p}=latest" for p in watched],
        watched=watched,
        source="issue", timeout=600, confirm=CONFIRM,
        since=Observed(outcome="bad", versions=before), repositories={PACKAGE: url},
    )  # fmt: skip


def one_flip(
    place: Path,
    distance: int,
    moved: int,
    commits: int,
    prober=None,
    real: bool = False,
    remember: bool = True,
) -> dict:
    """A flip ``distance`` releases after the last decisive night, ``moved`` packages
    moved, the fix in the middle release's middle commit: the follow-up's cells."""
    place.mkdir(parents=True)
    house = place / "house"
    house.mkdir()
    first_fixed = (distance + 1) // 2 or 1  # a release in the middle (an index; 1 is 1.1)
    found = long_history(place, PACKAGE, distance + 1, commits, (first_fixed, commits // 2))
    long_wheels(house, PACKAGE, distance + 1, first_fixed)
    noise = [f"{NOISE}{i}" for i in range(1, moved)]
    for name in noise:
        for version in ("1.0", "1.1"):
            version_wheel(house, name, version)
    if real:  # what every real cell holds besides the package: the runner, and hatchling
        online = {
            k: v for k, v in os.environ.items() if k not in ("PIP_FIND_LINKS", "PIP_NO_INDEX")
        }
        for requirement in ("pytest", "pytest-xdist", "hatchling>=1.21"):
            download = [*PIP, "download", "-d", str(house), requirement]
            subprocess.run(download, check=True, env=online)
    os.environ.update(PIP_FIND_LINKS=str(house), PIP_NO_INDEX="1")
    os.environ["REPROMATRIX_ENV_DIR"] = str(place / "cells")
    fixed = set(_git(found.repo, "rev-list", f"{found.fix}^..main").split())
    before = {PACKAGE: "1.0", **{name: "1.0" for name in noise}}
    now = {PACKAGE: f"1.{distance}", **{name: "1.1" for name in noise}}
    script = place / "repro.py"
    script.write_text(REPRO)
    probe = Probe(script=script, cases_root=place, timeout=600)
    job = _job(found.url, before)
    counted = prober or StandIn(first_fixed, fixed)
    started = time.monotonic()
    if real:  # tonight's check, in a real cell: the night's one cell, side by side
        pins = tuple(parse_pin_option(f"{n}=={v}") for n, v in now.items())
        index = IndexSettings.from_environment()
        observation = counted(Trial(probe, CellSpec(pins=pins), index, place / "steps", "check"))
    else:
        observation = Observation(
            ProbeOutcome.GOOD, "", 0.0, cell=BuiltCell("0" * 16, resolved=now)
        )
    check_seconds = time.monotonic() - started
    result = Result(issue=1, kind="watch", status="done", outcome="good", versions=now)
    started = time.monotonic()
    follow(job, result, observation, probe, place / "answers", stop_at=time.monotonic() + 7200,
           prober=counted, remember=remember)  # fmt: skip
    follow_seconds = time.monotonic() - started
    named = result.named
    assert named is not None, result.markdown
    right = (named.package, named.release, named.commit and named.commit.sha) == (
        PACKAGE, f"1.{first_fixed}", found.fix,
    )  # fmt: skip
    right = right and named.commit is not None and named.commit.pr == FIX_PR
    return {
        "distance": distance,
        "moved": moved,
        "commits_between_releases": commits,
        "confirm": CONFIRM,
        "how": named.how,
        "releases_searched": named.releases,
        "commits_searched": named.commits,
        # reruns + hunts: what the flip adds to the night's one cell (a cell seen tonight
        # is not built again: follow's Budget; the run without it beside)
        "cells": named.cells,
        "hunt_cells": named.cells - CONFIRM,
        "correct": bool(right),
        "said": f"{named.package} {named.before} -> {named.release}, commit "
        f"{(named.commit.sha[:12] if named.commit else None)}",
        **(
            {
                "check": f"{observation.outcome.value}: {observation.detail[:120]}",
                "check_seconds": round(check_seconds, 1),
                "follow_seconds": round(follow_seconds, 1),
                "follow_to_check": round(follow_seconds / max(check_seconds, 0.1), 1),
            }
            if real
            else {}
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distances", type=int, nargs="+", default=[1, 3, 7, 15])
    parser.add_argument("--moved", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--commits", type=int, default=16, help="commits between releases")
    parser.add_argument("--real", action="store_true", help="one flip in real cells too")
    args = parser.parse_args()
    kept = {k: os.environ.get(k) for k in ("PIP_FIND_LINKS", "PIP_NO_INDEX", "REPROMATRIX_ENV_DIR")}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-flip-") as folder:
        for distance in args.distances:
            for moved in args.moved:
                place = Path(folder) / f"d{distance}-m{moved}"
                row = one_flip(place / "remembered", distance, moved, args.commits)
                every = one_flip(place / "every", distance, moved, args.commits, remember=False)
                row["cells_probing_every_step"] = every["cells"]  # side by side, same run
                row["correct"] = row["correct"] and every["correct"]
                rows.append(row)
                print(f"distance {distance}, {moved} moved: {row['cells']} cells "
                      f"({every['cells']} probing every step; {row['how']}), "
                      f"correct={row['correct']}", file=sys.stderr)  # fmt: skip
        real = None
        if args.real:
            real = one_flip(Path(folder) / "real", 3, 1, args.commits, CellProber(), real=True)
            print(f"real: {real}", file=sys.stderr)
    for name, value in kept.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    document = {
        "benchmark": "flip",
        "what": "cells a confirmed, bisected flip adds to the watch's one cell a night "
        f"(confirm {CONFIRM}, {args.commits} commits between releases, stand-in prober)",
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "flips": rows,
        "real": real,
    }
    write_json_atomic(RESULTS, document)
    return 0 if all(r["correct"] for r in rows) and (real is None or real["correct"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
