"""A whole bisect run (candidates from a file:// index, report files, exit status,
command-line errors) with a synthetic prober in place of real environments."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from packaging.version import Version

from repromatrix import cli
from repromatrix.hunts.bisect.report import (
    BisectRecord,
    StepRecord,
    duration,
    github_repository,
    markdown,
    verdict_line,
)
from repromatrix.hunts.bisect.run import BISECT, BisectOptions
from repromatrix.hunts.hunt import Voice, run_hunt
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import parse_pin_option
from repromatrix.probe.observation import BuiltCell, DateCap, InstallFailure, Observation
from repromatrix.probe.rounds import probe_devices
from repromatrix.probe.spec import Probe
from repromatrix.search.bisection import Find, ProbeOutcome

PACKAGE = "tiny-pkg"
RELEASES = ["1.0.0", "1.1.0", "1.2.0", "1.2.1", "1.3.0", "1.4.0", "1.5.0", "1.6.0", "2.0.0"]


def only_index(monkeypatch: pytest.MonkeyPatch, folder: Path) -> str:
    """Set FOLDER as the user's PIP_INDEX_URL with no other PIP_* or UV_* setting."""
    for name in list(os.environ):
        if name.startswith(("PIP_", "UV_")):
            monkeypatch.delenv(name)
    url = folder.as_uri()
    monkeypatch.setenv("PIP_INDEX_URL", url)
    return url


def split_at(
    first: str, below: ProbeOutcome = ProbeOutcome.GOOD, above: ProbeOutcome = ProbeOutcome.BAD
) -> dict[str, ProbeOutcome]:
    """Each release's outcome: BELOW before FIRST, ABOVE from FIRST on."""
    return {v: below if Version(v) < Version(first) else above for v in RELEASES}


# The command line of a bisect over the index's whole range, before its options.
BISECT_WHOLE_RANGE = ["bisect", "--package", PACKAGE, "--good", "1.0.0", "--bad", "2.0.0"]


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A file:// index with RELEASES (and a yanked 1.4.1, a 2.0.0rc1), set as the
    user's PIP_INDEX_URL; nothing else configured."""
    page = tmp_path / "simple" / PACKAGE
    page.mkdir(parents=True)
    files = [f"tiny_pkg-{v}-py3-none-any.whl" for v in RELEASES]
    anchors = [f'<a href="{f}">{f}</a>' for f in files]
    anchors.append('<a href="tiny_pkg-1.4.1.tar.gz" data-yanked="">tiny_pkg-1.4.1.tar.gz</a>')
    anchors.append('<a href="tiny_pkg-2.0.0rc1.tar.gz">tiny_pkg-2.0.0rc1.tar.gz</a>')
    (page / "index.html").write_text("\n".join(anchors))
    return only_index(monkeypatch, tmp_path / "simple")


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "repro.py"
    path.write_text("import sys\nsys.exit(0)\n")
    return path


def fake_prober(truth: dict[str, ProbeOutcome], tested: list[str]):
    def prober(trial):
        pins = trial.cell.pins
        version = pins[-1].spec
        assert pins[-1].package == PACKAGE
        assert [p.package for p in pins[:-1]] == ["torch"], "the other pins are kept"
        tested.append(version)
        outcome = truth[version]
        detail = {ProbeOutcome.GOOD: "exit 0", ProbeOutcome.BAD: "exit 1"}.get(
            outcome, "install-error: x"
        )
        return Observation(
            outcome,
            detail,
            1.5,
            BuiltCell(identity="f" * 16, reused=False, resolved={PACKAGE: version}),
        )

    return prober


def options(tmp_path: Path, script: Path, good: str, bad: str, **kw) -> BisectOptions:
    return BisectOptions(
        package=PACKAGE,
        good=good,
        bad=bad,
        probe=Probe(script=script),
        cell=CellSpec(pins=(parse_pin_option("torch==2.13.0"),), as_of=kw.pop("as_of", None)),
        out=tmp_path / "reports" / "bisect",
        **kw,
    )


