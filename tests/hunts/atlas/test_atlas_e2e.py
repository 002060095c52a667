"""``repromatrix atlas run --wheelhouse DIR`` end to end on a planted universe of tiny
wheels: the folder is the only index (the listing, uv's resolution and every cell's
install), real uv environments, pytest in each cell, no torch: a few minutes.

Three axes (c optional: cells without it too) and a dependency that is no axis,
with every shape the atlas must answer right:

- a pair of non-adjacent axes: a 1.1 with c 0.2 (test_clash);
- a non-monotone band: a 1.3 fails with b 2.0 and b 4.0, works with b 1.0 and 3.0
  (test_band);
- a release that works with exactly one partner: a 1.2 works only beside b 3.0
  (test_fallback, one message for every partner: one cause);
- a three-way failure: a 1.0, b 1.0 and c 0.1 together (test_three);
- a conflict through the dependency: a 1.0 needs dep < 2, c 0.3 needs dep >= 2.

Every pair comes out as planted, case by case, within about 1.3 times the pairwise
lower bound plus three cells per broken pair; a second run tests nothing."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from support.pip import PIP
from support.wheels import pure_wheel

from repromatrix.cli import app

pytestmark = pytest.mark.e2e

A = ("1.0", "1.1", "1.2", "1.3")
B = ("1.0", "2.0", "3.0", "4.0")
C = ("absent", "0.1", "0.2", "0.3")
CASES = """
import atlas_fake_a as a, atlas_fake_b as b
try:
    import atlas_fake_c as c
    C = c.VERSION
except ImportError:
    C = "absent"


def test_clash():
    if (a.VERSION, C) == ("1.1", "0.2"):
        a.fail("a and c clash")


def test_band():
    if a.VERSION == "1.3" and b.VERSION in ("2.0", "4.0"):
        a.fail("the band")


def test_fallback():
    if a.VERSION == "1.2" and b.VERSION != "3.0":
        a.fail(f"a {a.VERSION} has no fallback for b {b.VERSION}")


def test_three():
    if (a.VERSION, b.VERSION, C) == ("1.0", "1.0", "0.1"):
        a.fail("three together")
"""
MATRIX = """
schema: 1
packages: [torch, atlas-fake-a, atlas-fake-b, atlas-fake-c]
defaults: {device: cpu, torch: null}
tiers:
  smoke:
    - {id: one, atlas-fake-a: "1.0"}
atlas:
  axes:
    atlas-fake-a: all
    atlas-fake-b: all
    atlas-fake-c: {versions: all, optional: true}
  releases: all
  cases: [test_planted.py]
  audit: 0.1
"""


def faults(cell: dict[str, str]) -> set[str]:
    """The cases that fail in a cell (the rules of CASES, for the truth)."""
    a, b, c = cell["a"], cell["b"], cell["c"]
    found = set()
    if (a, c) == ("1.1", "0.2"):
        found.add("test_clash")
    if a == "1.3" and b in ("2.0", "4.0"):
        found.add("test_band")
    if a == "1.2" and b != "3.0":
        found.add("test_fallback")
    if (a, b, c) == ("1.0", "1.0", "0.1"):
        found.add("test_three")
    return found


def truth(one: tuple[str, str], other: tuple[str, str], case: str) -> str:
    """A pair breaks a case when that case fails in every cell holding it."""
    axes = {"a": A, "b": B, "c": C}
    fixed = dict([one, other])
    rest = [k for k in axes if k not in fixed]
    cells = [{**fixed, rest[0]: v} for v in axes[rest[0]]]
    cells = [cell for cell in cells if {cell["a"], cell["c"]} != {"1.0", "0.3"}]
    return "breaks" if all(case in faults(cell) for cell in cells) else "works"


@pytest.fixture(scope="module")
def tooling(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest and pytest-xdist with their dependencies (every cell's runner), once."""
    house = tmp_path_factory.mktemp("tooling")
    subprocess.run([*PIP, "download", "-d", str(house), "pytest", "pytest-xdist"], check=True)
    return house


