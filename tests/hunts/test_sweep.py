"""The pure parts of a sweep: which releases are tested, how outcomes collapse into
ranges and transitions, when a range is non-monotone, and what a reproducer says."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from repromatrix.hunts.sweep.report import (
    SweepRecord,
    markdown,
    portable_index,
    reproducer,
    summary_line,
)
from repromatrix.hunts.sweep.reproducer import cpu_torch
from repromatrix.search.ranges import (
    Releases,
    collapse,
    is_monotone,
    select,
    transitions,
)

VERSIONS = [
    Version(v)
    for v in ["4.50.0", "4.50.3", "4.51.0", "4.51.1", "4.51.3", "4.57.6", "5.0.0", "5.2.0"]
]


@pytest.mark.parametrize(
    ("releases", "expected"),
    [
        (Releases.ALL, [str(v) for v in VERSIONS]),
        (Releases.LATEST_PATCH, ["4.50.3", "4.51.3", "4.57.6", "5.0.0", "5.2.0"]),
        (
            Releases.FIRST_AND_LAST_PATCH,
            ["4.50.0", "4.50.3", "4.51.0", "4.51.3", "4.57.6", "5.0.0", "5.2.0"],
        ),
    ],
)
def test_release_selection(releases: Releases, expected: list[str]) -> None:
    assert [str(v) for v in select(list(reversed(VERSIONS)), releases)] == expected


def test_latest_patch_orders_by_pep440_not_text() -> None:
    versions = [Version(v) for v in ["1.9.0", "1.10.0", "1.10.2", "1.10.10", "2025.11.3"]]
    assert [str(v) for v in select(versions, Releases.LATEST_PATCH)] == [
        "1.9.0",
        "1.10.10",
        "2025.11.3",
    ]


def outcomes(text: str) -> list[tuple[str, str]]:
    """'1.0 good, 1.1 bad' -> [("1.0", "good"), ("1.1", "bad")]."""
    return [tuple(part.split()) for part in text.split(", ")]  # type: ignore[misc]


def test_one_flip_collapses_into_two_ranges() -> None:
    results = outcomes("4.50.3 bad, 4.51.3 bad, 4.57.6 bad, 5.0.0 good, 5.2.0 good")
    assert " · ".join(r.text() for r in collapse(results)) == "4.50.3–4.57.6 bad · 5.0.0–5.2.0 good"
    found = transitions(results)
    assert [t.text() for t in found] == ["bad → good between 4.57.6 and 5.0.0"]
    assert is_monotone(found)


def test_skips_interrupt_ranges_and_widen_a_transition() -> None:
    results = outcomes("1.0 good, 1.1 skip, 1.2 skip, 1.3 bad, 1.4 bad")
    assert [r.text() for r in collapse(results)] == ["1.0 good", "1.1–1.2 skip", "1.3–1.4 bad"]
    (flip,) = transitions(results)
    assert (flip.before, flip.after, flip.between) == ("1.0", "1.3", ["1.1", "1.2"])
    # A skip between two releases of one outcome is not a transition.
    assert transitions(outcomes("1.0 bad, 1.1 skip, 1.2 bad")) == []


def test_more_than_one_flip_is_non_monotone() -> None:
    results = outcomes("1.0 good, 1.1 bad, 1.2 good, 1.3 bad")
    found = transitions(results)
    assert [(t.before, t.after) for t in found] == [("1.0", "1.1"), ("1.1", "1.2"), ("1.2", "1.3")]
    assert not is_monotone(found)
    record = SweepRecord(
        package="tiny-pkg",
        **{"from": "1.0"},
        to="1.3",
        results=[],
        ranges=collapse(results),
        transitions=found,
        monotone=False,
        status="done",
    )
    text = markdown(record)
    assert "**Non-monotone:** the outcome flips 3 times" in text
    assert "NON-MONOTONE" in summary_line(record)
    assert "1.0 good · 1.1 bad · 1.2 good · 1.3 bad" in text


@given(st.lists(st.sampled_from(["good", "bad", "skip"]), max_size=30))
def test_ranges_cover_every_result_once_and_flips_match(sequence: list[str]) -> None:
    results = [(f"1.{i}", outcome) for i, outcome in enumerate(sequence)]
    ranges = collapse(results)
    assert sum(r.count for r in ranges) == len(results)
    assert all(a.outcome != b.outcome for a, b in itertools.pairwise(ranges))
    tested = [o for o in sequence if o != "skip"]
    flips = sum(a != b for a, b in itertools.pairwise(tested))
    assert len(transitions(results)) == flips


def test_portable_index_strips_credentials_and_local_paths() -> None:
    settings, notes = portable_index(
        [
            ("index", "https://alice:s3cret-token@mirror.example/simple/"),
            ("index", "file:///home/someone/simple"),
            ("find-links", "/srv/wheelhouse"),
            ("find-links", "https://download.example/whl/cpu"),
        ]
    )
    assert settings == {
        "index_url": "https://mirror.example/simple/",
        "find_links": ["https://download.example/whl/cpu"],
    }
    assert "alice" not in str(settings) and "s3cret" not in str(settings)
    assert len(notes) == 2 and all("/home/someone" not in n and "/srv" not in n for n in notes)
    # PyPI is uv's default: nothing to say.
    assert portable_index([("index", "https://pypi.org/simple/")]) == ({}, [])


def test_reproducer_is_a_pep723_script_with_exact_pins() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    body = "# /// script\n# dependencies = ['old']\n# ///\nimport tiny_pkg\nprint(1)\n"
    text = reproducer(
        requirements=["tiny-pkg==1.3.0", "torch==2.13.0"],
        index={"index_url": "https://mirror.example/simple/", "extra_index_urls": ["https://x/"]},
        body=body,
        python="3.12",
        exclude_newer={"peft": "2024-11-18T22:12:57Z", "accelerate": "2024-11-18T22:12:57Z"},
        header="tiny-pkg 1.3.0 was bad\n",
    )
    block = text.split("# /// script\n", 1)[1].split("# ///\n", 1)[0]
    metadata = tomllib.loads("\n".join(line[2:] for line in block.splitlines()))
    assert metadata["dependencies"] == ["tiny-pkg==1.3.0", "torch==2.13.0"]
    assert metadata["requires-python"] == ">=3.12"
    assert metadata["tool"]["uv"] == {
        "index-url": "https://mirror.example/simple/",
        "extra-index-url": ["https://x/"],
        # The stack that travelled, per package: a global cutoff would cut off what
        # exact pins (torch 2.13.0) need today.
        "exclude-newer-package": {
            "peft": "2024-11-18T22:12:57Z",
            "accelerate": "2024-11-18T22:12:57Z",
        },
    }
    assert text.count("# /// script") == 1, "the script's own block is replaced"
    assert text.endswith("import tiny_pkg\nprint(1)\n")
    assert "# tiny-pkg 1.3.0 was bad\n" in text


def test_a_cpu_run_takes_torch_from_the_pytorch_cpu_index() -> None:
    # A +cpu build, or a host without a GPU: torch and its siblings the run installed.
    assert cpu_torch({"torch": "2.13.0+cpu", "numpy": "2.4.6"}, on_cpu=False) == {
        "torch": "2.13.0+cpu"
    }
    resolved = {"torch": "2.13.0", "torchvision": "0.28.0", "peft": "0.17.0"}
    assert cpu_torch(resolved, on_cpu=True) == {"torch": "2.13.0", "torchvision": "0.28.0"}
    # A CUDA run keeps PyPI's build; a run without torch has nothing to say.
    assert cpu_torch(resolved, on_cpu=False) == {}
    assert cpu_torch({"peft": "0.17.0"}, on_cpu=True) == {}


def cpu_reproducer() -> str:
    return reproducer(
        requirements=["tiny-pkg==1.3.0", "torch==2.13.0+cpu"],
        index={},
        body="import torch\n",
        python="3.11",
        exclude_newer={"peft": "2024-11-18T22:12:57Z"},
        cpu_packages=("torch",),
    )


def test_the_cpu_index_is_an_explicit_source_of_torch_alone() -> None:
    tomllib = pytest.importorskip("tomllib")
    text = cpu_reproducer()
    block = text.split("# /// script\n", 1)[1].split("# ///\n", 1)[0]
    metadata = tomllib.loads("\n".join(line[2:] for line in block.splitlines()))
    uv = metadata["tool"]["uv"]
    assert uv["index"] == [
        {"name": "pytorch-cpu", "url": "https://download.pytorch.org/whl/cpu", "explicit": True}
    ]
    assert uv["sources"] == {"torch": {"index": "pytorch-cpu"}}
    assert uv["exclude-newer-package"] == {"peft": "2024-11-18T22:12:57Z"}


def test_uv_accepts_the_cpu_reproducers_metadata_offline(tmp_path: Path) -> None:
    """What can be checked without download.pytorch.org (not reachable here): uv reads
    the script block, its index and the source that names it (``uv lock --script
    --offline`` parses and checks them before resolving), and stops only at the
    network. A malformed table or a source naming an undeclared index fails earlier."""
    uv = Path(sys.executable).with_name("uv")
    script = tmp_path / "reproduce-1.3.0.py"
    script.write_text(cpu_reproducer())
    done = subprocess.run(
        [str(uv), "lock", "--script", str(script), "--offline"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "network was disabled" in done.stderr, done.stderr
    broken = tmp_path / "broken.py"
    broken.write_text(cpu_reproducer().replace('index = "pytorch-cpu"', 'index = "nope"'))
    done = subprocess.run(
        [str(uv), "lock", "--script", str(broken), "--offline"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "undeclared index" in done.stderr, "the check above could fail"


def test_a_cpu_sweeps_reproducer_pins_torch_to_the_cpu_index_and_caps_the_projects_stack(
    tmp_path: Path,
) -> None:
    """torch came in unpinned (peft needs it) as a +cpu build: the reproducer makes it a
    direct requirement (only those take a uv source), from the CPU index; a range pin
    that did not resolve stays a requirement; exclude-newer-package lists the travelled
    packages the run installed."""
    from packaging.version import Version as V

    from repromatrix.environment import IndexSettings
    from repromatrix.hunts.sweep import options as sweep_options
    from repromatrix.hunts.sweep import reproducer as sweep_reproducer
    from repromatrix.hunts.sweep.report import ResultRecord, SweepRecord
    from repromatrix.matrix.cell import CellSpec
    from repromatrix.matrix.pins import parse_pin_option
    from repromatrix.probe.spec import Probe

    probe = tmp_path / "probe.py"
    probe.write_text("import peft\n")
    options = sweep_options.SweepOptions(
        package="peft",
        start="0.13.0",
        end="0.17.1",
        probe=Probe(script=probe),
        cell=CellSpec(pins=(parse_pin_option("accelerate>=1.0"),)),
    )
    checked = sweep_options.Plan(
        package="peft", low=V("0.13.0"), high=V("0.17.1"), listing=None, candidates=[],
        index=IndexSettings(), probe=Probe(script=probe), folder=tmp_path, options=options,
    )  # fmt: skip
    result = ResultRecord(
        version="0.13.0",
        outcome="bad",
        seconds=1.0,
        resolved={"peft": "0.13.0", "torch": "2.13.0+cpu", "datasets": "3.0.0"},
        as_of={"date": "2024-09-25", "packages": ["datasets", "deepspeed"]},
    )
    record = SweepRecord(package="peft", **{"from": "0.13.0"}, to="0.17.1", python="3.11")
    text = sweep_reproducer.reproducer_for(result, record, checked, options, "import peft\n")
    tomllib = pytest.importorskip("tomllib")
    block = text.split("# /// script\n", 1)[1].split("# ///\n", 1)[0]
    metadata = tomllib.loads("\n".join(line[2:] for line in block.splitlines()))
    assert metadata["dependencies"] == ["peft==0.13.0", "accelerate>=1.0", "torch==2.13.0+cpu"]
    assert metadata["tool"]["uv"]["sources"] == {"torch": {"index": "pytorch-cpu"}}
    assert metadata["tool"]["uv"]["exclude-newer-package"] == {"datasets": "2024-09-25"}
    assert "# torch 2.13.0+cpu: the CPU build, as the sweep ran" in text


HELPER = "def answer():\n    return 41\n"
CASES = {
    "helpers/__init__.py": "",
    "helpers/numbers.py": "from helpers import __name__ as _pkg\n\nTWO = 2\n",
    "tiny.py": HELPER,
    "conftest.py": "import pytest\n\n\n@pytest.fixture\ndef offset():\n    return 1\n",
    "pytest.ini": "[pytest]\nmarkers =\n    slow: a label\n",
    "unrelated.py": "raise SystemExit('never carried')\n",
    "deep/test_answer.py": (
        "import pytest\nfrom tiny import answer\nfrom helpers.numbers import TWO\n\n\n"
        "@pytest.mark.parametrize('mode', ['default', 'reentrant'])\n"
        "def test_answer(offset, mode):\n    assert answer() + offset == 42 * TWO // 2\n\n\n"
        '@pytest.mark.requires("not-installed-anywhere>=1")\n'
        "def test_needs_more():\n    pass\n\n\n"
        "def test_wrong():\n    assert answer() == 42\n"
    ),
}


@pytest.fixture
def cases_root(tmp_path: Path) -> Path:
    root = tmp_path / "project" / "cases"
    for name, text in CASES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_case_reproducer_carries_the_case_and_what_it_imports(cases_root: Path) -> None:
    from repromatrix.hunts.sweep.reproducer import case_files

    assert case_files("deep/test_answer.py::test_answer[default]", cases_root) == [
        "deep/test_answer.py", "pytest.ini", "conftest.py", "tiny.py",
        "helpers/__init__.py", "helpers/numbers.py",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("deep/test_answer.py::test_answer[reentrant]", 0),
        ("deep/test_answer.py::test_wrong", 1),
        ("deep/test_answer.py::test_needs_more", 125),
    ],
)
def test_a_case_reproducer_runs_from_any_folder_with_the_real_outcome(
    cases_root: Path, tmp_path: Path, case: str, code: int
) -> None:
    from repromatrix.hunts.sweep.reproducer import standalone_case

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = elsewhere / "reproduce-1.0.py"
    script.write_text(standalone_case(case, cases_root))
    done = subprocess.run([sys.executable, str(script)], cwd=elsewhere, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == code, done.stdout + done.stderr
    if code == 125:
        assert "not-installed-anywhere" in done.stdout  # the skip's reason, shown


@pytest.mark.e2e
def test_uv_runs_a_case_reproducer_with_pytest_from_its_own_block(
    cases_root: Path, tmp_path: Path
) -> None:
    from repromatrix.hunts.sweep.report import reproducer
    from repromatrix.hunts.sweep.reproducer import standalone_case

    script = tmp_path / "reproduce-1.0.py"
    body = standalone_case("deep/test_answer.py::test_wrong", cases_root)
    script.write_text(reproducer(requirements=["pytest>=8"], index={}, body=body))
    uv = Path(sys.executable).with_name("uv")
    done = subprocess.run([str(uv), "run", "--no-project", str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "assert 41 == 42" in done.stdout


@pytest.mark.e2e
def test_a_reproducer_of_a_folder_pin_runs_from_another_folder(tmp_path: Path) -> None:
    """--pin mylib=. in a sweep: the reproducer names mylib's folder by its absolute path
    (a uv path source) and says how to point it elsewhere, so a copy of the script run
    from yet another folder builds the package, not a PyPI name (a relative path read
    from the copy's folder named "/": "does not appear to be a Python project")."""
    from packaging.version import Version as V

    from repromatrix.environment import IndexSettings
    from repromatrix.hunts.sweep import options as sweep_options
    from repromatrix.hunts.sweep import reproducer as sweep_reproducer
    from repromatrix.hunts.sweep.report import ResultRecord, SweepRecord
    from repromatrix.matrix.cell import CellSpec
    from repromatrix.matrix.pins import parse_pin_option
    from repromatrix.probe.candidates import Listing
    from repromatrix.probe.spec import Probe

    project = tmp_path / "mylib"
    (project / "src" / "mylib").mkdir(parents=True)
    (project / "src" / "mylib" / "__init__.py").write_text("ANSWER = 41\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "mylib"\nversion = "0.0.1"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    )
    folder = project / "reports" / "sweep" / "six-1.15.0-1.16.0"
    folder.mkdir(parents=True)
    probe = tmp_path / "probe.py"
    probe.write_text("import sys, mylib\nsys.exit(0 if mylib.ANSWER == 42 else 1)\n")
    back = os.getcwd()  # the test process's own: every later test in this worker runs there
    os.chdir(project)
    try:
        pin = parse_pin_option("mylib=.")
    finally:
        os.chdir(back)
    options = sweep_options.SweepOptions(
        package="six",
        start="1.15.0",
        end="1.16.0",
        probe=Probe(script=probe),
        cell=CellSpec(pins=(pin,)),
    )
    checked = sweep_options.Plan(
        package="six",
        listing=Listing(package="six", releases={}, sources=[]),
        candidates=[],
        index=IndexSettings(),
        probe=Probe(script=probe),
        folder=folder,
        low=V("1.15.0"),
        high=V("1.16.0"),
        options=options,
    )
    result = ResultRecord(version="1.16.0", outcome="bad", seconds=1.0,
                          resolved={"six": "1.16.0", "mylib": "0.0.1"})  # fmt: skip
    record = SweepRecord(package="six", **{"from": "1.15.0"}, to="1.16.0")
    record.sources = {"mylib": {"path": ".", "digest": "sha256:" + "1" * 64,
                                "commit": "abcdef1" + "0" * 33, "dirty": True}}  # fmt: skip
    text = sweep_reproducer.reproducer_for(result, record, checked, options, probe.read_text())
    assert f'# mylib = {{ path = "{project.as_posix()}" }}' in text
    assert f"# mylib: built from {project.as_posix()}, as it is when you run this " in text
    assert "(the sweep tested abcdef1 + edits)." in text
    assert "# Elsewhere: set mylib's path under [tool.uv.sources] above to your copy" in text
    elsewhere = tmp_path / "attached" / "to" / "an" / "issue"
    elsewhere.mkdir(parents=True)
    script = elsewhere / "reproduce-1.16.0.py"
    script.write_text(text)
    third = tmp_path / "third"
    third.mkdir()
    uv = Path(sys.executable).with_name("uv")
    done = subprocess.run([str(uv), "run", "--no-project", str(script)], cwd=third,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # 41: bad, as the sweep saw


def test_a_package_with_its_own_index_keeps_it_in_the_reproducer() -> None:
    tomllib = pytest.importorskip("tomllib")
    text = reproducer(
        requirements=["tiny-pkg==1.3.0", "torch==2.13.0+cpu", "other==1.0"],
        index={},
        body="import torch\n",
        cpu_packages=("torch",),
        package_indexes={"other": "https://mirror.example/other/simple"},
    )
    block = text.split("# /// script\n", 1)[1].split("# ///\n", 1)[0]
    uv = tomllib.loads("\n".join(line[2:] for line in block.splitlines()))["tool"]["uv"]
    assert {i["name"]: (i["url"], i["explicit"]) for i in uv["index"]} == {
        "pytorch-cpu": ("https://download.pytorch.org/whl/cpu", True),
        "other-index": ("https://mirror.example/other/simple", True),
    }
    assert uv["sources"] == {"torch": {"index": "pytorch-cpu"}, "other": {"index": "other-index"}}
