"""A whole atlas run with the collaborators handed in (releases, uv, the cells), then
what the stored atlas answers: query, recommend, the page, the CSV; a new release,
and the command line's bad input."""

from __future__ import annotations

import csv
import io
import json
import re
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version
from planted import Oracle

from repromatrix.cli import app
from repromatrix.hunts.atlas import flow
from repromatrix.hunts.atlas.universe import Universe
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
    DDP breaks with trl < 0.27 and transformers < 5 together."""

    def __call__(self, planned):
        records = super().__call__(planned)
        for record in records:
            for failure in record.failures:
                failure.error = "RuntimeError: Trying to backward through the graph a second time"
                failure.link = LINK if failure.case == WHISPER else ""
        return records


def stack_oracle() -> Stack:
    universe = Universe({p: tuple(v) for p, v in RELEASES.items()})
    whisper = [frozenset({("transformers", v)}) for v in RELEASES["transformers"][1:5]]
    ddp = [
        frozenset({("transformers", t), ("trl", r)})
        for t in RELEASES["transformers"][:5]
        for r in RELEASES["trl"][:3]
    ]
    conflicts = frozenset(
        (("transformers", t), ("trl", "0.29.1")) for t in RELEASES["transformers"][:3]
    )
    return Stack(universe, {WHISPER: whisper, DDP: ddp, "test_ok.py::test_ok": []}, conflicts)


MATRIX = """
schema: 1
packages: [torch, transformers, peft, trl]
defaults: {torch: "2.13.0"}
tiers:
  smoke:
    - {id: one, transformers: "4.56.2"}
atlas:
  axes: {transformers: ">=4.52", peft: ">=0.15", trl: ">=0.22"}
  pins: {torch: "2.13.0"}
  budget: 200
  audit: 0.1
