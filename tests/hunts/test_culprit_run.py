"""The culprit hunt (hunts/culprit) handed a stand-in prober and release bisect: what
it hands them, what it writes, its exit codes. No environments."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.culprit.locks import parse_lock
from repromatrix.hunts.culprit.options import CulpritOptions, locks_from_results
from repromatrix.hunts.culprit.run import CULPRIT, culprit_hunt
from repromatrix.hunts.hunt import Voice, run_hunt
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import InstallFailure, Observation
from repromatrix.probe.spec import Probe
from repromatrix.results import CombinationResult, Results, write_json_atomic

GOOD = """\
numpy==2.2.6
tokenizers==0.21.1
    # via transformers
torch==2.13.0+cpu
transformers==4.52.4
"""
BAD = """\
numpy==2.4.6
tokenizers==0.23.3
    # via transformers
torch==2.13.0+cpu
transformers==5.23.0
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "probe.py"
    path.write_text("import sys\n")
    return path


def fake_prober(calls: list[dict[str, str]]):
    """A stand-in prober: bad with transformers 5, unresolvable when transformers 5
    meets the old tokenizers (as uv says it)."""

    def prober(trial):
        pins = {p.package: p.spec for p in trial.cell.pins}
        calls.append(pins)
        if pins["transformers"].startswith("5") and pins["tokenizers"] == "0.21.1":
            message = (
                "Because transformers==5.23.0 depends on tokenizers>=0.22 and you "
                "require tokenizers==0.21.1, we can conclude that your requirements are "
                "unsatisfiable."
            )
            failure = InstallFailure("resolve", message)
            return Observation(ProbeOutcome.SKIP, "install-error", 0.5, failure=failure)
        bad = pins["transformers"].startswith("5")
        return Observation(ProbeOutcome.BAD if bad else ProbeOutcome.GOOD, "exit 1", 2.0)

    return prober


def test_the_flow_writes_culprit_json_and_md(
    tmp_path: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, str]] = []
    bisects = []

    def fake_bisect(options, *_):
        bisects.append(options)
        record = SimpleNamespace(
            status="found", first_bad="5.0.0", last_good="4.57.6", steps=[1, 2, 3, 4, 5],
            candidates=list(range(30)), verdict="first bad: transformers 5.0.0 (last good: 4.57.6)",
        )  # fmt: skip
        return record, 0

    said: list[str] = []
    options = CulpritOptions(
        good=parse_lock(GOOD, str(tmp_path / "good.txt")),
        bad=parse_lock(BAD, str(tmp_path / "bad.txt")),
        probe=Probe(script=script),
        cell=CellSpec(pins=(Pin("torch", PinKind.EXACT, "2.13.0+cpu"),)),
        out=tmp_path / "out",
        command="nox -s culprit -- ...",
    )
    record, code = run_hunt(
        culprit_hunt(fake_bisect), options, fake_prober(calls), Voice(say=said.append)
    )
    assert code == 0
    assert said == [record.verdict]
    assert record.verdict.startswith(
        "culprit: transformers 4.52.4 -> 5.0.0 (first bad release; last good 4.57.6) (3 changes, "
    )  # torch is held by --pin: not a change
    assert all(call["torch"] == "2.13.0+cpu" for call in calls)
    # the release bisect holds the good lock's other pins; tokenizers (moved along) free
    [bisect] = bisects
    held = {p.package: (p.kind, p.spec) for p in bisect.pins}
    assert held["numpy"] == (PinKind.EXACT, "2.2.6")
    assert held["tokenizers"] == (PinKind.RANGE, ">=0.21.1,<=0.23.3")
    assert (bisect.good, bisect.bad) == ("4.52.4", "5.23.0")
    data = json.loads((tmp_path / "out" / "good-to-bad" / "culprit.json").read_text())
    assert data["culprits"] == [
        {
            "package": "transformers",
            "good": "4.52.4",
            "bad": "5.0.0",
            "lock_bad": "5.23.0",
            "last_good": "4.57.6",
            "moved_along": ["tokenizers"],
        }
    ]
    assert [c["package"] for c in data["changed"]] == ["numpy", "tokenizers", "transformers"]
    outcomes = [s["outcome"] for s in data["steps"]]
    assert outcomes[:2] == ["good", "bad"] and "unresolvable" in outcomes
    assert data["runs"] == sum(s["ran"] for s in data["steps"]) < len(calls)  # refusals: no run
    text = (tmp_path / "out" / "good-to-bad" / "culprit.md").read_text()
    assert text.splitlines()[0] == f"**{data['verdict']}**"
    assert "| transformers | 4.52.4 | 5.23.0 | 5.0.0 | tokenizers |" in text
    assert str(tmp_path) not in text and str(tmp_path) not in json.dumps(data)


