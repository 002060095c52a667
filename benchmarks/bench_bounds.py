"""Cells per dependency of ``repromatrix bounds``: the planted universe, synthetic
universes of growing size, and the committed real reports.

    PYTHONPATH=src python benchmarks/bench_bounds.py [--seeds 20]

Side by side in one run:

- the planted universe (tests/support/planted_bounds.py) through the real hunt: tiny
  wheels, uv cells, a script probe; the cells it took, per dependency tested, and
  whether every verdict and suggestion is the planted one (goal: about 20 cells for its
  four dependencies of 4-6 releases);
- synthetic universes (the engine with a planted oracle, nothing installed): 2, 4 and 8
  dependencies of 5, 20 and 80 releases, each range wrong in a random way or right;
  the mean and largest cells per dependency, and wrong answers (goal: cells grow with
  the dependencies, not with their release counts; no wrong answer);
- the reports committed under reports/bounds-cpu/: cells, dependencies, seconds.

Writes benchmarks/results/bounds.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from packaging.version import Version  # noqa: E402

from repromatrix.hunts.bounds.cellset import Cells, Seen  # noqa: E402
from repromatrix.hunts.bounds.engine import Floors, judge  # noqa: E402
from repromatrix.hunts.bounds.ranges import Dependency, split_releases  # noqa: E402
from repromatrix.outcomes import BoundVerdict, ProbeOutcome  # noqa: E402

SHAPES = ("ok", "floor-too-low", "ceiling-missing", "ceiling-too-tight")


def planted_run() -> dict:
    from support import planted_bounds as planted

    from repromatrix.hunts.bounds.run import BoundsOptions, run_bounds
    from repromatrix.probe.prober import CellProber
    from repromatrix.probe.spec import Probe

    with tempfile.TemporaryDirectory(prefix="bench-bounds-") as folder:
        base = Path(folder)
        wheels = planted.wheelhouse(base / "wheels")
        script = planted.probe(base / "probe.py")
        options = BoundsOptions(
            target="bf-app==1.0", probe=Probe(script=script), extras=("more", "gee"),
            wheelhouse=wheels, out=base / "reports",
        )  # fmt: skip
        clock = time.monotonic()
        record, _ = run_bounds(options, CellProber(env_dir=base / "envs"), say=lambda _: None)
        seconds = time.monotonic() - clock
    answers = {d.name: (d.verdict.value, d.suggested) for d in record.dependencies}
    tested = [d for d in record.dependencies if d.releases]
    return {
        "dependencies": len(record.dependencies),
        "tested": len(tested),
        "releases": {d.name: d.releases for d in tested},
        "cells": record.cells,
        "cells_per_tested_dependency": round(record.cells / len(tested), 2),
        "right": answers == planted.EXPECTED,
        "seconds": round(seconds, 1),
    }


def synthetic(dependencies: int, releases: int, rnd: random.Random) -> tuple[int, int]:
    """One random universe: (cells, wrong answers, untestable answers)."""
    deps, faults, expected = [], {}, {}
    for i in range(dependencies):
        versions = [Version(f"1.{v}") for v in range(releases)]
        shape = rnd.choice(SHAPES)
        low = rnd.randrange(1, releases // 2) if shape == "floor-too-low" else 0
        cap = rnd.randrange(releases // 2, releases - 2)
        if shape == "ceiling-too-tight":
            breaks = rnd.randrange(cap + 2, releases)  # works past the cap
        elif shape == "ceiling-missing":
            breaks, cap = rnd.randrange(releases // 2, releases), None
        else:
            breaks = cap + 1
            cap = cap if rnd.random() < 0.5 else None
            if cap is None:
                breaks = releases  # no cap, nothing breaks
        specifier = ">=1.0" + (f",<{versions[cap + 1]}" if cap is not None else "")
        admitted, excluded = split_releases(specifier, versions)
        name = f"d{i}"
        deps.append(Dependency(name, specifier, (f"{name}{specifier}",), admitted, excluded))
        faults[name] = (versions[low], versions[breaks] if breaks < releases else None)
        expected[name] = shape if shape != "ok" else "ok"

    def oracle(versions, role):
        bad = [
            n for n, v in versions.items()
            if v < faults[n][0] or (faults[n][1] is not None and v >= faults[n][1])
        ]  # fmt: skip
        oracle.n += 1
        return Seen(ProbeOutcome.BAD if bad else ProbeOutcome.GOOD, " ".join(bad), False, oracle.n)

    oracle.n = 0
    cells = Cells(oracle)
    judged = judge(deps, cells, floors=Floors({d.name: d.admitted[0] for d in deps}))
    wrong = untestable = 0
    for answer in judged.answers:
        got = answer.verdict.value
        if got == BoundVerdict.UNTESTABLE.value:
            untestable += 1
        elif got != expected[answer.dependency.name]:
            wrong += 1
    return cells.count, wrong, untestable


def synthetic_table(seeds: int) -> dict:
    table = {}
    for dependencies in (2, 4, 8):
        for releases in (5, 20, 80):
            rnd = random.Random(f"{dependencies}-{releases}")
            runs = [synthetic(dependencies, releases, rnd) for _ in range(seeds)]
            cells, wrong, untestable = zip(*runs, strict=True)
            per = [c / dependencies for c in cells]
            table[f"{dependencies}x{releases}"] = {
                "cells_mean": round(statistics.mean(cells), 1),
                "cells_per_dependency_mean": round(statistics.mean(per), 2),
                "cells_per_dependency_max": round(max(per), 2),
                "wrong_answers": sum(wrong),  # a confident verdict that is not the planted one
                "untestable_answers": sum(untestable),  # said so, with the reason
                "seeds": seeds,
            }
    return table


def real_reports() -> dict:
    found = {}
    for path in sorted((ROOT / "reports" / "bounds-cpu").glob("*/bounds.json")):
        data = json.loads(path.read_text())
        tested = [d for d in data["dependencies"] if d.get("releases")]
        found[path.parent.name] = {
            "dependencies": len(tested),
            "releases": {d["name"]: d["releases"] for d in tested},
            "cells": data["cells"],
            "cells_per_dependency": round(data["cells"] / max(1, len(tested)), 2),
            "verdicts": {d["name"]: d["verdict"] for d in data["dependencies"]},
            "seconds": round(data["seconds"]),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    results = {
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        ),
        "load_average": round(os.getloadavg()[0], 1),
        "planted": planted_run(),
        "synthetic": synthetic_table(args.seeds),
        "real": real_reports(),
        "goals": {"planted_cells": 20, "wrong_answers": 0},
    }
    out = ROOT / "benchmarks" / "results" / "bounds.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
