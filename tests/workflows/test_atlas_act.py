"""atlas.yml run for real under act (tests/support/act.py), two nights in a row: the
plan job restores last night's `atlas` artifact (the gh double serves night 1's to
night 2's `gh run download`), each planned cell is a combination job of
nightly-combination.yml, the fold job folds them in and uploads the atlas and the page
that GitHub Pages would publish; the deploy job never runs under act.

The cells are real and tiny: two packages built here as wheels (a find-links folder
the cells install from, passed on as a user's PIP_FIND_LINKS is), two releases each,
and one case: a 1.1 and b 2.0 clash. Two cells a night (budget 2): night 1 answers two
of the four pairs, night 2 the other two (the clash among them), testing none again."""

from __future__ import annotations

import csv
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
from support.act import ActRun, act_run
from support.nights import RUNNER_INPUT, Scenario
from support.wheels import version_wheel as tiny_wheel

pytestmark = [pytest.mark.act, pytest.mark.e2e]

CASE = """
    import atlas_fake_a, atlas_fake_b


    def test_a_and_b_get_along():
        clash = (atlas_fake_a.VERSION, atlas_fake_b.VERSION) == ("1.1", "2.0")
        assert not clash, "a 1.1 and b 2.0 clash"
"""
MATRIX = """
    schema: 1
    packages: [torch, atlas-fake-a, atlas-fake-b]
    defaults: {device: cpu, torch: null}
    tiers:
      smoke:
        - {id: one, atlas-fake-a: "1.0"}
    atlas:
      axes: {atlas-fake-a: ">=1.0", atlas-fake-b: ">=1.0"}
      releases: all
      cases: [test_pair.py]
      budget: 2
"""
NO_ATLAS = """
    schema: 1
    packages: [torch, atlas-fake-a]
    defaults: {device: cpu, torch: null}
    tiers:
      smoke:
        - {id: one, atlas-fake-a: "1.0"}
"""
FIRST_RUN_ID = 2001
PAGE_FILES = {"index.html", "answers.csv", "summary.md"}


@pytest.fixture
def atlas_scenario(scenario: Scenario, tmp_path: Path) -> Scenario:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("1.0", "1.1"):
        tiny_wheel(wheels, "atlas-fake-a", version)
    for version in ("1.0", "2.0"):
        tiny_wheel(wheels, "atlas-fake-b", version)
    # What a user's pip configuration says, the harness passes on to uv.
    found = os.environ.get("UV_FIND_LINKS") or os.environ.get("PIP_FIND_LINKS") or ""
    scenario.env.update({"PIP_FIND_LINKS": f"{found} {wheels}".strip(), "UV_FIND_LINKS": ""})
    return scenario


def atlas_night(scenario: Scenario, **inputs: str) -> ActRun:
    """One run of atlas.yml; its `atlas` artifact becomes a completed run of
    atlas.yml that the next night's gh run download serves."""
    given = {"runner": RUNNER_INPUT, "repromatrix": ".", **inputs}
    event = scenario.root / f"event-{len(scenario.nights)}.json"
    # "act": true as GitHub never sends it: the deploy job's condition skips it.
    event.write_text(json.dumps({"act": True, "inputs": given}))
    run = act_run(
        scenario.repo,
        workflow="atlas.yml",
        inputs=given,
        gh=scenario.gh,
        work=scenario.work,
        event_path=event,
        env=scenario.env,
    )
    scenario.nights.append(run)
    if "atlas" in run.artifact_names():
        assert "atlas-seal" in run.artifact_names(), "the fold seals what it uploads"
        scenario.gh.seed_run(
            FIRST_RUN_ID + len(scenario.nights) - 1,
            {"atlas": run.artifact("atlas"), "atlas-seal": run.artifact("atlas-seal")},
            workflow="atlas.yml",
            conclusion="success" if run.returncode == 0 else "failure",
        )
    return run


def page_of(run: ActRun) -> dict[str, str]:
    """The files of the github-pages artifact (a tar inside the zip), as deploy-pages
    would publish them."""
    folder = run.artifact("github-pages")
    [archive] = folder.glob("*.tar")
    files = {}
    with tarfile.open(archive) as opened:
        for member in opened.getmembers():
            if member.isfile():
                files[Path(member.name).as_posix().removeprefix("./")] = (
                    opened.extractfile(member).read().decode()
                )
    return files