def test_a_good_lock_that_fails_is_exit_1(
    tmp_path: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = CulpritOptions(
        good=parse_lock(GOOD, "good.txt"),
        bad=parse_lock(BAD, "bad.txt"),
        probe=Probe(script=script),
        out=tmp_path,
    )
    bad = lambda _trial: Observation(ProbeOutcome.BAD, "exit 1", 1.0)  # noqa: E731
    record, code = run_hunt(CULPRIT, options, bad, Voice(say=lambda _: None))
    assert code == 1
    assert record.status == "ends-mismatch"
    assert record.verdict.startswith("no culprit: the good lock is bad (exit 1)")


def test_locks_from_two_results_folders(tmp_path: Path) -> None:
    for night, version in (("good", "4.57.0"), ("bad", "4.58.0")):
        combo = CombinationResult(
            id="tf-latest",
            tier="nightly",
            requested={"transformers": "latest"},
            resolved={"transformers": version, "numpy": "2.2.6"},
            status="passed",
        )
        write_json_atomic(
            tmp_path / night / "results.json",
            Results(combinations=[combo]).model_dump(mode="json", by_alias=True),
        )
    good, bad = locks_from_results(tmp_path / "good", tmp_path / "bad", "tf-latest")
    assert good.pins == {"numpy": "2.2.6", "transformers": "4.57.0"}
    assert bad.pins["transformers"] == "4.58.0"
    with pytest.raises(UserError, match="no combination 'nope'"):
        locks_from_results(tmp_path / "good", tmp_path / "bad", "nope")


def test_the_locks_indexes_reach_every_cell_with_credentials_masked(
    tmp_path: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the locks' --index-url / --extra-index-url lines were dropped and every
    mix was resolved against the default index."""
    calls: list[dict[str, str]] = []
    indexes = []
    fake = fake_prober(calls)

    def recording(trial):
        indexes.append(trial.index)
        return fake(trial)

    fake_bisect = lambda options, *_: (SimpleNamespace(  # noqa: E731
        status="found", first_bad="5.0.0", last_good="4.57.6", steps=[1], candidates=[1],
        verdict="first bad: transformers 5.0.0",
    ), 0)  # fmt: skip
    mirror = "https://ci-user:hunter2-s3cret@mirror.example/simple"
    cpu = "https://download.example/whl/cpu"
    options = CulpritOptions(
        good=parse_lock(f"--index-url {mirror}\n--extra-index-url {cpu}\n{GOOD}", "good.txt"),
        bad=parse_lock(f"--index-url {mirror}\n{BAD}", "bad.txt"),
        probe=Probe(script=script),
        out=tmp_path / "out",
        index=IndexSettings(find_links=("/srv/wheelhouse",)),
    )
    _record, code = run_hunt(
        culprit_hunt(fake_bisect), options, recording, Voice(say=lambda _: None)
    )
    assert code == 0 and indexes
    for index in indexes:
        assert index.index_url == mirror
        assert index.extra_index_urls == (cpu,)
        assert index.find_links == ("/srv/wheelhouse",), "the user's own settings stay"
    folder = tmp_path / "out" / "good-to-bad"
    data = json.loads((folder / "culprit.json").read_text())
    assert data["index"]["index_url"].endswith("@mirror.example/simple")
    assert data["index"]["extra_index_urls"] == [cpu]
    for written in ((folder / "culprit.json").read_text(), (folder / "culprit.md").read_text()):
        assert "hunter2-s3cret" not in written
    assert "mirror.example/simple" in (folder / "culprit.md").read_text()


def test_culprit_names_the_source_its_cells_built(tmp_path: Path, script: Path) -> None:
    from dataclasses import replace

    from repromatrix.probe.observation import BuiltCell

    fake = fake_prober([])
    tree = {"path": ".", "digest": "sha256:" + "c" * 64, "commit": None, "dirty": False}

    def prober(trial):
        seen = fake(trial)
        return replace(seen, cell=BuiltCell(identity="e" * 16, sources={"mylib": tree}))

    options = CulpritOptions(
        good=parse_lock(GOOD, str(tmp_path / "good.txt")),
        bad=parse_lock(BAD, str(tmp_path / "bad.txt")),
        probe=Probe(script=script),
        cell=CellSpec(pins=(Pin("mylib", PinKind.PATH, ".", str(tmp_path)),)),
        out=tmp_path / "out",
    )
    done = SimpleNamespace(status="found", first_bad="5.0.0", last_good="4.57.6", steps=[],
                           candidates=[], verdict="first bad: transformers 5.0.0")  # fmt: skip
    run_hunt(culprit_hunt(lambda *_a, **_k: (done, 0)), options, prober, Voice(say=print))
    data = json.loads((tmp_path / "out" / "good-to-bad" / "culprit.json").read_text())
    assert data["sources"] == {"mylib": tree}
    text = (tmp_path / "out" / "good-to-bad" / "culprit.md").read_text()
    assert "- your source: `mylib . no commit, sha256:cccccccccccc`" in text
