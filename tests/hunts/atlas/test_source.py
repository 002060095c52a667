"""A folder pin held by the atlas (``mylib: "."``): its cells are keyed on the tree's
digest, so an edit re-plans them, and query no longer counts their answers (it says
they are about an old tree) until they are tested again; every answer names its tree."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from planted import STACK, Oracle
from test_run import RELEASES, cli, listing

from repromatrix.hunts.atlas import run as atlas
from repromatrix.hunts.atlas.universe import Universe
from repromatrix.hunts.hunt import Voice

MATRIX = STACK.replace("peft, trl]", "peft, trl, mylib]") + textwrap.dedent("""
    atlas:
      axes: {transformers: ">=4.52", peft: ">=0.15"}
      pins: {torch: "2.13.0", mylib: "."}
      budget: 300
    """)


def resolve(_requirements: list[str]) -> str:
    return ""  # every pair installs together


SOURCE = re.compile(r"mylib \. no commit, (sha256:[0-9a-f]{12})")


def _project(tmp_path: Path) -> tuple[Path, Oracle]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nversion = "0.1"\n')
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("VALUE = 1\n")
    (tmp_path / "matrix.yaml").write_text(MATRIX)
    axes = {p: tuple(RELEASES[p]) for p in ("transformers", "peft")}
    return tmp_path / "reports" / "atlas", Oracle(Universe(axes), {"test_ok.py::test_ok": []})


def _options(out: Path) -> atlas.AtlasOptions:
    return atlas.AtlasOptions.read(out.parent.parent / "matrix.yaml", out=out)


def _run(out: Path, oracle: Oracle) -> None:
    voice = Voice(say=lambda _line: None)
    atlas.run(atlas.plan(_options(out), voice, lister=listing, resolve=resolve), oracle, voice)


def _query(out: Path, capsys) -> tuple[str, dict]:
    words = ["atlas", "query", "transformers==4.54.1", "peft", "--out", str(out)]
    code, text, err = cli(*words, capsys=capsys)
    assert code == 0, err
    code, shown, err = cli(*words, "--json", capsys=capsys)
    assert code == 0, err
    return text, json.loads(shown)


def test_an_edit_replans_the_cells_of_the_old_tree(tmp_path: Path, capsys) -> None:
    out, oracle = _project(tmp_path)
    _run(out, oracle)
    data = json.loads((out / "atlas.json").read_text())
    held = data["held"]["mylib"]
    assert held.startswith(". [source no commit, sha256:") and data["held"]["torch"] == "2.13.0"
    assert all(c["held"] == data["held"] for c in data["cells"])
    text, found = _query(out, capsys)
    old = SOURCE.search(text)
    assert old and f"about your source: mylib . no commit, {old[1]}" in text, text
    assert {v["status"] for v in found["versions"]} == {"works"} and "old_trees" not in found
    # The repro a cell prints takes the pin's own text, not the source it names.
    code, shown, _ = cli("atlas", "recommend", "--out", str(out), capsys=capsys)
    assert code == 0 and "--pin mylib=." in shown and f"mylib . no commit, {old[1]}" in shown

    voice = Voice(say=lambda _line: None)
    unchanged = atlas.tonight(atlas.plan(_options(out), voice, lister=listing, resolve=resolve))
    assert unchanged.planned == [], "the same tree: every answer stands"

    (tmp_path / "mylib" / "__init__.py").write_text("VALUE = 2\n")  # the user's edit
    checked = atlas.plan(_options(out), voice, lister=listing, resolve=resolve)
    replanned = atlas.tonight(checked).planned
    assert replanned and any(p.why.startswith("stale answer") for p in replanned), replanned
    assert checked.standing() == [] and len(checked.stale()) == len(data["cells"])
    from repromatrix.hunts.atlas.commands import keep_plan

    keep_plan(checked, replanned, None)  # what `atlas plan` writes: the new tree's held pins
    text, found = _query(out, capsys)
    new = SOURCE.search(text)
    assert new and new[1] != old[1], text
    assert "works (tested)" not in text and {v["status"] for v in found["versions"]} == {"untested"}
    line = f"{len(data['cells'])} cells tested on an old tree of mylib (no commit, {old[1]})"
    assert line in text and "the next atlas run re-tests them" in text, text
    assert found["old_trees"] and found["sources"] == [f"mylib . no commit, {new[1]}"]

    _run(out, oracle)  # tested again on the new tree
    text, found = _query(out, capsys)
    assert {v["status"] for v in found["versions"]} == {"works"} and "works (tested)" in text
    assert f"mylib . no commit, {new[1]}" in text and "old_trees" in found  # kept, not counted


def test_a_held_folder_that_is_no_project_is_bad_input(tmp_path: Path, capsys) -> None:
    out, _ = _project(tmp_path)
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(matrix.read_text().replace('mylib: "."', 'mylib: "./nope"'))
    code, _, err = cli("atlas", "plan", "--matrix", str(matrix), "--out", str(out), capsys=capsys)
    assert code == 2 and "matrix.yaml: atlas.pins.mylib: " in err and "relative to" in err, err
