"""``atlas fold``: a nightly's cells taken back into the atlas, each only from its
own job's artifact, with its planned pins and the plan's digest. Hostile artifacts
(what code under test could write in a cell job): a foreign cell, a relabelled cell,
a javascript: link, a spreadsheet formula, NaN, a bad version, a huge message, a
file that is no JSON. None changes another cell's answer or scripts the page."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

from repromatrix.cli import app
from repromatrix.hunts.atlas import run as atlas
from repromatrix.hunts.atlas.commands import keep_plan
from repromatrix.hunts.atlas.view import load_view
from repromatrix.hunts.hunt import Voice
from repromatrix.probe.candidates import Listing, Release

RELEASES = {"atlas-a": ["1.0", "1.1"], "atlas-b": ["1.0", "2.0"]}
CASE = "test_pair.py::test_a_and_b_get_along"
MATRIX = """
schema: 1
packages: [torch, atlas-a, atlas-b]
defaults: {device: cpu, torch: null}
tiers:
  smoke:
    - {id: one, atlas-a: "1.0"}
atlas:
  axes: {atlas-a: all, atlas-b: all}
  releases: all
  cases: [test_pair.py]
"""


def listing(package: str, _index) -> Listing:
    return Listing(
        package, {Version(v): Release(Version(v), files=1) for v in RELEASES[package]}, []
    )


@pytest.fixture
def night(tmp_path: Path) -> Path:
    """A planned night: atlas.json with its plan, the tier file; four cells planned."""
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_pair.py").write_text("def test_a_and_b_get_along():\n    pass\n")
    options = atlas.AtlasOptions.read(tmp_path / "matrix.yaml", out=tmp_path / "atlas")
    checked = atlas.plan(options, Voice(say=lambda _l: None), lister=listing, resolve=lambda _r: "")
    planned = atlas.tonight(checked).planned
    assert len(planned) == 4
    keep_plan(checked, planned, tmp_path / "tonight.yaml")
    return tmp_path


def plan_of(root: Path) -> tuple[str, list[dict]]:
    data = json.loads((root / "atlas" / "atlas.json").read_text())
    return data["plan"]["digest"], data["plan"]["cells"]


def combination(cell: dict, *, status="passed", message="", link="", **more) -> dict:
    failed = status == "failed"
    case = {"id": CASE, "status": status, "outcome": status, "message": message,
            "attempts": [status] * (3 if failed else 1)}  # fmt: skip
    if link:
        case["known_issue"] = {"link": link}
    return {"id": cell["id"], "tier": "atlas", "requested": {"torch": "null", **cell["pins"]},
            "status": status, "cases": [case], "seconds": 1.5, **more}  # fmt: skip


def artifact(root: Path, name: str, combos: list[dict], *, digest: str, raw: str | None = None):
    folder = root / "artifacts" / f"combination-{name}"
    folder.mkdir(parents=True)
    document = {"schema": 1, "run": {"matrix_sha256": digest}, "combinations": combos}
    (folder / "results.json").write_text(raw if raw is not None else json.dumps(document))


def fold(root: Path, capsys) -> tuple[int, str]:
    code = app.main(["atlas", "fold", "--matrix", str(root / "matrix.yaml"), "--out",
                     str(root / "atlas"), "--plan", str(root / "tonight.yaml"),
                     "--artifacts", str(root / "artifacts")])  # fmt: skip
    return code, capsys.readouterr().out


def answers(root: Path) -> dict:
    view = load_view(root / "atlas")
    return {pair: (a.status, a.evidence) for pair, a in view.answers.items()}


def test_honest_artifacts_fold_in(night: Path, capsys) -> None:
    digest, cells = plan_of(night)
    for cell in cells:
        clash = cell["pins"] == {"atlas-a": "1.1", "atlas-b": "2.0"}
        combo = combination(cell, status="failed" if clash else "passed", message="a and b clash")
        artifact(night, cell["id"], [combo], digest=digest)
    code, out = fold(night, capsys)
    assert code == 0, out
    assert "atlas: 4 cells folded in" in out
    found = answers(night)
    assert found[(("atlas-a", "1.1"), ("atlas-b", "2.0"))] == ("breaks", "tested")
    assert sum(1 for s, _ in found.values() if s == "works") == 3
    data = json.loads((night / "atlas" / "atlas.json").read_text())
    assert data["plan"] is None and all(c["plan"] == digest for c in data["cells"])
    code, out = fold(night, capsys)
    assert code == 2, "folded once: a second fold finds no plan"


def test_hostile_artifacts_change_no_other_answer_and_script_nothing(night: Path, capsys) -> None:
    digest, cells = plan_of(night)
    by_pins = {(c["pins"]["atlas-a"], c["pins"]["atlas-b"]): c for c in cells}
    honest = by_pins[("1.0", "1.0")]
    linked = by_pins[("1.0", "2.0")]
    relabelled = by_pins[("1.1", "1.0")]
    lost = by_pins[("1.1", "2.0")]
    # the honest cell, and one whose failure carries a javascript: link and a formula
    artifact(night, honest["id"], [combination(honest)], digest=digest)
    artifact(night, linked["id"], [
        combination(linked, status="failed", message='=HYPERLINK("https://evil.example","x")',
                    link="javascript:alert(document.cookie)"),
        # a foreign cell: an answer for the lost cell, from an artifact not its own
        combination(lost),
    ], digest=digest)  # fmt: skip
    # a relabelled cell: it ran other pins than planned (a bad version among them)
    fake = {**relabelled, "pins": {"atlas-a": "1.1; rm -rf /", "atlas-b": "1.0"}}
    artifact(night, relabelled["id"], [combination(fake)], digest=digest)
    code, out = fold(night, capsys)
    assert code == 0, out
    assert re.search(r"combination-\S+ holds 'atlas-00\d' too, not its cell: refused", out)
    assert f"{relabelled['id']}: " in out and "claims pins it was not planned with" in out
    assert f"{lost['id']}: no results in combination-{lost['id']}: LOST" in out
    data = json.loads((night / "atlas" / "atlas.json").read_text())
    assert sorted(c["pins"]["atlas-b"] + c["pins"]["atlas-a"] for c in data["cells"]) == [
        "1.01.0", "2.01.0"]  # fmt: skip
    found = answers(night)
    # the foreign record said it passed: the lost cell is no answer (at most the rule's)
    assert found[(("atlas-a", "1.1"), ("atlas-b", "2.0"))][1] != "tested", "still LOST"
    assert found[(("atlas-a", "1.0"), ("atlas-b", "1.0"))] == ("works", "tested")
    page = (night / "atlas" / "index.html").read_text()
    assert "javascript:" not in page and "evil.example" not in page.split("atlas-data")[0]
    rows = list(csv.reader(io.StringIO((night / "atlas" / "answers.csv").read_text())))
    assert not [v for row in rows for v in row if v.startswith(("=", "+", "-", "@"))]
    assert any(v.startswith("'=HYPERLINK") for row in rows for v in row)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"schema": 1, "run": {"matrix_sha256": "D"}, "combinations": [C_NAN]}', "refused"),
        ("not json at all", "refused"),
        (
            '{"schema": 1, "run": {"matrix_sha256": "other"}, "combinations": [C]}',
            "ran another plan",
        ),
    ],
)
def test_one_bad_record_refuses_that_cell_not_the_night(night: Path, capsys, raw, why) -> None:
    digest, cells = plan_of(night)
    bad, rest = cells[0], cells[1:]
    for cell in rest:
        artifact(night, cell["id"], [combination(cell)], digest=digest)
    text = json.dumps(combination(bad))
    raw = raw.replace("C_NAN", text.replace('"seconds": 1.5', '"seconds": NaN'))
    artifact(
        night,
        bad["id"],
        [],
        digest=digest,
        raw=raw.replace('"D"', f'"{digest}"').replace("[C]", f"[{text}]"),
    )
    code, out = fold(night, capsys)
    assert code == 0, out
    assert f"{bad['id']}: " in out and why in out and "LOST" in out
    assert "atlas: 3 cells folded in; 1 lost" in out
    data = json.loads((night / "atlas" / "atlas.json").read_text())
    assert len(data["cells"]) == 3
    json.loads((night / "atlas" / "atlas.json").read_text(), parse_constant=pytest.fail)


def test_a_plan_file_that_is_not_the_recorded_one_is_one_line(night: Path, capsys) -> None:
    (night / "tonight.yaml").write_text((night / "tonight.yaml").read_text() + "\n# edited\n")
    (night / "artifacts").mkdir()
    code = app.main(["atlas", "fold", "--matrix", str(night / "matrix.yaml"), "--out",
                     str(night / "atlas"), "--plan", str(night / "tonight.yaml"),
                     "--artifacts", str(night / "artifacts")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "not the plan atlas.json recorded" in err
    assert hashlib.sha256((night / "tonight.yaml").read_bytes()).hexdigest()[:12] in err
