"""Last night's results, the baseline of tonight's verdicts: the newest earlier
completed run of the nightly workflow that still has its ``nightly-results``
artifact (they expire after 30 days), downloaded and read once here, so that
``report`` and ``triage`` either both get a baseline they can read or both judge
without one, and the issue says which and why.

The atlas's nightly (atlas.yml) keeps its state the same way: last night's ``atlas``
artifact (reports/atlas/, atlas.json read by hunts/atlas/state.py) is where tonight
plans from, taken only from a run that succeeded (its fold job then uploaded the
``atlas`` artifact itself: a cell job that uploaded one first would have failed that
upload, and the run) and only when it matches that fold's seal (``atlas-seal``:
seal.json, the artifact's id and its files' digest, digest.sh's).

Every way of not having one is a line, never a failure: a first night, expired
artifacts, a gh that cannot list or download (not authenticated, rate limited), a
corrupt file or one of another schema.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.github.client import GitHub

ARTIFACT = "nightly-results"


def _read_results(folder: Path) -> None:
    from repromatrix.results import load_results

    load_results(folder)


def _read_atlas(folder: Path) -> None:
    from repromatrix.hunts.atlas.state import read_state

    read_state(folder)


# An artifact a night leaves for the next: the file it must hold, and its reader
# (a UserError of one line on anything it cannot read).
ARTIFACTS: dict[str, tuple[str, Callable[[Path], None]]] = {
    ARTIFACT: ("results.json", _read_results),
    "atlas": ("atlas.json", _read_atlas),
}


# Artifacts kept only from a run that succeeded, with a seal artifact beside them.
SEALED = {"atlas": "atlas-seal"}


def folder_digest(folder: Path) -> str:
    """digest.sh's digest of a folder: the sha256 of ``sha256sum``'s lines for every
    file, in byte order of their ./paths."""
    lines = []
    files = sorted(
        folder.rglob("*"), key=lambda p: ("./" + p.relative_to(folder).as_posix()).encode()
    )
    for path in files:
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise UserError(f"{path.name}: not a regular file")
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{digest}  ./{path.relative_to(folder).as_posix()}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _check_seal(client: GitHub, run: int, artifact: str, into: Path) -> None:
    """UserError unless ``into`` holds what run ``run``'s seal says it uploaded."""
    seal = into.parent / f".{into.name}-seal"
    shutil.rmtree(seal, ignore_errors=True)
    try:
        client.download(run, name=SEALED[artifact], into=seal)
        data = json.loads((seal / "seal.json").read_text(encoding="utf-8"))
        wanted = str(data["sha256"]) if isinstance(data, dict) else ""
    except (OSError, ValueError, KeyError) as err:
        raise UserError(f"its {SEALED[artifact]} cannot be read ({type(err).__name__})") from None
    finally:
        shutil.rmtree(seal, ignore_errors=True)
    found = folder_digest(into)
    if found != wanted:
        raise UserError(f"its {artifact} is not the one its fold sealed (sha256 {found[:12]})")


@dataclass(frozen=True)
class Baseline:
    found: bool
    note: str  # what was used, or why there is none (one line)
    run: int | None = None


def fetch_baseline(
    client: GitHub,
    *,
    into: Path,
    workflow: str,
    branch: str | None,
    this_run: int | None,
    tries: int = 5,
    artifact: str = ARTIFACT,
) -> Baseline:
    """Download the newest readable ``artifact`` (one of ARTIFACTS) into ``into``
    (emptied first)."""
    needed, read = ARTIFACTS[artifact]
    status = "success" if artifact in SEALED else "completed"
    try:
        found = client.completed_runs(workflow, branch=branch, status=status)
        runs = [r for r in found if r != this_run]
    except UserError as err:
        return Baseline(False, f"no baseline: listing earlier runs failed ({err})")
    if not runs:
        first = "completed nightly" if status == "completed" else "successful"
        return Baseline(False, f"no baseline: no earlier {first} run (a first night)")
    problems = []
    for run in runs[:tries]:
        shutil.rmtree(into, ignore_errors=True)
        try:
            client.download(run, name=artifact, into=into)
        except UserError as err:
            problems.append(f"run {run}: {err}")
            continue
        if not (into / needed).is_file():
            problems.append(f"run {run}: its {artifact} artifact has no {needed}")
            continue
        try:
            if artifact in SEALED:
                _check_seal(client, run, artifact, into)
        except UserError as err:
            problems.append(f"run {run}: {err}")
            continue
        try:
            read(into)
        except UserError as err:
            # A corrupt baseline judges nothing: tonight is judged alone, and says so.
            shutil.rmtree(into, ignore_errors=True)
            return Baseline(
                False, f"no baseline: run {run}'s {artifact} cannot be read ({err})", run
            )
        return Baseline(True, f"baseline: run {run}", run)
    shutil.rmtree(into, ignore_errors=True)
    return Baseline(False, "no baseline: " + "; ".join(problems)[:500])