@pytest.fixture
def project(tmp_path: Path, tooling: Path, monkeypatch, shared_env_store: Path) -> Path:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for found in tooling.iterdir():
        (wheels / found.name).write_bytes(found.read_bytes())
    fail = "def fail(why):\n    raise RuntimeError(why)\n"
    for name, versions, needs in (
        ("atlas-fake-a", A, {"1.0": ("atlas-fake-dep<2",)}),
        ("atlas-fake-b", B, {}),
        ("atlas-fake-c", C[1:], {"0.3": ("atlas-fake-dep>=2",)}),
    ):
        module = name.replace("-", "_")
        for version in versions:
            source = f"VERSION = {version!r}\n{fail}"
            pure_wheel(
                wheels, name, version, {f"{module}/__init__.py": source}, needs.get(version, ())
            )
    for version in ("1.0", "2.0"):
        pure_wheel(wheels, "atlas-fake-dep", version, {"atlas_fake_dep/__init__.py": ""})
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_planted.py").write_text(CASES)
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    for name in ("PIP_FIND_LINKS", "UV_FIND_LINKS", "PIP_INDEX_URL", "UV_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)  # the wheelhouse alone
    monkeypatch.setenv("REPROMATRIX_ENV_DIR", str(shared_env_store))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_planted_universe_is_answered_right_through_the_wheelhouse(project: Path, capsys) -> None:
    assert app.main(["atlas", "run", "--wheelhouse", "wheels", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "1 of 48 pairs cannot be installed together" in out, "a 1.0 and c 0.3, through dep"
    folder = project / "reports" / "atlas"
    data = json.loads((folder / "atlas.json").read_text())
    assert all(c["outcome"] != "error" for c in data["cells"]), "every cell installed from DIR"
    assert all(c["resolved"] for c in data["cells"])

    assert app.main(["atlas", "query", "atlas-fake-a==1.0", "atlas-fake-c", "--json"]) == 0
    conflict = json.loads(capsys.readouterr().out)["versions"][-1]
    assert (conflict["version"], conflict["status"]) == ("0.3", "conflict")
    wrong, broken = [], set()
    for (x, xs), (y, _) in itertools.combinations((("a", A), ("b", B), ("c", C)), 2):
        for vx in xs:
            assert (
                app.main(["atlas", "query", f"atlas-fake-{x}=={vx}", f"atlas-fake-{y}", "--json"])
                == 0
            )
            for found in json.loads(capsys.readouterr().out)["versions"]:
                if found["status"] == "conflict":
                    continue
                for case in found["cases"]:
                    name = case["case"].split("::")[-1]
                    want = truth((x, vx), (y, found["version"]), name)
                    if want == "breaks":
                        broken.add((vx, found["version"], x, y))
                    if case["status"] != want:
                        wrong.append(
                            (x, vx, y, found["version"], name, case["status"], case["note"])
                        )
    assert wrong == []
    cells = data["runs"][0]["cells"]
    assert cells <= 1.3 * 16 + 3 * len(broken), (cells, len(broken))

    triple = {"atlas-fake-a": "1.0", "atlas-fake-b": "1.0", "atlas-fake-c": "0.1"}
    # as it reads once rendered: summary.md escapes what a cell wrote (github/markdown.py)
    summary = re.sub(r"\\(.)", r"\1", (folder / "summary.md").read_text())
    if any(c["pins"] == triple for c in data["cells"]):
        assert "## Three-way failures" in summary
        assert "atlas-fake-a 1.0 + atlas-fake-b 1.0 + atlas-fake-c 0.1 fail together" in summary
    assert app.main(["atlas", "recommend", "--pin", "atlas-fake-a==1.0", "--json"]) in (0, 1)
    found = json.loads(capsys.readouterr().out)
    assert found["newer"] != triple and found["set"] != triple
    assert "a 1.2 has no fallback" not in summary, "one cause, its signature masked"
    assert "RuntimeError: a <n> has no fallback for b <n>" in summary

    # Every answer stands: a second run tests nothing.
    assert app.main(["atlas", "run", "--wheelhouse", "wheels"]) == 0
    assert "atlas: 0 cells run" in capsys.readouterr().out
