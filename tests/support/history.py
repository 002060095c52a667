"""A package's history for the watch's follow-up: a local git repository standing in
for its repository (tags per release, the fixing commit between two of them, main
beyond the last release) and its releases as tiny offline wheels.

``tinyfix``'s ``answer()`` is 41 (the bug) up to the commit "Fix the answer (#41234)",
42 after it; releases 1.0 (broken), 1.1, 1.2, 1.3 (fixed). A second package,
``tinyother``, moves along and changes nothing. ``history(root, AHEAD, ("1.0",))``: a
package whose only release is broken and whose main carries the fix (main ahead)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from support.wheels import project_toml, pure_wheel

PACKAGE = "tinyfix"
OTHER = "tinyother"
AHEAD = "tinyahead"  # fixed on main, not in a release
FIX_SUBJECT = "Fix the answer (#41234)"
FIX_PR = 41234
RELEASES = ("1.0", "1.1", "1.2", "1.3")
REPRO = """\
# repromatrix: tinyfix
import tinyfix

assert tinyfix.answer() == 42, f"answer() is {tinyfix.answer()}"
"""


def repro(package: str = PACKAGE, *also: str) -> str:
    """The repro of ``package``'s bug (``also``: more packages it names)."""
    return REPRO.replace(PACKAGE, package).replace(
        f"# repromatrix: {package}", " ".join(["# repromatrix:", package, *also]), 1
    )


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _source(answer: int) -> str:
    return f"def answer():\n    return {answer}\n"


def _commit(repo: Path, subject: str, answer: int, version: str) -> str:
    name = repo.name  # the package's repository is named after it
    (repo / "pyproject.toml").write_text(project_toml(name, version))
    package = repo / "src" / name
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(_source(answer))
    (repo / "NOTES").write_text(subject + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD")


@dataclass(frozen=True)
class History:
    repo: Path
    fix: str  # the fixing commit's sha
    head: str  # main's head

    @property
    def url(self) -> str:
        return self.repo.as_uri()


def history(root: Path, package: str = PACKAGE, releases: tuple[str, ...] = RELEASES) -> History:
    """v1.0, two commits, the fix, v1.1, v1.2, v1.3 (``releases``), a commit on main
    after it."""
    repo = root / package
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "Release 1.0", 41, "1.0")
    git(repo, "tag", "v1.0")
    _commit(repo, "Docs (#41230)", 41, "1.0")
    _commit(repo, "Refactor (#41232)", 41, "1.0")
    fix = _commit(repo, FIX_SUBJECT, 42, "1.0")
    _commit(repo, "Tests (#41236)", 42, "1.0")
    for version in releases[1:]:
        _commit(repo, f"Release {version}", 42, version)
        git(repo, "tag", f"v{version}")
    head = _commit(repo, "Next (#41300)", 42, "1.4.dev0")
    return History(repo, fix, head)


def release_wheels(
    house: Path, versions: tuple[str, ...] = RELEASES, package: str = PACKAGE
) -> list[Path]:
    """``package``'s releases as wheels in ``house`` (1.0 broken, later ones fixed)."""
    return [
        pure_wheel(house, package, v, {f"{package}/__init__.py": _source(41 if v == "1.0" else 42)})
        for v in versions
    ]


def other_wheels(house: Path, versions: tuple[str, ...]) -> list[Path]:
    """tinyother's releases: nothing in them matters to the repro."""
    return [
        pure_wheel(house, OTHER, v, {f"{OTHER}/__init__.py": f"VERSION = {v!r}\n"})
        for v in versions
    ]


def long_history(
    root: Path, package: str, releases: int, per_release: int, fixed: tuple[int, int]
) -> History:
    """``releases`` releases 1.0, 1.1, ... with ``per_release`` commits before each
    (after 1.0), the fix at commit ``fixed[1]`` (1-based) of the commits before release
    ``fixed[0]`` (an index: 1 is 1.1), then a commit on main (the benchmark's history)."""
    repo = root / package
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "Release 1.0", 41, "1.0")
    git(repo, "tag", "v1.0")
    answer, fix = 41, ""
    for index in range(1, releases):
        for number in range(1, per_release):
            if (index, number) == fixed:
                answer = 42
                fix = _commit(repo, f"Fix the answer (#{FIX_PR})", 42, f"1.{index - 1}")
            else:
                subject = f"Change {index}.{number} (#{index * 100 + number})"
                _commit(repo, subject, answer, f"1.{index - 1}")
        answer = 42 if index >= fixed[0] else answer
        _commit(repo, f"Release 1.{index}", answer, f"1.{index}")
        git(repo, "tag", f"v1.{index}")
    head = _commit(repo, "Next (#99999)", answer, f"1.{releases}.dev0")
    return History(repo, fix, head)


def long_wheels(house: Path, package: str, releases: int, first_fixed: int) -> list[Path]:
    """``package``'s releases 1.0 .. 1.(releases-1) as wheels; fixed from ``first_fixed``."""
    return [
        pure_wheel(
            house, package, f"1.{i}", {f"{package}/__init__.py": _source(41 + (i >= first_fixed))}
        )
        for i in range(releases)
    ]