def test_a_regression_is_found_and_reported(tmp_path: Path, index: str, script: Path) -> None:
    tested: list[str] = []
    prober = fake_prober(split_at("1.3.0"), tested)
    lines: list[str] = []
    record, code = run_hunt(
        BISECT, options(tmp_path, script, "1.0.0", "2.0.0"), prober, Voice(say=lines.append)
    )
    assert code == 0
    assert lines == [record.verdict]
    assert record.verdict.startswith("first bad: tiny-pkg 1.3.0 (last good: 1.2.1), ")
    assert tested[:2] == ["1.0.0", "2.0.0"]
    assert len(tested) <= 2 + 4  # ceil(log2(9)) + 2

    folder = tmp_path / "reports" / "bisect" / "tiny-pkg-1.0.0-2.0.0"
    data = json.loads((folder / "bisect.json").read_text())
    assert data["package"] == PACKAGE
    assert (data["good"], data["bad"], data["find"]) == ("1.0.0", "2.0.0", "first-bad")
    assert (data["first_bad"], data["last_good"]) == ("1.3.0", "1.2.1")
    assert "first_good" not in data and "last_bad" not in data
    assert data["candidates"] == RELEASES, "no yanked release, no pre-release"
    assert [s["version"] for s in data["steps"]] == tested
    assert all({"version", "outcome", "seconds"} <= set(s) for s in data["steps"])
    assert data["status"] == "found"
    text = (folder / "bisect.md").read_text()
    assert record.verdict in text
    assert "https://pypi.org/project/tiny-pkg/1.3.0/" in text
    assert "https://pypi.org/project/tiny-pkg/1.2.1/" in text
    assert (
        "nox -s bisect -- --package tiny-pkg --good 1.0.0 --bad 2.0.0 --pin torch==2.13.0" in text
    )
    assert str(tmp_path) not in text and str(tmp_path) not in json.dumps(data)
    assert "| 1 | 1 | 1.0.0 (good end) | good |" in text
    assert "- mode: releases; " in text and "- stack: today's (--as-of none)" in text
    assert data["mode"] == "releases" and data["rounds"] == len(tested)

    # Running it again keeps the first report as .previous.
    run_hunt(BISECT, options(tmp_path, script, "1.0.0", "2.0.0"), prober, Voice(say=lines.append))
    assert (folder.parent / "tiny-pkg-1.0.0-2.0.0.previous" / "bisect.json").exists()


def test_a_fix_with_skips_next_to_it_is_inconclusive(
    tmp_path: Path, index: str, script: Path
) -> None:
    truth = split_at("1.4.0", below=ProbeOutcome.BAD, above=ProbeOutcome.GOOD)
    truth["1.3.0"] = truth["1.4.0"] = ProbeOutcome.SKIP
    tested: list[str] = []
    prober = fake_prober(truth, tested)
    record, code = run_hunt(
        BISECT,
        options(tmp_path, script, good="2.0.0", bad="1.0.0", find=Find.FIRST_GOOD),
        prober,
        Voice(say=print),
    )
    assert code == 1
    assert record.status == "inconclusive"
    assert record.could_be_first == ["1.3.0", "1.4.0", "1.5.0"]
    assert record.verdict.startswith(
        "could not conclude: first good is one of 1.3.0, 1.4.0, 1.5.0 (could not test 1.3.0, 1.4.0)"
    )
    data = json.loads((tmp_path / "reports/bisect/tiny-pkg-2.0.0-1.0.0/bisect.json").read_text())
    assert data["first_good"] is None and "first_bad" not in data


def test_ends_that_do_not_behave_as_claimed(tmp_path: Path, index: str, script: Path) -> None:
    truth = dict.fromkeys(RELEASES, ProbeOutcome.BAD)
    tested: list[str] = []
    prober = fake_prober(truth, tested)
    record, code = run_hunt(
        BISECT, options(tmp_path, script, "1.1.0", "1.6.0"), prober, Voice(say=print)
    )
    assert code == 1
    assert tested == ["1.1.0", "1.6.0"]
    assert "good end 1.1.0 was bad (exit 1)" in record.verdict


