"""``repromatrix baseline``: last night's artifact, for nightly.yml (nightly-results) and
atlas.yml (atlas: only from a run that succeeded, and only as its fold sealed it).
Every way of not having one is one line and found=false; a GitHub double in memory
stands in for gh (run list, run download)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.reportdata import demo_results

from repromatrix.cli import app
from repromatrix.errors import UserError
from repromatrix.hunts.atlas.state import AtlasState, CellRecord, read_state, write_state
from repromatrix.nightly.baseline import fetch_baseline, folder_digest


class FakeGitHub:
    """Completed runs, newest first, each with the artifacts ``download`` serves (a
    function writing its files, or a UserError to raise); ``failed``: runs that did
    not succeed."""

    def __init__(
        self,
        runs: dict[int, dict[str, object]],
        *,
        listing: UserError | None = None,
        failed: frozenset[int] = frozenset(),
    ):
        self.runs = runs
        self.listing = listing
        self.failed = failed
        self.downloads: list[tuple[int, str]] = []

    def completed_runs(
        self, workflow: str, *, branch: str | None, limit: int = 5, status: str = "completed"
    ) -> list[int]:
        if self.listing:
            raise self.listing
        return [r for r in self.runs if status == "completed" or r not in self.failed]

    def download(self, run: int, *, name: str, into: Path) -> None:
        self.downloads.append((run, name))
        served = self.runs[run].get(name)
        if served is None:
            raise UserError(f"gh: no artifact matches {name}")
        if isinstance(served, UserError):
            raise served
        into.mkdir(parents=True, exist_ok=True)
        for file, text in served.items():
            (into / file).write_text(text)


def sealed(files: dict[str, str], tmp: Path | None = None) -> dict[str, dict[str, str]]:
    """An atlas artifact and the seal its fold job uploads beside it."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        for name, text in files.items():
            (Path(folder) / name).write_text(text)
        digest = folder_digest(Path(folder))
    seal = json.dumps({"artifact": "123", "sha256": digest})
    return {"atlas": files, "atlas-seal": {"seal.json": seal}}


def _atlas_json() -> str:
    state = AtlasState(
        axes={"peft": ["0.17.0"], "trl": ["0.24.0"]},
        cells=[CellRecord(pins={"peft": "0.17.0", "trl": "0.24.0"}, outcome="works")],
    )
    return json.dumps(state.dump())


def _results_json() -> str:
    return json.dumps(demo_results().dump())


def _fetch(client: FakeGitHub, into: Path, artifact: str):
    return fetch_baseline(
        client, into=into, workflow="atlas.yml", branch="main", this_run=9, artifact=artifact
    )


def test_atlas_state_of_the_newest_run_that_has_one(tmp_path: Path) -> None:
    client = FakeGitHub(
        {
            9: sealed({"atlas.json": "tonight's own run: never its baseline"}),
            8: {},  # expired
            7: sealed({"atlas.json": _atlas_json(), "index.html": "<html>"}),
        }
    )
    into = tmp_path / "reports" / "atlas"

    found = _fetch(client, into, "atlas")

    assert (found.found, found.run, found.note) == (True, 7, "baseline: run 7")
    assert client.downloads == [(8, "atlas"), (7, "atlas"), (7, "atlas-seal")]
    assert read_state(into).cells[0].pins == {"peft": "0.17.0", "trl": "0.24.0"}


def test_the_default_artifact_is_still_nightly_results(tmp_path: Path) -> None:
    client = FakeGitHub({5: {"nightly-results": {"results.json": _results_json()}}})
    found = fetch_baseline(client, into=tmp_path / "b", workflow="nightly.yml", branch=None,
                           this_run=None)  # fmt: skip
    assert found.found and client.downloads == [(5, "nightly-results")]


