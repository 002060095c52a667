"""A whole atlas run with the collaborators handed in (releases, uv, the cells), then
what the stored atlas answers: query (text and JSON), recommend, the page, the CSV,
summary.md; a new release; the one planning step `atlas plan` shares; bad input."""

from __future__ import annotations

import csv
import io
import json
import re
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version
from planted import STACK, Oracle

from repromatrix.cli import app
from repromatrix.hunts.atlas import run as atlas
from repromatrix.hunts.atlas.universe import ABSENT, Universe
from repromatrix.hunts.hunt import Voice
from repromatrix.probe.candidates import Listing, Release

RELEASES = {
    "transformers": ["4.52.4", "4.53.3", "4.54.1", "4.55.4", "4.57.6", "5.0.0", "5.1.0"],
    "peft": ["0.15.2", "0.16.0", "0.17.1", "0.18.1"],
    "trl": ["0.22.2", "0.24.0", "0.26.2", "0.27.2", "0.29.1"],
}
WHISPER = "test_whisper.py::test_full_finetune[reentrant]"
DDP = "test_trl.py::test_ddp[defaults]"
LINK = "https://github.com/unslothai/unsloth/issues/2972"


def listing(package: str, _index) -> Listing:
    versions = [*RELEASES[package], "9.9.9rc1"]  # a pre-release is never an axis's
    return Listing(package, {Version(v): Release(Version(v), files=1) for v in versions}, [])


def resolve(requirements: list[str]) -> str:
    """trl 0.29.1 requires transformers >= 4.55 (a conflict below)."""
    pins = dict(r.split("==") for r in requirements)
    if pins.get("trl") == "0.29.1" and Version(pins.get("transformers", "9")) < Version("4.55"):
        return "error: No solution found: trl==0.29.1 depends on transformers>=4.55.0"
    return ""


class Stack(Oracle):
    """Whisper breaks on transformers 4.53-4.57 alone (registered, with its link); TRL
    DDP breaks with trl < 0.27 and transformers < 5 together, and skips without trl."""

    def __call__(self, planned):
        records = super().__call__(planned)
        for record in records:
            for case, found in record.cases.items():
                if found.status == "failed":
                    found.error = "RuntimeError: Trying to backward through the graph a second time"
                    found.link = LINK if case == WHISPER else "javascript:alert(1)"
            if record.pins.get("trl") == ABSENT and DDP in record.cases:
                record.cases[DDP].status, record.cases[DDP].passed = "skipped", 0
        return records


def stack_oracle() -> Stack:
    axes = {**RELEASES, "trl": [ABSENT, *RELEASES["trl"]]}
    universe = Universe({p: tuple(v) for p, v in axes.items()})
    whisper = [frozenset({("transformers", v)}) for v in RELEASES["transformers"][1:5]]
    ddp = [
        frozenset({("transformers", t), ("trl", r)})
        for t in RELEASES["transformers"][:5]
        for r in RELEASES["trl"][:3]
    ]
    conflicts = frozenset(
        (("transformers", t), ("trl", "0.29.1")) for t in RELEASES["transformers"][:3]
    )
    signatures = {**{f: "ddp" for f in ddp}, **{f: "whisper" for f in whisper}}
    return Stack(universe, {WHISPER: whisper, DDP: ddp, "test_ok.py::test_ok": []}, conflicts,
                 signatures=signatures)  # fmt: skip


MATRIX = (
    STACK
    + """
atlas:
  axes: {transformers: ">=4.52", peft: ">=0.15", trl: {versions: ">=0.22", optional: true}}
  pins: {torch: "2.13.0"}
  budget: 300
  audit: 0.1
"""
)
PAIRS = 7 * 4 + 7 * 6 + 4 * 6


def _run(options: atlas.AtlasOptions, oracle: Oracle, say) -> atlas.Outcome:
    voice = Voice(say=say)
    checked = atlas.plan(options, voice, lister=listing, resolve=resolve)
    outcome = atlas.run(checked, oracle, voice)[0]
    atlas.publish(checked, voice)
    return outcome


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Stack]:
    """A project whose atlas ran once (the fakes above); its atlas folder."""
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    oracle = stack_oracle()
    out = tmp_path / "reports" / "atlas"
    _run(atlas.AtlasOptions.read(tmp_path / "matrix.yaml", out=out), oracle, say=lambda _l: None)
    return out, oracle


@pytest.fixture
def folder(project) -> Path:
    return project[0]