def cells_of(run: ActRun) -> list[dict[str, Any]]:
    data = json.loads((run.artifact("atlas") / "atlas.json").read_text())
    return data["cells"]


def pairs(cells: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    return {(c["pins"]["atlas-fake-a"], c["pins"]["atlas-fake-b"]): c["outcome"] for c in cells}


def _deployed(run: ActRun) -> bool:
    """Whether act started the deploy job at all (it logs every job it runs by name)."""
    return "[atlas/deploy" in run.log


def test_two_nights_answer_every_pair_and_publish_the_page(atlas_scenario: Scenario) -> None:
    scenario = atlas_scenario
    scenario.write(matrix=MATRIX, cases={"test_pair.py": CASE})

    first = atlas_night(scenario)

    assert first.returncode == 0, first.tail()
    assert "no baseline: no earlier successful run (a first night)" in first.log
    night_1 = pairs(cells_of(first))
    assert len(night_1) == 2, night_1  # the budget
    assert set(night_1.values()) <= {"works", "breaks"}
    for cell in cells_of(first):
        assert cell["reason"] == "pair unanswered" and cell["plan"], cell
    combinations = [n for n in first.artifact_names() if n.startswith("combination-atlas-")]
    assert combinations == ["combination-atlas-001", "combination-atlas-002"]
    page = page_of(first)
    assert set(page) == PAGE_FILES
    assert "[atlas/fold" in first.log  # act names every job it runs so
    assert not _deployed(first), first.tail()

    second = atlas_night(scenario)

    assert second.returncode == 0, second.tail()
    downloads = [
        (c["argv"][2], c["argv"][c["argv"].index("--name") + 1])
        for c in scenario.gh.calls_to("run", "download")
    ]
    # Night 1's state, and the seal its fold uploaded beside it.
    assert downloads == [(str(FIRST_RUN_ID), "atlas"), (str(FIRST_RUN_ID), "atlas-seal")]
    both = pairs(cells_of(second))
    # Only what was left: night 1's cells stand and none is tested again.
    assert len(cells_of(second)) == 4
    assert {k: both[k] for k in night_1} == night_1
    assert both == {
        ("1.0", "1.0"): "works",
        ("1.0", "2.0"): "works",
        ("1.1", "1.0"): "works",
        ("1.1", "2.0"): "breaks",
    }
    [broken] = [c for c in cells_of(second) if c["outcome"] == "breaks"]
    [case] = broken["cases"].values()
    assert case["error"].endswith("a 1.1 and b 2.0 clash") and case["signature"]
    assert broken["resolved"] == {"atlas-fake-a": "1.1", "atlas-fake-b": "2.0"}

    page = page_of(second)
    assert set(page) == PAGE_FILES
    html = page["index.html"]
    assert "<script src=" not in html and "<link " not in html, "self-contained"
    assert '<table class="grid">' in html and "a 1.1 and b 2.0 clash" in html
    rows = list(csv.DictReader(io.StringIO(page["answers.csv"])))
    assert len(rows) == 4, rows  # one case: a row per pair
    assert "breaks" in {r.get("status") for r in rows}, rows[0]
    recommended = "recommended: `atlas-fake-a==1.1 atlas-fake-b==1.0`"
    assert recommended in page["summary.md"]
    assert recommended in second.summary()  # the step summary
    assert not _deployed(second), second.tail()

    # Night 3: every pair answered, nothing is planned; the page is rendered again.
    third = atlas_night(scenario)

    assert third.returncode == 0, third.tail()
    assert not [n for n in third.artifact_names() if n.startswith("combination-")]
    assert len(cells_of(third)) == 4
    assert set(page_of(third)) == PAGE_FILES
    assert "Nothing planned tonight" in third.log


def test_a_matrix_without_an_atlas_block_is_green_with_one_notice(
    atlas_scenario: Scenario,
) -> None:
    atlas_scenario.write(matrix=NO_ATLAS, cases={"test_pair.py": CASE})

    run = atlas_night(atlas_scenario)

    assert run.returncode == 0, run.tail()
    notices = [line for line in run.log.splitlines() if "::notice::" in line]
    assert len(notices) == 1 and "matrix.yaml has no atlas block" in notices[0], notices
    assert run.artifact_names() == []
    assert not atlas_scenario.gh.calls()  # no baseline asked for
    for job in ("cells", "fold", "deploy"):
        assert f"[atlas/{job}" not in run.log, run.tail()