@pytest.mark.parametrize(
    ("runs", "listing", "expected"),
    [
        ({}, None, "no baseline: no earlier successful run (a first night)"),
        ({}, UserError("gh: HTTP 401"), "no baseline: listing earlier runs failed (gh: HTTP 401)"),
        ({4: {}}, None, "no baseline: run 4: gh: no artifact matches atlas"),
        (
            {4: {"atlas": {"index.html": "<html>"}}},
            None,
            "no baseline: run 4: its atlas artifact has no atlas.json",
        ),
        (
            {4: sealed({"atlas.json": "{not json"})},
            None,
            "no baseline: run 4's atlas cannot be read (",
        ),
        (
            {4: sealed({"atlas.json": '{"schema": 1, "cells": [{"pins": {}}]}'})},
            None,
            "no baseline: run 4's atlas cannot be read (",
        ),
        (
            # a nightly-results artifact is not an atlas
            {4: sealed({"atlas.json": '{"schema": 1, "combinations": []}'})},
            None,
            None,  # an atlas file with no fields is an empty atlas: found
        ),
        (
            {4: {"atlas": {"atlas.json": _atlas_json()}}},
            None,
            "no baseline: run 4: gh: no artifact matches atlas-seal",
        ),
        (
            # a cell job's atlas, not the one the fold sealed
            {4: {**sealed({"atlas.json": _atlas_json()}), "atlas": {"atlas.json": "{}"}}},
            None,
            "no baseline: run 4: its atlas is not the one its fold sealed",
        ),
    ],
)
def test_every_way_of_not_having_an_atlas_is_one_line(
    tmp_path: Path, runs, listing, expected
) -> None:
    into = tmp_path / "reports" / "atlas"
    found = _fetch(FakeGitHub(runs, listing=listing), into, "atlas")
    if expected is None:
        assert found.found
        return
    assert not found.found
    assert found.note.startswith(expected), found.note
    assert "\n" not in found.note
    assert not into.exists()  # nothing half-read is left for `atlas plan` to start from


def test_the_cli_writes_found_and_note_as_step_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    client = FakeGitHub({3: sealed({"atlas.json": '{"schema": 3}'})})
    monkeypatch.setattr("repromatrix.cli.nightly.GitHub", lambda *a, **k: client)
    outputs = tmp_path / "outputs"
    into = tmp_path / "atlas"

    code = app.main(
        ["baseline", "--artifact", "atlas", "--workflow", "atlas.yml", "--into", str(into),
         "--github-output", str(outputs)]
    )  # fmt: skip

    assert code == 0
    assert client.downloads == [(3, "atlas"), (3, "atlas-seal")]
    lines = outputs.read_text().splitlines()
    assert lines[0] == "found=false"
    assert lines[1].startswith("note=no baseline: run 3's atlas cannot be read (")
    assert "not an atlas file of schema 2" in capsys.readouterr().out


def test_the_atlas_comes_only_from_a_run_that_succeeded(tmp_path: Path) -> None:
    """A run whose fold failed (a cell job took the artifact's name first, say) is
    never tomorrow's state, whatever its atlas artifact holds."""
    client = FakeGitHub(
        {8: sealed({"atlas.json": _atlas_json()}), 7: sealed({"atlas.json": _atlas_json()})},
        failed=frozenset({8}),
    )
    found = _fetch(client, tmp_path / "atlas", "atlas")
    assert (found.found, found.run) == (True, 7)
    assert (8, "atlas") not in client.downloads


def test_an_unknown_artifact_is_refused_by_the_parser(capsys) -> None:
    assert app.main(["baseline", "--artifact", "wheels", "--into", "x"]) == 2
    assert "invalid choice: 'wheels'" in capsys.readouterr().err


# Garbage where atlas.json should be: read_state refuses it with one UserError line
# (never another exception, never a traceback), whatever JSON or bytes it is.
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_atlas_shaped = st.fixed_dictionaries(
    {"schema": st.just(1)},
    optional={
        key: _json
        for key in ("axes", "held", "cases", "strength", "cells", "resolutions", "audits", "runs")
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(_json, _atlas_shaped, st.builds(
    lambda cells: {"schema": 1, "cells": cells}, st.lists(st.dictionaries(
        st.sampled_from(["pins", "outcome", "cases", "failures", "seconds", "held"]), _json),
        max_size=3))))  # fmt: skip
def test_read_state_refuses_garbage_with_one_line(tmp_path: Path, data) -> None:
    (tmp_path / "atlas.json").write_text(json.dumps(data))
    try:
        state = read_state(tmp_path)
    except UserError as err:
        assert "\n" not in str(err)
        return
    write_state(tmp_path / "again", state)  # what was accepted is an atlas
    assert read_state(tmp_path / "again") == state


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"schema": true}', "\udcff", ""],
    ids=["deep", "schema-true", "undecodable", "empty"],
)
def test_read_state_refuses_what_json_chokes_on(tmp_path: Path, text: str) -> None:
    (tmp_path / "atlas.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(UserError, match=r"atlas\.json: not an atlas file"):
        read_state(tmp_path)