def cli(*words: str, capsys) -> tuple[int, str, str]:
    code = app.main(list(words))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_pair_is_answered_as_planted_near_the_bound(project) -> None:
    folder, oracle = project
    data = json.loads((folder / "atlas.json").read_text())
    assert data["schema"] == 2 and data["optional"] == ["trl"]
    assert data["axes"]["trl"][0] == ABSENT and data["axes"]["peft"] == RELEASES["peft"]
    cells = data["cells"]
    assert not [c for c in cells if c["outcome"] == "conflict"], "conflicts are never run"
    broken = sum(1 for p in oracle.universe.pairs() if oracle.truth(p) == "breaks")
    assert len(cells) == data["runs"][0]["cells"] <= 1.3 * 7 * 6 + 3 * broken
    from repromatrix.hunts.atlas.view import load_view

    view = load_view(folder)
    wrong = [
        (pair, c.case, c.status)
        for pair, answer in view.answers.items()
        if answer.status != "conflict"
        for c in answer.cases
        if c.status not in (oracle.truth(pair, c.case), "skipped")
    ]
    assert wrong == []


def test_query_says_the_rule_the_cause_and_each_case(folder: Path, capsys) -> None:
    code, out, _ = cli("atlas", "query", "transformers==4.54.1", "trl", "--json",
                       "--out", str(folder), capsys=capsys)  # fmt: skip
    assert code == 0
    versions = json.loads(out)["versions"]
    assert [v["version"] for v in versions] == [ABSENT, *RELEASES["trl"]]
    assert versions[-1]["status"] == "conflict", "trl 0.29.1 needs transformers >= 4.55"
    for v in versions[:-1]:
        assert v["status"] == "breaks" and v["case"] == WHISPER, v
        assert v["note"].startswith("transformers 4.54.1 fails with every partner tried")
        assert v["link"] == LINK and v["alone"] == "transformers 4.54.1"
        assert v["repro"].startswith("repromatrix check --case")
    absent = versions[0]
    assert {c["case"]: c["status"] for c in absent["cases"]}[DDP] == "skipped"
    code, text, _ = cli("atlas", "query", "transformers==4.54.1", "trl",
                        "--out", str(folder), capsys=capsys)  # fmt: skip
    assert "transformers 4.54.1 fails with every partner tried" in text
    assert f"{WHISPER}: whisper" in text and f"registered: {LINK}" in text

    code, out, _ = cli("atlas", "query", "trl==0.24.0", "transformers", "--json",
                       "--out", str(folder), capsys=capsys)  # fmt: skip
    got = {v["version"]: v for v in json.loads(out)["versions"]}
    first = got["4.52.4"]
    assert (first["status"], first["case"], first["evidence"]) == ("breaks", DDP, "tested")
    assert first["link"] is None, "a javascript: link is no link"
    per_case = {c["case"]: c["status"] for c in first["cases"]}
    assert per_case == {DDP: "breaks", WHISPER: "works", "test_ok.py::test_ok": "works"}
    assert got["5.0.0"]["status"] == "works" and got["5.0.0"]["passed"] == got["5.0.0"]["runs"]


def test_recommend_gives_the_newest_set_that_ran_green(folder: Path, capsys) -> None:
    code, out, _ = cli("atlas", "recommend", "--json", "--out", str(folder), capsys=capsys)
    found = json.loads(out)
    assert code == 0 and found["set"]["transformers"] == "5.1.0"
    assert found["cells"] and all(c["pins"] == found["set"] for c in found["cells"])
    code, out, _ = cli("atlas", "recommend", "--pin", "transformers==4.54.1",
                       "--out", str(folder), capsys=capsys)  # fmt: skip
    assert code == 1 and "no tested set works with transformers==4.54.1" in out


def test_the_page_the_csv_and_the_summary(folder: Path) -> None:
    page = (folder / "index.html").read_text()
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page), "self-contained"
    assert "javascript:" not in page
    assert page.count('<table class="grid">') == 3, "one grid per pair of axes"
    assert page.count('class="sq ') == PAIRS
    assert page.count('class="alone"') == 4 * 2, "4 releases, marked on both grids they head"
    data = json.loads(re.search(r'id="atlas-data">(.*?)</script>', page, re.S).group(1))
    square = data["answers"]["transformers==4.54.1|trl==0.22.2"]
    assert square["status"] == "breaks" and square["cases"][0]["link"] == LINK
    assert "Breaks by cause" in page and "Releases that fail on their own" in page
    rows = list(csv.DictReader(io.StringIO((folder / "answers.csv").read_text())))
    assert len(rows) == (PAIRS - 3) * 3 + 3, "a row per pair and case; a conflict's one row"
    assert {r["status"] for r in rows} <= {"works", "breaks", "conflict", "skipped"}
    broken = [r["signature"] for r in rows if r["status"] == "breaks"]
    assert [r["status"] for r in rows[: len(broken)]] == ["breaks"] * len(broken), "breaks first"
    assert broken == sorted(broken, key=broken.index), "grouped by cause"
    assert len(set(broken)) == 2 and all(r["cause"] for r in rows[: len(broken)])
    summary = (folder / "summary.md").read_text()
    assert re.search(r"^- breaks: \d+ breaks, 2 causes$", summary, re.M), summary
    assert "## Releases that fail on their own" in summary
    assert f"- transformers 4.54.1: `{WHISPER}`" in summary
    assert re.search(r"^- cell time: \d+ min over \d+ cells \(1 finished run\)$", summary, re.M)


