"""index.html as a person sees it: real headless Chromium renders it, a screenshot
shows the grid in its status colours, and the page's script ran without error."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.pngread import colour_counts, hex_rgb, read_png
from support.reportdata import CASE_A, CASE_B, case, combination, demo_results, results, versions

from repromatrix.outcomes import STATUSES
from repromatrix.reports import Reporting
from repromatrix.verdicts.knownissues import parse_registry

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1200, 900
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


@pytest.fixture(scope="module")
def chromium() -> str:
    found = next(
        (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
    )
    if found is None:
        message = "Chromium is not installed (Debian: apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must run the browser test")
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    registry = parse_registry(
        [
            {
                "case": "test_double_backward.py::*",
                "when": {"transformers": ">=4.56"},
                "link": "https://github.com/huggingface/transformers/issues/40000",
            }
        ],
        "known_issues.yaml",
    )
    Reporting(registry=registry).render(demo_results(), out, say=lambda _: None)
    return out / "index.html"


def _chromium(binary: str, profile: Path, *args: str) -> str:
    done = subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_screenshot_shows_the_grid_in_status_colours(chromium, page, tmp_path):
    shot = tmp_path / "grid.png"
    _chromium(
        chromium,
        tmp_path / "profile",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={shot}",
        page.as_uri() + "#all",  # the full grid (the page opens on the problems)
    )
    width, height, rows = read_png(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    counts = colour_counts(rows)
    total = width * height
    assert counts[(255, 255, 255)] < 0.9 * total, "the page is (almost) blank"
    assert len(counts) > 50, "nothing but a few flat colours: no text, no grid"
    # Each status in the demo fills whole cells with its colour (a cell is ~30x20 px).
    for status, minimum in [("passed", 1500), ("regressed", 600), ("known-broken", 300)]:
        colour = hex_rgb(STATUSES[status].colour)
        assert counts[colour] >= minimum, f"{status} cells not coloured: {counts[colour]} px"


def test_script_ran_and_built_the_grid(chromium, page, tmp_path):
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri() + "#all")
    assert 'data-ready="1"' in dom, "the page's script did not finish"
    assert len(re.findall(r"<tr data-r=", dom)) == 6
    assert len(re.findall(r'<td class="c s-', dom)) == 12
    assert "6 of 6 combinations shown" in dom


def test_a_cell_link_opens_its_details_with_the_bisect_command(chromium, page, tmp_path):
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri() + "#1:0")
    panel = dom[dom.index('<aside id="detail"') :]
    assert not panel.startswith('<aside id="detail" hidden')
    assert "REGRESSED (failed)" in panel
    assert "nox -s bisect -- --package transformers --good 4.52.4 --bad 4.53.0" in panel
    assert 'class="neighbour"' in dom  # the passing neighbour's row is pointed out


def _row_order(dom: str) -> list[tuple[str, bool]]:
    """(combination id, hidden?) of the grid's rows, in page order."""
    return [
        (name, "hidden" in classes)
        for classes, name in re.findall(
            r'<tr data-r="\d+" data-verdict="[^"]*"(?: data-problem="")?(?: class="([^"]*)")?>'
            r'<th class="cid"[^>]*>([^<]+)</th>',
            dom,
        )
    ]


def test_filters_and_sort_from_the_link_work(chromium, page, tmp_path):
    dom = _chromium(
        chromium, tmp_path / "profile", "--dump-dom", page.as_uri() + "#transformers=4.53.0"
    )
    assert "1 of 6 combinations shown" in dom
    assert [name for name, hidden in _row_order(dom) if not hidden] == ["tf4.53.0"]

    dom = _chromium(chromium, tmp_path / "p2", "--dump-dom", page.as_uri() + "#verdict=REGRESSED")
    assert [n for n, hidden in _row_order(dom) if not hidden] == ["tf4.53.0", "tf4.56.2"]

    dom = _chromium(chromium, tmp_path / "p3", "--dump-dom", page.as_uri() + "#sort=peft")
    order = [name for name, _ in _row_order(dom)]
    assert order.index("flaky") < order.index("tf4.52.4")  # peft 0.15.2 sorts first
    assert 'class="pkg sorted"' in dom


