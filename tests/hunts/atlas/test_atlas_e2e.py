"""``repromatrix atlas run`` end to end, with real cells: three tiny packages built
here as wheels (a find-links folder added to the user's index settings, as a user's
PIP_FIND_LINKS would), uv environments, pytest in each cell, no torch: seconds.

a 1.1 and b 2.0 clash (the case fails); b 3.0 requires a < 1.2 (a conflict uv finds,
never run). The atlas must find exactly that, and a second run must test nothing."""

from __future__ import annotations

import json
import os
import shlex
import textwrap
from pathlib import Path

import pytest
from support.wheels import version_wheel as tiny_wheel

from repromatrix.cli import app

pytestmark = pytest.mark.e2e

CASE = """
import atlas_fake_a, atlas_fake_b, atlas_fake_c


def test_a_and_b_get_along():
    clash = (atlas_fake_a.VERSION, atlas_fake_b.VERSION) == ("1.1", "2.0")
    assert not clash, "a 1.1 and b 2.0 clash"
"""
MATRIX = """
schema: 1
packages: [torch, atlas-fake-a, atlas-fake-b, atlas-fake-c]
defaults: {device: cpu, torch: null}
tiers:
  smoke:
    - {id: one, atlas-fake-a: "1.0"}
atlas:
  axes: {atlas-fake-a: ">=1.0", atlas-fake-b: ">=1.0", atlas-fake-c: all}
  releases: all
  cases: [test_pair.py]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_env_store: Path) -> Path:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("1.0", "1.1", "1.2"):
        tiny_wheel(wheels, "atlas-fake-a", version)
    tiny_wheel(wheels, "atlas-fake-b", "1.0")
    tiny_wheel(wheels, "atlas-fake-b", "2.0")
    tiny_wheel(wheels, "atlas-fake-b", "3.0", ("atlas-fake-a<1.2",))
    for version in ("0.1", "0.2"):
        tiny_wheel(wheels, "atlas-fake-c", version)
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_pair.py").write_text(CASE)
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    found = os.environ.get("UV_FIND_LINKS") or os.environ.get("PIP_FIND_LINKS") or ""
    monkeypatch.setenv("PIP_FIND_LINKS", f"{found} {wheels}".strip())
    monkeypatch.delenv("UV_FIND_LINKS", raising=False)
    monkeypatch.setenv("REPROMATRIX_ENV_DIR", str(shared_env_store))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_atlas_finds_the_clash_and_the_conflict(project: Path, capsys) -> None:
    assert app.main(["atlas", "run", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "resolving 21 pairs with uv" in out and "1 of 21 pairs cannot be installed" in out
    folder = project / "reports" / "atlas"
    data = json.loads((folder / "atlas.json").read_text())
    cells = data["cells"]
    assert all(c["outcome"] in ("works", "breaks") for c in cells), "the conflict never ran"
    assert len(cells) <= 1.3 * 9 + 3
    broken = [c for c in cells if c["outcome"] == "breaks"]
    assert broken and all(
        (c["pins"]["atlas-fake-a"], c["pins"]["atlas-fake-b"]) == ("1.1", "2.0") for c in broken
    )
    assert broken[0]["failures"][0]["error"].endswith("a 1.1 and b 2.0 clash")
    assert broken[0]["resolved"]["atlas-fake-a"] == "1.1"
    repro = shlex.split(broken[0]["repro"])
    assert repro[:4] == ["repromatrix", "check", "--case", "test_pair.py::test_a_and_b_get_along"]
    assert "--pin" in repro and "atlas-fake-b==2.0" in repro and "torch=null" in repro

    assert app.main(["atlas", "query", "atlas-fake-b==2.0", "atlas-fake-a", "--json"]) == 0
    versions = json.loads(capsys.readouterr().out)["versions"]
    assert [(v["version"], v["status"], v["evidence"]) for v in versions] == [
        ("1.0", "works", "tested"),
        ("1.1", "breaks", "tested"),
        ("1.2", "works", "tested"),
    ]
    assert app.main(["atlas", "query", "atlas-fake-b==3.0", "atlas-fake-a", "--json"]) == 0
    last = json.loads(capsys.readouterr().out)["versions"][-1]
    assert (last["version"], last["status"]) == ("1.2", "conflict")
    assert "No solution found" in last["error"]
    page = (folder / "index.html").read_text()
    assert page.count('<table class="grid">') == 3
    assert (folder / "answers.csv").read_text().count("\n") == 1 + 9 + 6 + 6

    # Every answer stands: a second run tests nothing.
    assert app.main(["atlas", "run"]) == 0
    out = capsys.readouterr().out
    assert "atlas: 0 cells run" in out
    assert len(json.loads((folder / "atlas.json").read_text())["cells"]) == len(cells)
