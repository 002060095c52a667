"""Nights of the nightly workflow under act, one scenario at a time.

A ``Scenario`` is a throw-away git repository holding this repository's real
``.github/workflows`` (unmodified), ``src/``, ``pyproject.toml`` and ``README.md`` (the
package build reads it), plus the scenario's own small ``matrix.yaml`` and ``cases/``
(no pytest.ini there: pyproject.toml's pytest settings sit above it, as in a project of
one's own, and case ids must still be relative to cases/).
act checks out its working tree, and the workflows install repromatrix from it
(``--input repromatrix=.``)::

    scenario = Scenario(tmp_path)
    scenario.write(matrix=MATRIX, cases={"test_x.py": CASE})   # and commits
    first = scenario.night(tier="tiny")        # nightly.yml; its nightly-results is
    scenario.write(matrix=MOVED)               #   served to the next night's gh run download
    second = scenario.night(tier="tiny")
    scenario.gh.dispatches()                   # what the gather job dispatched
    bisect = scenario.dispatched(scenario.gh.dispatches()[0])   # run it, same inputs

Each night after the first finds the nights before it through ``gh run list``
(newest first, as GitHub lists them), exactly as the gather job asks for them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from support.act import REPO, ActRun, act_run
from support.gh_double import GhDouble

# .github/repromatrix: the hashed lock every install step takes the dependencies from.
COPIED = (
    ".github/workflows",
    ".github/actions",
    ".github/repromatrix",
    "src",
    "pyproject.toml",
    "README.md",
)
# The runner labels every act run maps onto this machine (support.act.RUNNER_LABELS).
RUNNER_INPUT = '["ubuntu-latest"]'
# How repromatrix's own repository configures the dispatched workflows (README: the
# workflows install repromatrix from the REPROMATRIX_SOURCE variable, `.` here).
REPOSITORY_VARIABLES = {"REPROMATRIX_SOURCE": ".", "NIGHTLY_RUNNER_LABELS": RUNNER_INPUT}
FIRST_RUN_ID = 1001


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=act test", "-c", "user.email=act@test.invalid", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


class Scenario:
    def __init__(self, root: Path, *, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.repo = root / "repo"
        self.work = root / "runs"
        self.work.mkdir(parents=True, exist_ok=True)
        self.gh = GhDouble(root / "github")
        self.env = env or {}
        self.nights: list[ActRun] = []
        self._copy_repository()

    def _copy_repository(self) -> None:
        self.repo.mkdir(parents=True)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for name in COPIED:
            source, target = REPO / name, self.repo / name
            if source.is_dir():
                shutil.copytree(source, target, ignore=ignore)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        _git(self.repo, "init", "-q", "-b", "main")

    def write(
        self,
        *,
        matrix: str | None = None,
        cases: dict[str, str] | None = None,
        known_issues: str | None = None,
        message: str = "scenario",
    ) -> None:
        """Write matrix.yaml / cases/<file> / cases/known_issues.yaml (dedented) and
        commit: act runs what is committed."""
        if matrix is not None:
            (self.repo / "matrix.yaml").write_text(textwrap.dedent(matrix))
        for name, text in (cases or {}).items():
            path = self.repo / "cases" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        registry = self.repo / "cases" / "known_issues.yaml"
        if known_issues is not None or not registry.exists():
            registry.parent.mkdir(parents=True, exist_ok=True)
            registry.write_text(textwrap.dedent(known_issues or "[]\n"))
        _git(self.repo, "add", "-A")
        _git(self.repo, "commit", "-q", "--allow-empty", "-m", message)

    def copy_project(self, project: Path) -> None:
        """Use a project's own matrix.yaml and cases/ (a dry run of its nightly) and commit."""
        shutil.copy2(project / "matrix.yaml", self.repo / "matrix.yaml")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
        shutil.copytree(project / "cases", self.repo / "cases", ignore=ignore, dirs_exist_ok=True)
        _git(self.repo, "add", "-A")
        _git(self.repo, "commit", "-q", "-m", "the project's matrix and cases")

    def night(self, *, tier: str, **inputs: str) -> ActRun:
        """One run of nightly.yml (repromatrix from the checkout, runner labels mapped
        to this machine); its nightly-results becomes a completed run for the next."""
        run = act_run(
            self.repo,
            workflow="nightly.yml",
            inputs={"tier": tier, "runner": RUNNER_INPUT, "repromatrix": ".", **inputs},
            gh=self.gh,
            work=self.work,
            env=self.env,
        )
        self.nights.append(run)
        if "nightly-results" in run.artifact_names():
            self.gh.seed_run(
                FIRST_RUN_ID + len(self.nights) - 1,
                {"nightly-results": run.artifact("nightly-results")},
                conclusion="success" if run.returncode == 0 else "failure",
            )
        return run

    def dispatched(self, dispatch: dict[str, Any]) -> ActRun:
        """Run a workflow the gather job dispatched (``gh.dispatches()[i]``) with exactly
        the inputs it was given; repromatrix and the runner come from the repository
        variables, as on GitHub."""
        return act_run(
            self.repo,
            workflow=dispatch["workflow"],
            inputs=dispatch["inputs"],
            variables=REPOSITORY_VARIABLES,
            gh=self.gh,
            work=self.work,
            env=self.env,
        )


def results_of(run: ActRun) -> dict[str, Any]:
    """results.json of a night's nightly-results artifact."""
    return json.loads((run.artifact("nightly-results") / "results.json").read_text())


# A real upstream regression in a second of CPU: packaging 22.0 removed LegacyVersion
# (pypa/packaging#407), so this case passes on 21.x and fails from 22.0.
LEGACY_VERSION_CASE = """
    def test_legacy_version_parses():
        from packaging.version import LegacyVersion

        assert str(LegacyVersion("not-a-version")) == "not-a-version"
"""
LEGACY_VERSION_CASE_ID = "test_legacy.py::test_legacy_version_parses"


def packaging_matrix(packaging_of: dict[str, str], tier: str = "tiny") -> str:
    """A matrix.yaml of one TIER: a CPU combination per id, pinning packaging to its
    version in PACKAGING_OF, torch left to the host."""
    rows = "".join(f'\n    - {{id: {id_}, packaging: "{v}"}}' for id_, v in packaging_of.items())
    return (
        "schema: 1\npackages: [torch, packaging]\ndefaults: {device: cpu, torch: null}\n"
        f"tiers:\n  {tier}:{rows}\n"
    )