"""


def _run(options: flow.AtlasOptions, oracle: Oracle, say) -> None:
    prepared = flow.prepare(options, lister=listing, resolve=resolve, say=say)
    flow.run_prepared(prepared, run_cells=oracle, say=say)


@pytest.fixture
def atlas(tmp_path: Path) -> Path:
    """A project whose atlas ran once (the fakes above); returns its atlas folder."""
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    oracle = stack_oracle()
    out = tmp_path / "reports" / "atlas"
    options = flow.AtlasOptions(matrix=tmp_path / "matrix.yaml", out=out)
    _run(options, oracle, say=lambda _l: None)
    from repromatrix.hunts.atlas.report import render

    render(out)
    return out


def cli(*words: str, capsys) -> tuple[int, str, str]:
    code = app.main(list(words))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_run_covers_every_pair_and_localises_the_breaks(atlas: Path, capsys) -> None:
    data = json.loads((atlas / "atlas.json").read_text())
    assert data["schema"] == 1
    assert data["axes"] == RELEASES, "latest patches as listed, no pre-release"
    cells = data["cells"]
    assert all(set(c["pins"]) == set(RELEASES) and c["outcome"] for c in cells)
    assert not [c for c in cells if c["outcome"] == "conflict"], "conflicts are never run"
    lower = 7 * 5
    # A dense stack (a one-way bug over four releases, a two-way one over fifteen
    # pairs): localisation included, under 1.5x (bench_atlas.py has sparse universes).
    assert len(cells) == data["runs"][0]["cells"] <= 1.5 * lower
    assert data["runs"][0]["lower_bound"] == lower
    conflicts = [r for r in data["resolutions"] if r["conflict"]]
    assert len(conflicts) == 3 and all("No solution found" in r["conflict"] for r in conflicts)

    code, out, _ = cli("atlas", "query", "transformers==4.54.1", "trl", "--json",
                       "--out", str(atlas), capsys=capsys)  # fmt: skip
    assert code == 0
    versions = json.loads(out)["versions"]
    assert [v["version"] for v in versions] == RELEASES["trl"]
    assert versions[-1]["status"] == "conflict", "trl 0.29.1 needs transformers >= 4.55"
    broken = versions[:-1]
    assert all(v["status"] == "breaks" for v in broken), "Whisper: 4.54.1 breaks alone"
    assert {v["case"] for v in broken} == {WHISPER}
    assert all(v["link"] == LINK for v in broken), "a registered issue keeps its link"
    tested = [v for v in broken if v["evidence"] == "tested"]
    assert tested and all(v["cells"] for v in tested)

    code, out, _ = cli("atlas", "query", "trl==0.24.0", "transformers", "--json",
                       "--out", str(atlas), capsys=capsys)  # fmt: skip
    got = {v["version"]: (v["status"], v.get("case")) for v in json.loads(out)["versions"]}
    assert got["4.52.4"] == ("breaks", DDP), "the two-way bug, found as a pair"
    assert got["5.0.0"] == got["5.1.0"] == ("works", None)
    assert all(v["evidence"] in ("tested", "inferred") for v in json.loads(out)["versions"])

    code, out, _ = cli("atlas", "query", "transformers==4.52.4", "trl", "--json",
                       "--out", str(atlas), capsys=capsys)  # fmt: skip
    last = json.loads(out)["versions"][-1]
    assert (last["version"], last["status"]) == ("0.29.1", "conflict")


def test_recommend_gives_the_newest_set_that_ran_green(atlas: Path, capsys) -> None:
    code, out, _ = cli("atlas", "recommend", "--json", "--out", str(atlas), capsys=capsys)
    found = json.loads(out)
    assert code == 0
    assert found["set"]["transformers"] == "5.1.0"
    assert found["cells"] and all(c["pins"] == found["set"] for c in found["cells"])
    code, out, _ = cli("atlas", "recommend", "--pin", "transformers==4.52.4", "--json",
                       "--out", str(atlas), capsys=capsys)  # fmt: skip
    found = json.loads(out)
    assert found["set"]["transformers"] == "4.52.4" and found["set"]["trl"] == "0.27.2"
    code, out, _ = cli("atlas", "recommend", "--pin", "transformers==4.54.1",
                       "--out", str(atlas), capsys=capsys)  # fmt: skip
    assert code == 1 and "no tested set works with transformers==4.54.1" in out


def test_the_page_and_the_csv(atlas: Path) -> None:
    page = (atlas / "index.html").read_text()
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page), "self-contained"
    assert page.count('<table class="grid">') == 3, "one grid per pair of axes"
    assert page.count('class="sq ') == 7 * 4 + 7 * 5 + 4 * 5
    assert 'class="sq breaks tested"' in page and 'class="sq conflict tested"' in page
    assert 'id="recommended"' in page and LINK in page
    data = json.loads(re.search(r'id="atlas-data">(.*?)</script>', page, re.S).group(1))
    square = data["answers"]["transformers==4.54.1|trl==0.22.2"]
    assert square["status"] == "breaks" and square["link"] == LINK and square["cells"]
    assert all(data["cells"][i]["repro"].startswith("repromatrix check") or True
               for i in square["cells"])  # fmt: skip
    rows = list(csv.DictReader(io.StringIO((atlas / "answers.csv").read_text())))
    assert len(rows) == 7 * 4 + 7 * 5 + 4 * 5
    assert {r["status"] for r in rows} <= {"works", "breaks", "conflict"}
    summary = (atlas / "summary.md").read_text()
    assert "transformers 4.57.6 -> 5.0.0: breaks -> works" in summary


def test_a_new_release_costs_about_the_largest_other_axis(atlas: Path) -> None:
    before = json.loads((atlas / "atlas.json").read_text())
    RELEASES["peft"].append("0.19.1")
    try:
        oracle = stack_oracle()
        options = flow.AtlasOptions(matrix=atlas.parent.parent / "matrix.yaml", out=atlas)
        lines: list[str] = []
        _run(options, oracle, say=lines.append)
    finally:
        RELEASES["peft"].pop()
    assert oracle.ran <= 7 + 3, "about the largest other axis (transformers, 7)"
    assert any(line.startswith("covering array:") for line in lines)
    after = json.loads((atlas / "atlas.json").read_text())
    new = after["cells"][len(before["cells"]) :]
    assert new and all(c["pins"]["peft"] == "0.19.1" for c in new[:7])
    assert new[0]["reason"] == "new release peft 0.19.1"
    assert after["cells"][: len(before["cells"])] == before["cells"], "earlier cells kept"


def test_plan_prints_cells_reasons_and_coverage(atlas: Path, tmp_path: Path, capsys) -> None:
    """Offline: the releases from a wheelhouse of names; uv's answers are stored."""
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    for package, versions in RELEASES.items():
        for version in [*versions, "0.0.1"]:  # outside every axis's range
            (wheelhouse / f"{package}-{version}-py3-none-any.whl").write_bytes(b"")
    before = json.loads((atlas / "atlas.json").read_text())
    matrix = str(atlas.parent.parent / "matrix.yaml")
    words = ["atlas", "plan", "--matrix", matrix, "--out", str(atlas), "--wheelhouse"]
    code, out, err = cli(*words, str(wheelhouse), "--json", capsys=capsys)
    assert code == 0, err
    planned = json.loads(out)
    assert planned["cells"] == [], "every pair is answered: nothing to test tonight"
    assert planned["coverage"]["answered"] == planned["coverage"]["pairs"] == 83
    assert planned["coverage"]["lower_bound"] == 7 * 5
    assert json.loads((atlas / "atlas.json").read_text())["cells"] == before["cells"]
    code, out, _ = cli(*words, str(wheelhouse), capsys=capsys)
    assert re.search(r"^coverage: 83 of 83 pairs answered .* lower bound 35 cells", out, re.M)


def test_plan_says_why_each_cell_is_planned(atlas: Path) -> None:
    RELEASES["peft"].append("0.19.1")
    try:
        options = flow.AtlasOptions(matrix=atlas.parent.parent / "matrix.yaml", out=atlas)
        prepared = flow.prepare(options, lister=listing, resolve=resolve, say=lambda _l: None)
        planned, reached = flow.plan(prepared)
    finally:
        RELEASES["peft"].pop()
    assert planned and all(why == "new release peft 0.19.1" for _, why in planned[:7])
    assert reached["pairs"] == 83 + 7 + 5 and reached["lower_bound"] == 35


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
def test_bad_input_is_one_line_and_exit_2(atlas: Path, capsys, words, message) -> None:
    code, out, err = cli("atlas", *words, "--out", str(atlas), capsys=capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_no_atlas_yet_is_one_line(tmp_path: Path, capsys) -> None:
    code, _, err = cli("atlas", "query", "a==1", "b", "--out", str(tmp_path), capsys=capsys)
    assert code == 2 and "no atlas yet (repromatrix atlas run)" in err
