"""A whole sweep with real environments: a find-links folder of tiny pure-Python
wheels (built here), uv environments, a --script probe, two at a time; then the
report folder, the reproducers (run with ``uv run``) and the command line's errors."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.wheels import pure_wheel

from repromatrix import cli
from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.hunt import Voice, run_hunt
from repromatrix.hunts.sweep.run import SWEEP, Releases, SweepOptions, sweep_hunt
from repromatrix.matrix.cell import CellSpec
from repromatrix.probe.observation import BuiltCell, DateCap, InstallFailure, Observation
from repromatrix.probe.prober import CellProber
from repromatrix.probe.spec import Probe
from repromatrix.search.bisection import ProbeOutcome

PACKAGE = "repromatrix-sweep-fake"
MODULE = "repromatrix_sweep_fake"
# version -> does it have the bug? Broken in 1.1.x, fixed in 1.2.0, broken again in 2.0.
BROKEN = {
    "1.0.0": False,
    "1.1.0": True,
    "1.1.1": True,
    "1.2.0": False,
    "1.2.1": False,
    "2.0.0": True,
}
PROBE = f"""\
import {MODULE}

if {MODULE}.BROKEN:
    raise RuntimeError("sum is " + str({MODULE}.total([1, 2])))
print("ok")
"""


def tiny_wheel(folder: Path, version: str, broken: bool) -> Path:
    """An installable pure-Python wheel of PACKAGE (METADATA, WHEEL, RECORD)."""
    source = (
        f"BROKEN = {broken}\n\n\ndef total(values):\n"
        f"    return sum(values) + {1 if broken else 0}\n"
    )
    return pure_wheel(folder, PACKAGE, version, {f"{MODULE}/__init__.py": source})


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    for version, broken in BROKEN.items():
        tiny_wheel(folder, version, broken)
    return folder


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return path


def index_with(wheels: Path) -> IndexSettings:
    """The machine's own configuration (PyPI or a mirror, for pytest, which every
    environment gets) plus the folder of tiny wheels."""
    return IndexSettings.from_environment().overlaid(find_links=(str(wheels),))


def sweep_here(
    tmp_path: Path, wheels: Path, start: str, end: str, probe: Probe, say=None, github=None, **kw
):
    """The sweep of PACKAGE from START to END over WHEELS, reports under
    tmp_path/reports/sweep, environments in tmp_path/envs; KW: more SweepOptions. SAY
    hears its lines (none by default); GITHUB, where given, is its GitHub client."""
    options = SweepOptions(
        package=PACKAGE,
        start=start,
        end=end,
        probe=probe,
        out=tmp_path / "reports" / "sweep",
        index=index_with(wheels),
        **kw,
    )
    hunt = SWEEP if github is None else sweep_hunt(github)
    voice = Voice(say=say or (lambda _line: None))
    return run_hunt(hunt, options, CellProber(env_dir=tmp_path / "envs"), voice)


def test_a_sweep_finds_every_flip_and_writes_reproducers(
    tmp_path: Path, wheels: Path, probe: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    said: list[str] = []
    record, code = sweep_here(
        tmp_path, wheels, "1.0.0", "2.0.0", Probe(script=probe), jobs=2, say=said.append
    )
    assert code == 0
    folder = tmp_path / "reports" / "sweep" / f"{PACKAGE}-1.0.0-2.0.0"
    data = json.loads((folder / "sweep.json").read_text())
    got = {r["version"]: r["outcome"] for r in data["results"]}
    assert got == {v: "bad" if broken else "good" for v, broken in BROKEN.items()}
    assert [r["version"] for r in data["results"]] == list(BROKEN), "PEP 440 order"
    for result in data["results"]:
        assert {"version", "outcome", "seconds", "message"} <= set(result)
        assert result["installed"] == result["version"], "each release in its own environment"
        if result["outcome"] == "bad":
            assert result["message"].endswith("RuntimeError: sum is 4")
        else:
            assert result["message"] == ""
    assert len({r["environment"] for r in data["results"]}) == len(BROKEN)
    assert data["monotone"] is False
    assert [(t["before"], t["after"]) for t in data["transitions"]] == [
        ("1.0.0", "1.1.0"),
        ("1.1.1", "1.2.0"),
        ("1.2.1", "2.0.0"),
    ]
    summary = "1.0.0 good · 1.1.0–1.1.1 bad · 1.2.0–1.2.1 good · 2.0.0 bad"
    assert said == [record.summary] and summary in record.summary

    text = (folder / "sweep.md").read_text()
    assert summary in text
    assert "**Non-monotone:**" in text
    assert "good → bad between 1.0.0 and 1.1.0" in text
    # No noxfile here: the command is repromatrix's own, and keeps --as-of (none here).
    assert "repromatrix sweep --package repromatrix-sweep-fake --from 1.0.0 --to 2.0.0" in text
    assert "--script probe.py --as-of none --jobs 2" in text
    assert "today's stack (--as-of none)" in text
    for written in (text, json.dumps(data)):
        assert str(tmp_path) not in written

    # A reproducer per bad release, and it reproduces: uv run with the wheels folder.
    assert sorted(data["reproducers"]) == ["1.1.0", "1.1.1", "2.0.0"]
    repro = folder / data["reproducers"]["1.1.0"]
    script = repro.read_text()
    assert f'#   "{PACKAGE}==1.1.0",' in script
    assert str(tmp_path) not in script
    uv = Path(sys.executable).with_name("uv")
    env = {**os.environ, "UV_FIND_LINKS": str(wheels)}
    done = subprocess.run(
        [str(uv), "run", "--quiet", repro.name],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "RuntimeError: sum is 4" in done.stderr


def test_latest_patch_sweeps_the_newest_of_each_series(
    tmp_path: Path, wheels: Path, probe: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # A noxfile with a bisect session (no sweep one): the narrowing bisect names it.
    (tmp_path / "noxfile.py").write_text("import nox\n\n@nox.session\ndef bisect(session): ...\n")
    latest_patch = Releases.LATEST_PATCH
    record, code = sweep_here(  # either order of the ends
        tmp_path, wheels, "2.0.0", "1.0.0", Probe(script=probe), releases=latest_patch
    )
    assert code == 0
    assert record.candidates == ["1.0.0", "1.1.1", "1.2.1", "2.0.0"]
    ranges = [r.text() for r in record.ranges]
    assert ranges == ["1.0.0 good", "1.1.1 bad", "1.2.1 good", "2.0.0 bad"]
    # Releases left out between two tested ones: how many, and the bisect that narrows it.
    first, second, third = record.transitions
    assert (first.untested, second.untested, third.untested) == (1, 1, 0)
    # A noxfile in the working folder: the nox session; the sweep's --as-of kept.
    assert Path("noxfile.py").is_file()
    assert first.bisect == (
        f"nox -s bisect -- --package {PACKAGE} --good 1.0.0 --bad 1.1.1 --script probe.py "
        "--as-of none"
    )
    assert second.bisect == (
        f"nox -s bisect -- --package {PACKAGE} --good 1.2.1 --bad 1.1.1 --find first-good "
        "--script probe.py --as-of none"
    )
    assert third.bisect == ""
    text = (tmp_path / "reports" / "sweep" / f"{PACKAGE}-2.0.0-1.0.0" / "sweep.md").read_text()
    assert "good → bad between 1.0.0 and 1.1.1; 1 release between them not tested" in text
    assert f"(narrow it: `{first.bisect}`)" in text
    assert (tmp_path / "reports" / "sweep" / f"{PACKAGE}-2.0.0-1.0.0" / "sweep.md").exists()


def test_a_case_probe_and_an_unpinned_import(tmp_path: Path, wheels: Path) -> None:
    """A case of cases/ as the probe (its reproducer runs pytest on it); a release whose
    case dies importing a package nobody pinned is untestable, with that message."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_fake.py").write_text(
        f"import {MODULE}\n\n\ndef test_total():\n"
        f"    if {MODULE}.__name__ and {MODULE}.total([1]) == 2:\n"
        "        import some_unpinned_module  # only the broken releases reach this\n"
        f"    assert {MODULE}.total([1, 2]) == 3\n"
    )
    record, code = sweep_here(
        tmp_path,
        wheels,
        "1.1.1",
        "1.2.0",
        Probe(case="test_fake.py::test_total", cases_root=cases),
    )
    assert code == 0
    skipped, good = record.results
    assert (skipped.outcome, good.outcome) == ("skip", "good")
    assert "some-unpinned-module is not pinned" in skipped.message
    assert "No module named 'some_unpinned_module'" in skipped.message
    assert record.reproducers == {}, "no reproducer for a release that could not be tested"


