"""The watch's follow-up (issue/follow.py) handed a stand-in prober over a real package
history (a local git repository, releases as wheels in a find-links folder): a flip
confirmed, then named by the existing hunts (bisect or culprit, then the commits
between the two releases), a flaky one not named, main ahead found at its commit."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from support.history import (
    FIX_PR,
    FIX_SUBJECT,
    OTHER,
    PACKAGE,
    History,
    git,
    history,
    other_wheels,
    release_wheels,
)

from repromatrix.issue.answer import Result
from repromatrix.issue.follow import follow
from repromatrix.issue.plan import Job
from repromatrix.issue.state import Observed
from repromatrix.matrix.pins import PinKind
from repromatrix.outcomes import ProbeOutcome
from repromatrix.probe.observation import BuiltCell, Observation
from repromatrix.probe.spec import Probe

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[History, Path, set[str]]:
    root = tmp_path_factory.mktemp("history")
    found = history(root)
    house = root / "house"
    house.mkdir()
    release_wheels(house)
    other_wheels(house, ("1.0", "1.1"))
    fixed = set(git(found.repo, "rev-list", f"{found.fix}^..main").split())
    return found, house, fixed


@pytest.fixture
def index(package, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _found, house, _fixed = package
    monkeypatch.setenv("PIP_FIND_LINKS", str(house))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("REPROMATRIX_ENV_DIR", str(tmp_path / "cells"))


class Prober:
    """Good where tinyfix answers 42: a release after 1.0, a commit from the fix on.
    ``tonight``: the outcomes of tonight's cell's reruns, in turn (a flake)."""

    def __init__(self, fixed: set[str], tonight: list[str] | None = None) -> None:
        self.fixed = fixed
        self.tonight = list(tonight or [])
        self.trials: list[dict[str, str]] = []

    def __call__(self, trial) -> Observation:
        pins = {p.package: p for p in trial.cell.pins}
        self.trials.append({name: pin.spec for name, pin in pins.items()})
        pin = pins[PACKAGE]
        if pin.kind is PinKind.DIRECT:
            good = pin.spec.rsplit("@", 1)[-1] in self.fixed
        elif trial.name.startswith("confirm-") and self.tonight:
            good = self.tonight.pop(0) == "good"
        else:
            good = pin.spec != "1.0"
        return Observation(ProbeOutcome.GOOD if good else ProbeOutcome.BAD, "exit 1", 0.1)


def _job(found: History, since: dict[str, str], **more) -> Job:
    watched = list(since)
    return Job(
        issue=7, kind="watch", line="nightly watch", pins=[f"{p}=latest" for p in watched],
        watched=watched, source="issue", timeout=60, confirm=2,
        since=Observed(outcome="bad", versions=since), repositories={PACKAGE: found.url},
        **more,
    )  # fmt: skip


def _tonight(outcome: str, **versions: str) -> tuple[Result, Observation]:
    observation = Observation(
        ProbeOutcome(outcome), "", 0.1, cell=BuiltCell("0" * 16, resolved=versions)
    )
    result = Result(issue=7, kind="watch", status="done", outcome=outcome, versions=versions)
    return result, observation


def _follow(
    job: Job, result: Result, observation: Observation, prober, tmp_path: Path, remember=True
) -> None:
    script = tmp_path / "repro-7.py"
    script.write_text("import tinyfix\n")
    probe = Probe(script=script, cases_root=tmp_path, timeout=60)
    stop_at = time.monotonic() + 600
    follow(job, result, observation, probe, tmp_path / "answers", stop_at=stop_at, prober=prober,
           remember=remember)  # fmt: skip


def test_a_flip_three_releases_later_is_confirmed_bisected_and_named_to_its_commit(
    package, index, tmp_path: Path
) -> None:
    found, _house, fixed = package
    job = _job(found, {PACKAGE: "1.0"})
    result, observation = _tonight("good", tinyfix="1.3")
    prober = Prober(fixed)

    _follow(job, result, observation, prober, tmp_path)

    assert result.runs == ["good", "good", "good"]
    named = result.named
    assert named is not None, result.markdown
    assert (named.how, named.package, named.before, named.release) == (
        "bisect",
        PACKAGE,
        "1.0",
        "1.1",
    )
    assert named.commit is not None and named.commit.sha == found.fix
    assert (named.commit.subject, named.commit.pr) == (FIX_SUBJECT, FIX_PR)
    assert named.old == {PACKAGE: "1.0"} and named.new == {PACKAGE: "1.1"}
    assert named.releases == 4 and named.commits >= 5
    assert named.cells == len(prober.trials) - 0  # every probe the follow-up made
    assert "confirmed: good in 3 of 3 runs" in result.markdown
    # Tonight's cell held in every run: the bisect takes its end as seen, builds it not
    # again, and no hunt builds a cell twice.
    hunted = [tuple(sorted(t.items())) for t in prober.trials[2:]]
    assert ((PACKAGE, "1.3"),) not in hunted and len(set(hunted)) == len(hunted)


def test_without_memory_every_cell_a_hunt_asks_for_is_built(package, index, tmp_path: Path) -> None:
    found, _house, fixed = package
    prober = Prober(fixed)
    result, observation = _tonight("good", tinyfix="1.3")

    _follow(_job(found, {PACKAGE: "1.0"}), result, observation, prober, tmp_path, remember=False)

    assert {PACKAGE: "1.3"} in prober.trials[2:]  # tonight's, built again as the bisect's end
    assert result.named is not None and result.named.commit is not None


def test_a_flip_that_does_not_hold_is_not_named(package, index, tmp_path: Path) -> None:
    found, _house, fixed = package
    job = _job(found, {PACKAGE: "1.0"})
    result, observation = _tonight("good", tinyfix="1.3")
    prober = Prober(fixed, tonight=["bad", "good"])

    _follow(job, result, observation, prober, tmp_path)

    assert result.runs == ["good", "bad", "good"]
    assert result.named is None
    assert len(prober.trials) == 2  # the reruns, no hunt


def test_a_flip_from_a_release_the_index_lacks_is_confirmed_and_said_unnamed(
    package, index, tmp_path: Path
) -> None:
    # The last decisive night's release is gone from the index: the bisect's plan refuses
    # it (one line), and the confirmed flip and tonight's answer stand, with that line.
    found, _house, fixed = package
    job = _job(found, {PACKAGE: "0.9"})
    result, observation = _tonight("good", tinyfix="1.3")
    prober = Prober(fixed)

    _follow(job, result, observation, prober, tmp_path)

    assert result.runs == ["good", "good", "good"]
    named = result.named
    assert named is not None and (named.how, named.release, named.commit) == ("bisect", None, None)
    assert named.note.startswith("the bisect could not start: ") and "0.9" in named.note
    assert str(tmp_path) not in named.note and "<local>/" in named.note  # no runner path
    assert len(prober.trials) == 2  # the reruns, no probe of the refused hunt
    assert "confirmed: good in 3 of 3 runs" in result.markdown


def test_two_packages_moved_and_the_culprit_is_the_one(package, index, tmp_path: Path) -> None:
    found, _house, fixed = package
    job = _job(found, {PACKAGE: "1.0", OTHER: "1.0"})
    result, observation = _tonight("good", tinyfix="1.3", tinyother="1.1")

    _follow(job, result, observation, Prober(fixed), tmp_path)

    named = result.named
    assert named is not None, result.markdown
    assert (named.how, named.package, named.before, named.release) == (
        "culprit",
        PACKAGE,
        "1.0",
        "1.1",
    )
    assert named.commit is not None and named.commit.sha == found.fix
    assert named.old[PACKAGE] == "1.0" and named.new[PACKAGE] == "1.1"


def test_main_passing_ahead_of_a_release_is_confirmed_and_found_at_its_commit(
    package, index, tmp_path: Path
) -> None:
    found, _house, fixed = package
    job = _job(found, {PACKAGE: "1.0"}, main=[PACKAGE])
    job.since = None  # the first night: nothing to flip from
    result, observation = _tonight("bad", tinyfix="1.0")

    _follow(job, result, observation, Prober(fixed), tmp_path)

    (on_main,) = result.main
    assert on_main.outcome == "good" and on_main.runs == ["good", "good", "good"]
    assert on_main.commit is not None and on_main.commit.sha == found.head
    assert on_main.since is not None and on_main.since.sha == found.fix
    assert on_main.since.pr == FIX_PR


def test_main_already_said_is_checked_but_not_bisected_again(
    package, index, tmp_path: Path
) -> None:
    found, _house, fixed = package
    job = _job(found, {PACKAGE: "1.0"}, main=[PACKAGE], ahead={PACKAGE: found.fix})
    job.since = None
    result, observation = _tonight("bad", tinyfix="1.0")
    prober = Prober(fixed)

    _follow(job, result, observation, prober, tmp_path)

    assert len(prober.trials) == 1 and result.main[0].since is None