def test_a_new_release_costs_about_the_largest_other_axis(folder: Path) -> None:
    before = json.loads((folder / "atlas.json").read_text())
    RELEASES["peft"].append("0.19.1")
    try:
        oracle = stack_oracle()
        options = atlas.AtlasOptions.read(folder.parent.parent / "matrix.yaml", out=folder)
        lines: list[str] = []
        _run(options, oracle, say=lines.append)
    finally:
        RELEASES["peft"].pop()
    assert oracle.ran <= 7 + 6 + 3, "about the largest other axes"
    after = json.loads((folder / "atlas.json").read_text())
    new = after["cells"][len(before["cells"]) :]
    assert new and new[0]["reason"] == "new release peft 0.19.1"
    assert after["cells"][: len(before["cells"])] == before["cells"], "earlier cells kept"


def test_plan_is_the_same_planning_step(folder: Path, tmp_path: Path, capsys) -> None:
    """Offline: the releases from a wheelhouse of names; uv's answers are stored; with
    every pair answered nothing is planned, and the budget and audit are the block's."""
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    for package, versions in RELEASES.items():
        for version in [*versions, "0.0.1"]:  # outside every axis's range
            (wheelhouse / f"{package}-{version}-py3-none-any.whl").write_bytes(b"")
    before = json.loads((folder / "atlas.json").read_text())
    matrix = str(folder.parent.parent / "matrix.yaml")
    words = ["atlas", "plan", "--matrix", matrix, "--out", str(folder), "--wheelhouse"]
    code, out, err = cli(*words, str(wheelhouse), "--json", capsys=capsys)
    assert code == 0, err
    planned = json.loads(out)
    assert planned["cells"] == [], "every pair is answered: nothing to test tonight"
    assert planned["coverage"]["answered"] == planned["coverage"]["pairs"] == PAIRS
    assert json.loads((folder / "atlas.json").read_text())["cells"] == before["cells"]
    code, out, _ = cli(*words, str(wheelhouse), capsys=capsys)
    assert re.search(r"budget 300, of it 30 for the audit\); lower bound 42 cells", out), out


def test_plan_says_why_each_cell_is_planned(folder: Path) -> None:
    RELEASES["peft"].append("0.19.1")
    try:
        options = atlas.AtlasOptions.read(folder.parent.parent / "matrix.yaml", out=folder)
        checked = atlas.plan(options, Voice(say=lambda _l: None), lister=listing, resolve=resolve)
        planned = atlas.tonight(checked).planned
    finally:
        RELEASES["peft"].pop()
    assert planned and all(p.why == "new release peft 0.19.1" for p in planned[:6])


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["query", "transformers", "trl"], "'transformers': give PKG==VER"),
        (["query", "transformers==9.0", "trl"], "transformers 9.0 is not in the atlas"),
        (["query", "accelerate==1.0", "trl"], "accelerate is not an axis of the atlas"),
        (["query", "transformers==4.52.4", "torch"], "'torch': not an axis of the atlas"),
        (["query", "transformers==4.52.4", "transformers"], "give another axis"),
        (["recommend", "--pin", "peft>=0.15"], "give --pin PKG==VER"),
        (["query", "transformers==4.52.4"], "the following arguments are required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(folder: Path, capsys, words, message) -> None:
    code, out, err = cli("atlas", *words, "--out", str(folder), capsys=capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_no_atlas_yet_is_one_line(tmp_path: Path, capsys) -> None:
    code, _, err = cli("atlas", "query", "a==1", "b", "--out", str(tmp_path), capsys=capsys)
    assert code == 2 and "no atlas yet (repromatrix atlas run)" in err


def test_took_and_plan_take_matrix_yaml_as_read(folder: Path) -> None:
    """One reading of the file for the whole run: what the first line says it took
    and what the plan checks cannot come from two versions of it."""
    written = folder.parent.parent / "matrix.yaml"
    options = atlas.AtlasOptions.read(written, out=folder)
    written.unlink()
    assert atlas.ATLAS.took(options) == ""  # this matrix has no defaults: nothing taken
    checked = atlas.plan(options, Voice(say=lambda _l: None), lister=listing, resolve=resolve)
    assert checked.matrix is options.matrix and checked.settings is options.matrix.atlas