def test_as_of_a_package_nobody_pinned_is_refused_before_anything_runs(
    tmp_path: Path, probe: Path
) -> None:
    with pytest.raises(UserError, match="--as-of accelerate: accelerate has no exact pin"):
        run_hunt(
            SWEEP,
            SweepOptions(
                package=PACKAGE,
                start="1.0.0",
                end="2.0.0",
                probe=Probe(script=probe),
                out=tmp_path / "out",
                cell=CellSpec(as_of="accelerate"),
            ),
            lambda trial: pytest.fail(f"probed {trial.name}"),
        )
    assert not (tmp_path / "out").exists()


def sweep_argv(probe: Path, wheels: Path, out: Path | str, *extra: str) -> list[str]:
    """`sweep` of PACKAGE with PROBE over the WHEELS folder, reports in OUT, then EXTRA."""
    argv = ["sweep", "--package", PACKAGE, "--script", str(probe), "--wheelhouse", str(wheels)]
    return [*argv, "--out", str(out), *extra]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--from", "one", "--to", "2.0.0"], "--from 'one': not a version"),
        (["--from", "3.0", "--to", "4.0"], "no release from 3.0 to 4.0"),
        (["--from", "1.0.0", "--to", "2.0.0", "--jobs", "0"], "--jobs 0: give 1 or more"),
        (
            ["--from", "1.0.0", "--to", "2.0.0", "--pin", f"{PACKAGE}==1.0.0"],
            "being swept; it cannot be pinned too",
        ),
        (
            ["--from", "1.0.0", "--to", "2.0.0", "--as-of", "2099-12-31"],
            "--as-of 2099-12-31: a date in the future",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    wheels: Path,
    probe: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    code = cli.main(sweep_argv(probe, wheels, tmp_path / "out", *extra))
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists(), "nothing runs on bad input"


def test_the_summary_is_posted_on_an_issue(tmp_path: Path, wheels: Path, probe: Path) -> None:
    """--issue hands sweep.md to the GitHub client once the sweep is written."""
    posted: list[tuple[int, Path]] = []

    class Recorder:
        def comment(self, issue: int, body: Path) -> bool:
            posted.append((issue, body))
            return True

    github = Recorder()
    sweep_here(tmp_path, wheels, "1.2.0", "1.2.1", Probe(script=probe), issue=15, github=github)
    (issue, body) = posted[0]
    assert issue == 15 and body.name == "sweep.md"
    assert "1.2.0–1.2.1 good" in body.read_text()


def test_by_default_a_sweep_travels_as_bisect_does_and_names_a_refusing_cap(
    tmp_path: Path,
    wheels: Path,
    probe: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command line's default --as-of is the swept package (bisect's default), the
    stack that travels is the project's matrix.yaml packages:, and releases the date
    cap kept from installing are named with the command for today's stack."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "matrix.yaml").write_text(
        "packages: [torch, huggingface_hub]\ntiers:\n  t:\n    - {id: a, torch: '2.13.0'}\n"
    )
    seen: list = []

    def prober(trial):
        seen.append((trial.cell.as_of, trial.cell.stack))
        if trial.name < "1.2.0":
            cap = DateCap(as_of=PACKAGE, date="2025-04-24", packages=("huggingface-hub",))
            failure = InstallFailure("resolve", "x", cap)
            return Observation(ProbeOutcome.SKIP, "install-error: resolve: x", 0.1, failure=failure)
        cell = BuiltCell(identity="f" * 16, resolved={PACKAGE: trial.name})
        return Observation(ProbeOutcome.GOOD, "exit 0", 0.1, cell)

    argv = sweep_argv(probe, wheels, "out", "--from", "1.0.0", "--to", "1.2.1")
    code = cli.main(argv, prober=prober)
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert {s for s in seen} == {(PACKAGE, ("torch", "huggingface-hub"))}
    rerun = (
        f"repromatrix sweep --package {PACKAGE} --from 1.0.0 --to 1.2.1 --script probe.py "
        "--as-of none --wheelhouse wheels"
    )
    assert out[-1] == (
        "3 releases did not install: the --as-of date cap on huggingface-hub refused what a "
        f"pin needs; for today's stack run: {rerun}"
    )
    folder = tmp_path / "out" / f"{PACKAGE}-1.0.0-1.2.1"
    text = (folder / "sweep.md").read_text()
    assert f"(--as-of {PACKAGE})" in text and f"`{rerun}`" in text
    data = json.loads((folder / "sweep.json").read_text())
    assert data["as_of"] == PACKAGE and "--as-of" not in data["command"]
    assert data["as_of_refused"]["candidates"] == ["1.0.0", "1.1.0", "1.1.1"]