def test_the_page_opens_on_what_needs_attention_one_click_from_the_full_grid(
    chromium, page, tmp_path
):
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert 'data-ready="1"' in dom
    # Problems first: the regressions, then the install error, then the flaky pass; the
    # passing and the skipped combinations are one click away.
    assert [name for name, hidden in _row_order(dom) if not hidden] == [
        "tf4.53.0",
        "tf4.56.2",
        "tf-main",
        "flaky",
    ]
    assert "4 of 6 combinations shown" in dom
    assert re.search(r'<input type="checkbox" id="problems"[^>]*>', dom)
    # unsloth is requested only by the (skipped, hidden) GPU combination: its empty
    # column is hidden here.
    assert re.search(r'<table id="grid"[^>]*data-empty-columns="unsloth"', dom)
    assert "#grid tbody tr&gt;:nth-child(6)" in dom or "#grid tbody tr>:nth-child(6)" in dom
    link = re.search(r'<span id="attention">(.*?)</span>', dom)
    assert link and 'href="#all"' in link.group(1)
    assert "show the full grid (6 combinations)" in link.group(1)

    # The click: #all is the full grid, in matrix order, every column.
    full = _chromium(chromium, tmp_path / "p2", "--dump-dom", page.as_uri() + "#all")
    assert [name for name, hidden in _row_order(full) if not hidden] == [
        "tf4.52.4",
        "tf4.53.0",
        "tf4.56.2",
        "flaky",
        "tf-main",
        "gpu",
    ]
    assert re.search(r'<table id="grid"[^>]*data-empty-columns=""', full)
    assert '<span id="attention" hidden="">' in full


def test_a_run_with_nothing_to_look_at_opens_on_the_full_grid(chromium, tmp_path):
    out = tmp_path / "report"
    stored = results(
        combination("a", versions("4.52.4"), [case(CASE_A, "passed")]),
        combination("b", versions("4.53.0"), [case(CASE_A, "passed")]),
    )
    Reporting(registry=parse_registry([], "k.yaml")).render(stored, out, say=lambda _: None)
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", (out / "index.html").as_uri())
    assert "2 of 2 combinations shown" in dom
    assert '<span id="attention" hidden="">' in dom


def test_columns_are_grouped_by_file_with_the_parameter_visible(chromium, page, tmp_path):
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    files = re.findall(r'<th class="file" colspan="(\d+)"[^>]*><span>([^<]+)</span>', dom)
    assert files == [("1", "test_lora.py"), ("1", "test_double_backward.py")]
    assert '<span class="nm">test_lora_gets_gradients</span><b class="prm">[reentrant]</b>' in dom


def test_problems_only_hides_quiet_rows_and_case_columns(chromium, tmp_path):
    quiet = "test_quiet.py::test_always_passes"
    out = tmp_path / "report"
    stored = results(
        combination("good", versions("4.52.4"), [case(CASE_A, "passed"), case(quiet, "passed")]),
        combination("bad", versions("4.53.0"), [case(CASE_A, "failed"), case(quiet, "passed")]),
    )
    Reporting(registry=parse_registry([], "k.yaml")).render(stored, out, say=lambda _: None)
    dom = _chromium(
        chromium, tmp_path / "profile", "--dump-dom", (out / "index.html").as_uri() + "#problems=1"
    )
    assert 'id="problems" checked' in dom or "1 of 2 combinations shown" in dom
    assert [name for name, hidden in _row_order(dom) if not hidden] == ["bad"]
    quiet_head = re.search(r'<th class="case[^"]*" data-case="1"[^>]*>', dom).group(0)
    assert "colhidden" in quiet_head
    assert re.search(r'<th class="file colhidden"[^>]*data-cases="1"', dom)


def test_a_sweep_marks_its_transition_rows_not_every_version(chromium, tmp_path):
    out = tmp_path / "report"
    ladder = [
        combination(
            f"tf{version}",
            versions(version),
            [case(CASE_A, outcome), case(CASE_B, "passed")],
        )
        for version, outcome in [
            ("4.50.0", "passed"),
            ("4.51.0", "passed"),
            ("4.52.0", "failed"),
            ("4.53.0", "failed"),
            ("4.54.0", "passed"),
        ]
    ]
    Reporting(registry=parse_registry([], "k.yaml")).render(
        results(*ladder), out, say=lambda _: None
    )
    dom = _chromium(chromium, tmp_path / "profile", "--dump-dom", (out / "index.html").as_uri())
    assert 'data-ready="1"' in dom
    marked = re.findall(
        r'<tr data-r="\d+"[^>]*class="transition"[^>]*><th class="cid"[^>]*>([^<]+)<', dom
    )
    assert marked == ["tf4.52.0", "tf4.54.0"]
    assert 'class="ver chg"' not in dom  # every row moves transformers: nothing to bold