def test_an_interrupted_bisect_keeps_its_steps(tmp_path: Path, index: str, script: Path) -> None:
    tested: list[str] = []
    fake = fake_prober(split_at("1.3.0"), tested)

    def prober(trial):
        if len(tested) == 3:
            raise KeyboardInterrupt
        return fake(trial)

    args = [*BISECT_WHOLE_RANGE, "--pin", "torch==2.13.0", "--script", str(script)]
    args += ["--out", str(tmp_path / "out")]
    assert cli.main(args, prober=prober) == 130
    data = json.loads((tmp_path / "out" / "tiny-pkg-1.0.0-2.0.0" / "bisect.json").read_text())
    assert data["status"] == "interrupted"
    assert [s["version"] for s in data["steps"]] == tested


def test_pre_releases_on_request(tmp_path: Path, index: str, script: Path) -> None:
    truth = {v: ProbeOutcome.GOOD for v in [*RELEASES, "2.0.0rc1"]}
    truth["2.0.0"] = ProbeOutcome.BAD
    prober = fake_prober(truth, [])
    record, code = run_hunt(
        BISECT, options(tmp_path, script, "1.6.0", "2.0.0", pre=True), prober, Voice(say=print)
    )
    assert record.candidates == ["1.6.0", "2.0.0rc1", "2.0.0"]
    assert (code, record.first_bad, record.last_good) == (0, "2.0.0", "2.0.0rc1")