def test_a_sweep_where_nothing_could_be_tested_says_so_and_exits_1(
    tmp_path: Path, wheels: Path, probe: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every release fails to install (a pin no index has): no release said good or
    bad, so the sweep has no answer. Before: exit 0 and a "1.0.0–2.0.0 skip" range."""
    argv = sweep_argv(probe, wheels, tmp_path / "out", "--from", "1.0.0", "--to", "1.1.1")
    argv += ["--pin", "repromatrix-no-such-package==1.0", "--env-dir", str(tmp_path / "envs")]
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 1
    assert "nothing could be tested: all 3 releases were untestable" in out
    folder = tmp_path / "out" / f"{PACKAGE}-1.0.0-1.1.1"
    data = json.loads((folder / "sweep.json").read_text())
    assert [r["outcome"] for r in data["results"]] == ["skip"] * 3
    assert all(r["message"].startswith("install-error") for r in data["results"])
    text = (folder / "sweep.md").read_text()
    assert "**Nothing could be tested: all 3 releases were untestable**" in text
    assert "1.0.0–1.1.1 skip" not in text


SLOW_PROBE = f"""\
import importlib.metadata
import pathlib
import sys
import time

version = importlib.metadata.version({PACKAGE!r})
if version == "1.2.0":
    pathlib.Path(sys.argv[0]).with_name("reached").write_text(version)
    time.sleep(120)
sys.exit(1 if version.startswith("1.1") else 0)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_sweep_says_interrupted_and_how_far(
    tmp_path: Path, wheels: Path, sig: signal.Signals
) -> None:
    """A real sweep process, interrupted while its fourth of six releases runs: sweep.md
    and the summary line say "interrupted after 3 of 6 releases"; they read as a
    complete sweep of 1.0.0–1.1.1 before."""
    script = tmp_path / "probe.py"
    script.write_text(SLOW_PROBE)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[2])}
    env["PIP_FIND_LINKS"] = " ".join(filter(None, [env.get("PIP_FIND_LINKS"), str(wheels)]))
    argv = ["sweep", "--package", PACKAGE, "--from", "1.0.0", "--to", "2.0.0"]
    argv += ["--script", str(script), "--out", str(out), "--env-dir", str(tmp_path / "envs")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "repromatrix", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "reached").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the sweep never reached 1.2.0"
            time.sleep(0.1)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:  # a hang fails the test, and leaves nothing running
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr
    folder = out / f"{PACKAGE}-1.0.0-2.0.0"
    data = json.loads((folder / "sweep.json").read_text())
    assert data["status"] == "interrupted"
    assert [r["version"] for r in data["results"]] == ["1.0.0", "1.1.0", "1.1.1"]
    text = (folder / "sweep.md").read_text()
    assert "**Interrupted after 3 of 6 releases: 1.0.0 good · 1.1.0–1.1.1 bad**" in text
    assert "3 of 6 releases (all)" in text
    assert "interrupted after 3 of 6 releases" in stdout


def test_a_sweep_of_a_folder_pin_names_its_source(
    tmp_path: Path, wheels: Path, probe: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = {"path": ".", "digest": "sha256:" + "9" * 64, "commit": "1234567" + "0" * 33}

    def prober(trial):
        cell = BuiltCell(identity="f" * 16, resolved={PACKAGE: trial.name},
                         sources={"mylib": {**source, "dirty": True}})  # fmt: skip
        return Observation(ProbeOutcome.GOOD, "exit 0", 0.1, cell)

    args = ["sweep", "--package", PACKAGE, "--from", "1.0.0", "--to", "1.1.1"]
    args += ["--script", str(probe), "--wheelhouse", str(wheels), "--out", "out"]
    assert cli.main(args, prober=prober) == 0
    folder = tmp_path / "out" / f"{PACKAGE}-1.0.0-1.1.1"
    data = json.loads((folder / "sweep.json").read_text())
    assert data["sources"] == {"mylib": {**source, "dirty": True}}
    assert data["sources_changed"] == []
    text = (folder / "sweep.md").read_text()
    assert "- your source: `mylib . 1234567 + edits, sha256:999999999999`" in text
    assert "changed during this hunt" not in text
