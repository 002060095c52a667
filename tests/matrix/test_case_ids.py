"""Case ids read statically from a cases folder agree with what pytest collects, and
only a certainly-absent id is refused (case_ids.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repromatrix import cli
from repromatrix.matrix import CaseIndex

SHARED = """\
import pytest

CHECKPOINTING = [
    pytest.param(None, id="default"),
    pytest.param({"use_reentrant": True}, id="reentrant"),
]
PICKED = [CHECKPOINTING[1]]
"""

CASES = """\
import pytest
from shared import CHECKPOINTING, PICKED

FIXES = {"item": 1, "no-grad": 2}
VARIANTS = pytest.mark.parametrize("flag", [True, False], ids=["on", "off"])


def test_plain():
    pass


@pytest.mark.parametrize("mode", CHECKPOINTING)
def test_shared(mode):
    pass


@pytest.mark.parametrize("mode", PICKED)
def test_picked(mode):
    pass


@VARIANTS
def test_named_mark(flag):
    pass


@pytest.mark.parametrize("fix", list(FIXES))
@pytest.mark.parametrize("encoder", ["eager", "compiled"])
def test_stacked(encoder, fix):
    pass


@pytest.mark.parametrize("a,b", [(1, 2), ("x", None)])
def test_pairs(a, b):
    pass


@pytest.mark.parametrize("value", [{"k": 1}, [1]])
def test_objects(value):
    pass


class TestGroup:
    @pytest.mark.parametrize("n", [3, 4])
    def test_method(self, n):
        pass


def _made():
    return ["p", "q"]


@pytest.mark.parametrize("generated", _made())
def test_generated(generated):
    pass
"""


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "shared.py").write_text(SHARED)
    (folder / "test_things.py").write_text(CASES)
    (folder / "pytest.ini").write_text("[pytest]\n")
    return folder


def _collected(folder: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"},
    )
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_listed_ids_are_what_pytest_collects(cases: Path) -> None:
    collected = _collected(cases)
    listed = CaseIndex(cases).ids()
    # Ids made by a call (test_generated) cannot be read: that function is listed
    # without them, everything else exactly as pytest names it.
    assert [i for i in collected if "test_generated" not in i] == [
        i for i in listed if "test_generated" not in i
    ]
    assert "test_things.py::test_generated" in listed
    assert "test_things.py::test_stacked[eager-no-grad]" in collected


@pytest.mark.parametrize(
    ("case_id", "problem"),
    [
        ("test_things.py::test_shared[defualt]", "no parameter id 'defualt'"),
        ("test_things.py::test_picked[default]", "no parameter id 'default'"),
        ("test_thing.py::test_plain", "no such file in cases/"),
        ("test_things.py::test_plan", "defines no 'test_plan'"),
        ("test_things.py::test_plain[x]", "is not parametrized"),
        ("test_things.py::TestGroup::test_other", "has no test 'TestGroup::test_other'"),
        ("test_things.py::TestGroup::test_method[5]", "no parameter id '5'"),
    ],
)
def test_an_absent_case_is_named(cases: Path, case_id: str, problem: str) -> None:
    assert problem in (CaseIndex(cases).problem(case_id) or "")


@pytest.mark.parametrize(
    "case_id",
    [
        "test_things.py",
        ".",
        "test_things.py::test_shared",
        "test_things.py::test_shared[default]",
        "test_things.py::test_stacked[compiled-item]",
        "test_things.py::test_stacked[item-compiled]",  # any order: refuse only the certain
        "test_things.py::test_pairs[x-None]",
        "test_things.py::test_objects[value1]",
        "test_things.py::TestGroup::test_method[3]",
        "test_things.py::test_generated[anything]",  # ids made by a call: accepted
        "-k",
    ],
)
def test_an_existing_or_unreadable_case_is_accepted(cases: Path, case_id: str) -> None:
    assert CaseIndex(cases).problem(case_id) is None


def test_a_parametrized_fixture_makes_every_parameter_possible(cases: Path) -> None:
    (cases / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture(params=['a', 'b'])\ndef letter(request):\n"
        "    return request.param\n"
    )
    assert CaseIndex(cases).problem("test_things.py::test_plain[a]") is None


def test_patterns_of_the_registry(cases: Path) -> None:
    index = CaseIndex(cases)
    assert index.pattern_problem("test_things.py::test_shared[*]") is None
    assert index.pattern_problem("test_*.py::test_stacked[eager-*]") is None
    assert "no case matches" in (index.pattern_problem("test_things.py::test_nope*") or "")
    assert "no case file matches" in (index.pattern_problem("test_other*.py::*") or "")


def _project(tmp_path: Path, cases: Path, selection: str) -> Path:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        textwrap.dedent(f"""\
        schema: 1
        tiers:
          smoke:
            - id: cpu
              torch: "2.13.0"
              cases: ["{selection}"]
        """)
    )
    return matrix


def test_a_typo_in_the_matrix_cases_is_one_line_and_exit_2(
    tmp_path: Path, cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = _project(tmp_path, cases, "test_things.py::test_shared[defualt]")
    assert cli.main(["list", "--matrix", str(matrix)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "matrix.yaml: tiers.smoke[0].cases[0]: 'test_things.py::test_shared[defualt]'" in err


def test_a_typo_in_a_run_selection_stops_before_anything_runs(
    tmp_path: Path, cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = _project(tmp_path, cases, "test_things.py")
    results = tmp_path / "results"
    results.mkdir()
    (results / "results.json").write_text("{}")  # a stored result, untouched
    code = cli.main(
        [
            *("run", "--matrix", str(matrix), "--results", str(results)),
            "test_things.py::test_shared[defualt]",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no parameter id 'defualt'" in err
    assert sorted(p.name for p in results.iterdir()) == ["results.json"]
    assert (results / "results.json").read_text() == "{}"


def test_a_registry_entry_naming_no_case_is_an_error(
    tmp_path: Path, cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matrix = _project(tmp_path, cases, "test_things.py")
    (cases / "known_issues.yaml").write_text(
        "- case: test_things.py::test_shared[reentrant]\n  link: https://example.org/1\n"
        "- case: test_things.py::test_sharde[reentrant]\n  link: https://example.org/2\n"
    )
    results = tmp_path / "results"
    code = cli.main(["run", "--matrix", str(matrix), "--results", str(results)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "known_issues.yaml: [1].case: 'test_things.py::test_sharde[reentrant]'" in err
    assert not results.exists()


def test_list_cases(tmp_path: Path, cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = _project(tmp_path, cases, "test_things.py::test_shared")
    assert cli.main(["list", "--cases", "--matrix", str(matrix)]) == 0
    everything = capsys.readouterr().out.splitlines()
    assert "test_things.py::test_stacked[compiled-item]" in everything
    assert cli.main(["list", "--cases", "--tier", "smoke", "--matrix", str(matrix)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "cpu:",
        "  test_things.py::test_shared[default]",
        "  test_things.py::test_shared[reentrant]",
    ]
