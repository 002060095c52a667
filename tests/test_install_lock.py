""".github/repromatrix/requirements.txt, the hashed lock every workflow installs
repromatrix's dependencies from (and init ships): it pins every dependency of
pyproject.toml and the build backend at a version they accept, each with its sha256s,
names no path of this machine, and says how it is made (nox -s lock, a session of the
noxfile)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from repromatrix.matrix.sessions import read_sessions

LOCK = Path(".github") / "repromatrix" / "requirements.txt"


def _pins(text: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of a `uv pip compile --generate-hashes` file."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for block in re.split(r"\n(?=\S)", text):
        if block.startswith("#") or not block.strip():
            continue
        head = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", block)
        assert head, block[:80]
        pins[canonicalize_name(head[1])] = (
            head[2],
            re.findall(r"--hash=sha256:([0-9a-f]{64})", block),
        )
    return pins


def test_the_lock_pins_what_pyproject_asks_each_with_its_hashes(repo_root: Path) -> None:
    pyproject = tomllib.loads((repo_root / "pyproject.toml").read_text())
    text = (repo_root / LOCK).read_text()
    pins = _pins(text)
    wanted = [*pyproject["project"]["dependencies"], *pyproject["build-system"]["requires"]]
    for requirement in map(Requirement, wanted):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in {LOCK}: python3 -m nox -s lock"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), (
            f"{LOCK} pins {name}=={pins[name][0]}, outside {requirement}: python3 -m nox -s lock"
        )
    assert all(hashes for _, hashes in pins.values())
    assert "uv" in pins  # the install step's own uv, where a runner has none
    assert not re.search(r"(/work/|/opt/|/tmp/|/home/|file:)", text)


def test_the_lock_says_how_it_is_made_and_that_session_exists(repo_root: Path) -> None:
    header = (repo_root / LOCK).read_text().split("\n\n")[0]
    assert "python3 -m nox -s lock" in header
    sessions = read_sessions(repo_root)
    assert sessions is not None and sessions.has("lock")
