"""What the atlas reads that others wrote stays data: planning never runs a package's
build backend (uv pip compile --no-build: an sdist's setup.py would run code of the
package at plan time, before the plan's digest is taken), and the page stays bounded
and inert for any state."""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support.wheels import version_wheel

from repromatrix.environment import IndexSettings
from repromatrix.hunts.atlas.conflicts import uv_resolver
from repromatrix.hunts.atlas.page import MAX_SQUARES, render_html
from repromatrix.hunts.atlas.report import render_summary
from repromatrix.hunts.atlas.state import AtlasState, CaseRecord, CellRecord, write_state
from repromatrix.hunts.atlas.view import load_view


def sdist(folder: Path, name: str, version: str, marker: Path) -> None:
    """An sdist whose own build backend (in the sdist, needing nothing installed)
    writes ``marker`` as soon as a frontend imports it."""
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n',
        "backend.py": f"open({str(marker)!r}, 'w').write('ran')\n",
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (folder / f"{name}-{version}.tar.gz").write_bytes(buffer.getvalue())


@pytest.mark.e2e
def test_planning_never_runs_a_build_backend(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    version_wheel(wheels, "atlas-fake-a", "1.0")
    version_wheel(wheels, "atlas-fake-b", "1.0", ("atlas-fake-evil",))
    marker = tmp_path / "the-backend-ran"
    sdist(wheels, "atlas_fake_evil", "1.0", marker)
    resolve = uv_resolver(IndexSettings.wheelhouse(wheels))
    assert resolve(["atlas-fake-a==1.0"]) == ""
    assert resolve(["atlas-fake-a==1.0", "atlas-fake-b==1.0"]) == "", "the cell decides"
    assert not marker.exists(), "no setup.py ran while planning"


def test_the_page_is_bounded_and_inert_for_any_state(tmp_path: Path) -> None:
    axes = {"a": [f"1.{i}" for i in range(150)], "b": [f"2.{i}" for i in range(150)],
            "c": ["1", "2"]}  # fmt: skip
    evil = "</script><script>alert(1)</script>"
    cells = [
        CellRecord({"a": a, "b": "2.0", "c": "1"}, "breaks",
                   {evil: CaseRecord("failed", runs=3, signature="s", cause=evil, error=evil,
                                     link="javascript:alert(1)")})
        for a in axes["a"][:3]
    ]  # fmt: skip
    write_state(tmp_path, AtlasState(axes=axes, cells=cells, cases=[evil]))
    page = render_html(load_view(tmp_path))
    assert page.count('class="sq ') <= MAX_SQUARES
    assert "answers.csv holds them" in page, "the grids left out say so"
    assert "javascript:" not in page
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts == ['<script type="application/json" id="atlas-data">', "<script>"]
    data = re.search(r'id="atlas-data">(.*?)</script>', page, re.S).group(1)
    assert "</script" not in data and json.loads(data)["answers"]


def test_the_summary_a_nightly_posts_is_inert(tmp_path: Path) -> None:
    """summary.md goes to the step summary: a cause, an error or a case id a cell wrote
    opens no link, image, HTML or heading there and mentions nobody (read back with
    markdown-it-py, as CommonMark reads it)."""
    evil = (
        "@maintainer see [here](https://evil.example) ![x](https://evil.example/i.png)"
        " <b>x</b>\n# head"
    )
    axes = {"a": ["1.0", "1.1", "1.2"], "b": ["2.0", "2.1"]}
    cells = [
        CellRecord({"a": a, "b": b}, "breaks" if a == "1.1" else "works",
                   {"t.py::t": CaseRecord("failed", runs=1, signature="s", cause=evil, error=evil)
                               if a == "1.1" else CaseRecord("passed", runs=1, passed=1)},
                   repro=f"repromatrix check --pin a=={a} --pin b=={b}")
        for a in axes["a"] for b in axes["b"]
    ]  # fmt: skip
    write_state(tmp_path, AtlasState(axes=axes, cells=cells, cases=["t.py::t"]))
    summary = render_summary(load_view(tmp_path))
    assert "evil.example" in summary, "the cause is shown"
    tokens = MarkdownIt("commonmark").parse(summary)
    inline = [t for block in tokens for t in (block.children or [])]
    opened = {t.type for t in inline} | {t.type for t in tokens}
    assert not opened & {"link_open", "image", "html_inline", "html_block"}, opened
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert set(headings) <= {
        "Compatibility atlas",
        "Releases that fail on their own",
        "Breaks by cause",
        "Three-way failures",
        "Where answers change",
    }
    assert "@maintainer" not in summary.replace("\\", ""), "the mention is broken"