def test_a_wheelhouse_is_the_only_source(tmp_path: Path, index: str, script: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("1.0.0", "1.2.0", "1.5.0"):  # fewer releases than the index has
        (wheels / f"tiny_pkg-{version}-py3-none-any.whl").write_bytes(b"")
    truth = {"1.0.0": ProbeOutcome.GOOD, "1.2.0": ProbeOutcome.BAD, "1.5.0": ProbeOutcome.BAD}
    indexes: list = []
    fake = fake_prober(truth, [])

    def prober(trial):
        indexes.append(trial.index)
        return fake(trial)

    record, code = run_hunt(
        BISECT,
        options(tmp_path, script, "1.0.0", "1.5.0", wheelhouse=wheels),
        prober,
        Voice(say=print),
    )
    assert record.candidates == ["1.0.0", "1.2.0", "1.5.0"]
    assert (code, record.first_bad) == (0, "1.2.0")
    assert all(i.no_index and i.find_links == (str(wheels),) for i in indexes)
    assert record.command.endswith("--wheelhouse wheels"), record.command
    assert str(tmp_path) not in record.command


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--package", "no-such-pkg", "--good", "1.0.0", "--bad", "2.0.0"], "unknown package"),
        (["--package", PACKAGE, "--good", "1.0.0", "--bad", "9.9.9"], "9.9.9: not a release"),
        (["--package", PACKAGE, "--good", "1.0.0", "--bad", "1.0"], "are the same version"),
        (["--package", PACKAGE, "--good", "one", "--bad", "2.0.0"], "--good 'one': not a version"),
        (
            ["--package", PACKAGE, "--good", "1.0.0", "--bad", "2.0.0", "--pin", "tiny-pkg==1.0.0"],
            "package being bisected",
        ),
        (
            ["--package", PACKAGE, "--good", "1.0.0", "--bad", "2.0.0", "--wheelhouse", "nowhere"],
            "--wheelhouse nowhere: no such folder",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    index: str, script: Path, capsys: pytest.CaptureFixture, args: list[str], message: str
) -> None:
    code = cli.main(["bisect", *args, "--script", str(script)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and err.startswith("repromatrix: error: ")


def test_a_missing_script_exits_2(index: str, capsys: pytest.CaptureFixture) -> None:
    code = cli.main([*BISECT_WHOLE_RANGE, "--script", "missing.py"])
    assert code == 2
    assert "--script missing.py: no such file" in capsys.readouterr().err


def test_check_bad_input_stops_git_bisect(
    capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git bisect run marks 1..127 (but 125) bad; 128 makes it stop.
    monkeypatch.chdir(tmp_path)  # no matrix.yaml whose defaults: would pin a package
    assert cli.main(["check", "--script", "missing.py", "--pin", "torch==2.13.0"]) == 128
    assert "no such file" in capsys.readouterr().err
    assert cli.main(["check", "--script", __file__]) == 128
    assert "--pin" in capsys.readouterr().err
    future = ["check", "--script", __file__, "--pin", "torch==2.13.0", "--as-of", "2099-12-31"]
    assert cli.main(future) == 128
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--as-of 2099-12-31: a date in the future" in err


def test_a_date_before_the_package_existed_is_one_warning(
    tmp_path: Path, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--as-of 1970-01-01: the bisect runs, after one line saying the date is before
    the package's first release (its upload time from a PEP 691 index)."""
    from io import StringIO

    from rich.console import Console

    page = tmp_path / "json" / PACKAGE
    page.mkdir(parents=True)
    files = [
        {
            "filename": f"tiny_pkg-{v}-py3-none-any.whl",
            "url": "x",
            "hashes": {},
            "upload-time": f"2021-0{i + 1}-01T00:00:00Z",
        }
        for i, v in enumerate(RELEASES)
    ]
    (page / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "files": files}))
    only_index(monkeypatch, tmp_path / "json")
    truth = split_at("1.3.0")
    prober = fake_prober(truth, [])
    shown = StringIO()
    run_hunt(
        BISECT,
        options(tmp_path, script, "1.0.0", "2.0.0", as_of="1970-01-01"),
        prober,
        Voice(say=lambda _line: None, console=Console(file=shown, width=300)),
    )
    first = shown.getvalue().splitlines()[0]
    assert first == (
        "warning: --as-of 1970-01-01 is before tiny-pkg's first release (uploaded "
        "2021-01-01): the rest of the stack is older than any tiny-pkg"
    )


# --------------------------------------------------------------------------- report text


def record(**kw) -> BisectRecord:
    base = dict(
        package="transformers",
        good="4.52.4",
        bad="4.54.0",
        find="first-bad",
        status="found",
        first_bad="4.53.0",
        last_good="4.52.4",
        candidates=["4.52.4", "4.53.0", "4.53.1", "4.54.0"],
        steps=[StepRecord(version="4.52.4", outcome="good", seconds=1.0)] * 6,
        seconds=130,
        probe={"script": "repro.py"},
        command="nox -s bisect -- ...",
    )
    base.update(kw)
    return BisectRecord(**base)


def test_verdict_lines() -> None:
    assert verdict_line(record()) == (
        "first bad: transformers 4.53.0 (last good: 4.52.4), 6 steps, 2m10s"
    )
    inconclusive = record(
        status="inconclusive",
        first_bad=None,
        last_good=None,
        could_be_first=["4.53.0", "4.53.1"],
        reason="could not test 4.53.0",
    )
    assert verdict_line(inconclusive).startswith(
        "could not conclude: first bad is one of 4.53.0, 4.53.1 (could not test 4.53.0)"
    )
    assert [duration(s) for s in (5, 65, 3720)] == ["5s", "1m05s", "1h02m"]


def test_github_links_when_the_metadata_names_a_repository() -> None:
    assert (
        github_repository(
            ["https://huggingface.co", "https://github.com/huggingface/transformers.git"]
        )
        == "https://github.com/huggingface/transformers"
    )
    assert github_repository(["https://gitlab.com/a/b"]) is None
    text = markdown(record(repository="https://github.com/huggingface/transformers"))
    assert "https://github.com/huggingface/transformers/releases/tag/v4.53.0" in text
    assert "https://github.com/huggingface/transformers/compare/v4.52.4...v4.53.0" in text
    assert "releases/tag" not in markdown(record())


def test_jobs_two_finds_the_same_release_in_fewer_rounds(
    tmp_path: Path, index: str, script: Path
) -> None:
    tested: list[str] = []
    prober = fake_prober(split_at("1.3.0"), tested)
    one, _ = run_hunt(
        BISECT,
        options(tmp_path / "one", script, "1.0.0", "2.0.0"),
        prober,
        Voice(say=lambda _: None),
    )
    tested.clear()
    two, code = run_hunt(
        BISECT,
        options(tmp_path / "two", script, "1.0.0", "2.0.0", jobs=2),
        prober,
        Voice(say=lambda _: None),
    )
    assert code == 0 and (two.first_bad, two.last_good) == (one.first_bad, one.last_good)
    assert two.jobs == 2 and two.rounds < one.rounds
    assert two.rounds <= 2 + 2  # ceil(log3(9)) + 2
    assert sorted({s.round for s in two.steps}) == list(range(1, two.rounds + 1))
    assert "--jobs 2" in two.command
    text = tmp_path / "two" / "reports" / "bisect" / "tiny-pkg-1.0.0-2.0.0" / "bisect.md"
    assert f"in {two.rounds} rounds (2 candidates at a time)" in text.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "0"], "--jobs 0: must be at least 1"),
        (["--as-of", "2024-13-45"], "--as-of '2024-13-45': not a date"),
        (["--as-of", "peft"], "--as-of peft: peft has no exact pin"),
        (["--as-of", "2099-12-31"], "--as-of 2099-12-31: a date in the future"),
    ],
)
def test_bad_jobs_and_as_of_exit_2_with_one_line(
    index: str, script: Path, capsys: pytest.CaptureFixture, args: list[str], message: str
) -> None:
    code = cli.main([*BISECT_WHOLE_RANGE, *args, "--script", str(script)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("count", "listed", "expected"),
    [
        (2, ["GPU 0: H100", "GPU 1: H100"], ["0", "1"]),  # one GPU each
        (2, ["GPU 0: a", "GPU 1: b", "GPU 2: c", "GPU 3: d"], ["0,2", "1,3"]),
        (3, ["GPU 0: a", "GPU 1: b"], ["0", "1", "0"]),  # more probes than GPUs: turns
        (2, [], [None, None]),  # a CPU host: what the process sees
    ],
)
def test_parallel_probes_each_get_their_own_gpus(count, listed, expected, monkeypatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert probe_devices(count, listed) == expected


def test_a_probes_gpus_reach_its_script(tmp_path: Path) -> None:
    """The CUDA_VISIBLE_DEVICES a round gives a probe is what its script sees."""
    from repromatrix.environment import IndexSettings
    from repromatrix.probe.check import _run_script
    from repromatrix.probe.spec import Trial

    script = tmp_path / "probe.py"
    script.write_text(
        "import os, sys\nsys.exit(0 if os.environ['CUDA_VISIBLE_DEVICES'] == '1,3' else 1)\n"
    )
    options = Trial(Probe(script=script), CellSpec(), IndexSettings(), tmp_path, devices="1,3")

    class Cell:  # the host's interpreter stands in for a built cell
        python = Path(sys.executable)

        def subprocess_env(self, extra=()):
            return {**os.environ, **dict(extra)}

    outcome, detail, _ = _run_script(Cell(), Probe(script=script), str, options.probe_env())
    assert (outcome.value, detail) == ("good", "exit 0")


def test_candidates_the_date_cap_refused_are_named_with_the_way_out(
    tmp_path: Path, index: str, script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidates before 1.5.0 do not install because --as-of capped huggingface-hub
    at their day: the verdict is followed by one line naming that cap and the command
    for today's stack, and bisect.md says the same."""
    monkeypatch.chdir(tmp_path)  # no noxfile here: the command is repromatrix's own

    def prober(trial):
        version = trial.cell.pins[-1].spec
        assert trial.cell.as_of == PACKAGE, "bisect's default: the stack of each release's day"
        if Version(version) < Version("1.5.0"):
            cap = DateCap(as_of=PACKAGE, date="2025-04-24", packages=("huggingface-hub",))
            return Observation(
                ProbeOutcome.SKIP,
                "install-error: resolve: only huggingface-hub<=0.30.2 is available",
                0.5,
                failure=InstallFailure("resolve", "only huggingface-hub<=0.30.2", cap),
            )
        cell = BuiltCell(identity="f" * 16, resolved={PACKAGE: version})
        return Observation(ProbeOutcome.BAD, "exit 1", 1.0, cell)

    lines: list[str] = []
    record, code = run_hunt(
        BISECT,
        options(tmp_path, script, "1.0.0", "2.0.0", as_of=PACKAGE),
        prober,
        Voice(say=lines.append),
    )
    assert code == 1 and record.status != "found"
    rerun = (
        "repromatrix bisect --package tiny-pkg --good 1.0.0 --bad 2.0.0 --pin torch==2.13.0 "
        "--script repro.py --as-of none"
    )
    assert lines[0] == record.verdict
    refused = [s.version for s in record.steps if s.outcome == "skip"]
    assert lines[1] == (
        f"{len(refused)} candidate{'s' if len(refused) != 1 else ''} did not install: the "
        "--as-of date cap on huggingface-hub refused what a pin needs; for today's stack "
        f"run: {rerun}"
    )
    data = json.loads((tmp_path / "reports/bisect/tiny-pkg-1.0.0-2.0.0/bisect.json").read_text())
    assert data["as_of"]["refused"]["candidates"] == refused
    text = (tmp_path / "reports/bisect/tiny-pkg-1.0.0-2.0.0/bisect.md").read_text()
    assert f"- **date cap**: {len(refused)} candidate" in text and f"`{rerun}`" in text
    # The command that reruns this bisect leaves the default --as-of out.
    assert "--as-of" not in data["command"]


def test_the_console_says_a_yanked_release_is_skipped_and_a_long_error_once(
    tmp_path: Path, index: str, script: Path
) -> None:
    from rich.console import Console

    error = "exit 1: RuntimeError: Trying to backward through the graph a second time " + "x" * 250
    truth = split_at("1.3.0")

    def prober(trial):
        outcome = truth[trial.cell.pins[-1].spec]
        detail = "exit 0" if outcome is ProbeOutcome.GOOD else error
        return Observation(outcome, detail, 1.0, BuiltCell(identity="f" * 16))

    shown = Console(record=True, width=80, soft_wrap=True, file=open(os.devnull, "w"))  # noqa: SIM115
    record, _ = run_hunt(
        BISECT, options(tmp_path, script, "1.0.0", "2.0.0"), prober, Voice(console=shown)
    )
    text = shown.export_text()
    assert "skipping yanked tiny-pkg 1.4.1 (PEP 592: not a candidate)" in text
    bad_lines = [line for line in text.splitlines() if ": bad (" in line]
    assert len(bad_lines) >= 2
    assert error[:100] in bad_lines[0] and len(bad_lines[0]) < 240  # cut, on one line
    assert all("the same as 2.0.0" in line for line in bad_lines[1:])
    assert all(s.detail == error for s in record.steps if s.outcome == "bad")


def test_the_record_says_which_source_and_when_it_moved_during_the_hunt(
    tmp_path: Path, index: str, script: Path
) -> None:
    """A folder pin's tree (commit, dirty, digest) is in bisect.json and bisect.md; an
    edit while the bisect runs is said, as the answer then mixes two trees."""
    truth = {v: ProbeOutcome.GOOD if Version(v) < Version("1.3.0") else ProbeOutcome.BAD
             for v in RELEASES}  # fmt: skip
    tested: list[str] = []
    fake = fake_prober(truth, tested)
    tree = {"path": ".", "commit": "abc1234" + "0" * 33, "dirty": False}

    def prober(trial):
        seen = fake(trial)
        edited = len(tested) > 3  # the user saves a file after the third probe
        digest = "sha256:" + ("b" if edited else "a") * 64
        sources = {"mylib": {**tree, "digest": digest, "dirty": edited}}
        return Observation(seen.outcome, seen.detail, 1.0, replace(seen.cell, sources=sources))

    run_hunt(BISECT, options(tmp_path, script, "1.0.0", "2.0.0"), prober, Voice(say=print))
    folder = tmp_path / "reports" / "bisect" / "tiny-pkg-1.0.0-2.0.0"
    data = json.loads((folder / "bisect.json").read_text())
    assert data["sources"]["mylib"]["digest"] == "sha256:" + "a" * 64
    assert data["sources_changed"] == ["mylib abc1234 -> abc1234 + edits"]
    text = (folder / "bisect.md").read_text()
    assert "- your source: `mylib . abc1234, sha256:aaaaaaaaaaaa`" in text
    assert "**your source changed during this hunt** (mylib abc1234 -> abc1234 + edits)" in text
