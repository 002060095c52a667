"""Exit codes are an API: `check` exits 128 on any bad input (git bisect run stops
instead of marking the commit bad or skipping it), `bisect` exits 2. Every input
below is refused in one line on stderr, before any environment is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix.cli import main

# (arguments after the probe, a word the one line must hold)
BAD = [
    (["--pin", "torch==2.13.0", "--timeout", "-5"], "--timeout"),
    (["--pin", "torch==2.13.0", "--timeout", "0"], "--timeout"),
    (["--pin", "torch==2.13.0", "--timeout", "nan"], "--timeout"),
    (["--pin", "torch==2.13.0", "--timeout", "inf"], "--timeout"),
    (["--pin", "torch==2.13.0", "--timeout", "soon"], "--timeout"),
    (["--pin", "torch==2.13.0", "--install-timeout", "-1"], "--install-timeout"),
    (["--pin", "torch==2.13.0", "--install-timeout", "NaN"], "--install-timeout"),
    (["--pin", "pkg==="], "pkg==="),
    (["--pin", "torch=>2"], "torch=>2"),
    (["--pin", "torch=2.13.0"], "torch=2.13.0"),
    (["--pin", "torch"], "torch"),
    (["--pin", "torch=="], "torch=="),
    (["--pin", "==1.0"], "==1.0"),
    (["--pin", "torch==2.13.0", "--pin", "torch==2.12.0"], "pinned twice"),
    (["--pin", "peft@git+https://"], "direct reference"),
    (["--pin", "torch==2.13.0", "--wheelhouse", "{root}/nowhere"], "--wheelhouse"),
    (["--pin", "torch==2.13.0", "--cases", "{root}/nowhere"], "--cases"),
    (["--pin", "torch==2.13.0", "--no-such-option"], "--no-such-option"),
    # A folder pin whose folder is missing, or no Python project (was 125, untestable).
    (["--pin", "torch==2.13.0", "--pin", "mylib=./nope"], "'./nope' is no folder"),
    (["--pin", "torch==2.13.0", "--pin", "mylib=./cases"], "no pyproject.toml or setup.py"),
]
BAD_PROBES = [
    (["--case", "test_missing.py::test_x"], "test_missing.py"),
    (["--script", "{root}/missing.py"], "--script"),
    ([], "--case"),  # neither --case nor --script
]


CASES = """\
import pytest


def test_a():
    pass


@pytest.mark.parametrize("variant", ["default", "reentrant"])
def test_p(variant):
    pass


def make(variant):
    return [variant]


@pytest.mark.parametrize("variant", make("x"))
def test_computed(variant):
    pass
"""

# Case ids that certainly name no case: a search over them could only skip every
# step, and `check` would answer "untestable" (125) at every commit of git bisect run.
MISSING_CASES = [
    (["--case", "test_a.py::test_b"], "defines no 'test_b'"),
    (["--case", "test_a.py::TestA::test_b"], "defines no 'TestA'"),
    (["--case", "test_a.py::test_p[defualt]"], "no parameter id 'defualt'"),
    (["--case", "test_a.py::test_a[1-2]"], "not parametrized"),
]


@pytest.fixture
def cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_a.py").write_text(CASES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _refused(argv: list[str], root: Path, capsys) -> tuple[int, str]:
    code = main([a.format(root=root) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    return code, lines[0]


@pytest.mark.parametrize(("args", "word"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_check_exits_128(cases: Path, capsys, args: list[str], word: str) -> None:
    code, line = _refused(["check", "--case", "test_a.py::test_a", *args], cases, capsys)
    assert code == 128, line
    assert word.format(root=cases) in line


@pytest.mark.parametrize(("probe", "word"), BAD_PROBES)
def test_check_exits_128_on_a_bad_probe(cases: Path, capsys, probe: list[str], word: str):
    code, line = _refused(["check", *probe, "--pin", "torch==2.13.0"], cases, capsys)
    assert code == 128, line
    assert word.format(root=cases) in line


@pytest.mark.parametrize(("probe", "word"), MISSING_CASES)
def test_check_exits_128_on_a_case_that_does_not_exist(
    cases: Path, capsys, probe: list[str], word: str
) -> None:
    code, line = _refused(["check", *probe, "--pin", "torch==2.13.0"], cases, capsys)
    assert code == 128, line
    assert word in line and probe[1] in line


def test_check_without_a_pin_exits_128(cases: Path, capsys) -> None:
    code, line = _refused(["check", "--case", "test_a.py::test_a"], cases, capsys)
    assert code == 128 and "--pin" in line


SWEEP_CASE = ["sweep", "--case", "test_a.py::test_a"]


@pytest.mark.parametrize(
    ("argv", "exit_code"),
    [
        (["check", "--case", "test_a.py::test_a", "--pin", "six==1.16.0", "--bogus"], 128),
        (["list", "--bogus"], 2),
        ([*SWEEP_CASE, "--package", "six", "--from", "1.15", "--to", "1.16", "--bogus"], 2),
    ],
)
def test_an_unknown_option_exits_with_the_commands_own_bad_input_code(
    cases: Path, capsys, argv: list[str], exit_code: int
) -> None:
    code, line = _refused(argv, cases, capsys)
    assert code == exit_code and "unrecognized arguments: --bogus" in line


BISECT = ["bisect", "--package", "peft", "--good", "0.17.0", "--bad", "0.17.1"]


@pytest.mark.parametrize(("args", "word"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bisect_exits_2(cases: Path, capsys, args: list[str], word: str) -> None:
    code, line = _refused([*BISECT, "--case", "test_a.py::test_a", *args], cases, capsys)
    assert code == 2, line
    assert word.format(root=cases) in line


@pytest.mark.parametrize(
    ("probe", "word"),
    [
        *BAD_PROBES,
        # the file exists, the case does not: the bisect could only end "could not conclude"
        *MISSING_CASES,
    ],
)
def test_bisect_exits_2_on_a_bad_probe(cases: Path, capsys, probe: list[str], word: str):
    code, line = _refused([*BISECT, *probe, "--pin", "torch==2.13.0"], cases, capsys)
    assert code == 2, line
    assert word.format(root=cases) in line


@pytest.mark.parametrize(
    ("ends", "word"),
    [
        (["--good", "x.y", "--bad", "0.17.1"], "--good"),
        (["--good", "0.17.1", "--bad", "0.17.1"], "same version"),
    ],
)
def test_bisect_exits_2_on_bad_ends(cases: Path, capsys, ends: list[str], word: str) -> None:
    argv = ["bisect", "--package", "peft", *ends, "--case", "test_a.py::test_a"]
    code, line = _refused(argv, cases, capsys)
    assert code == 2 and word in line


SWEEP = ["sweep", "--package", "peft", "--from", "0.17.0", "--to", "0.17.1"]


@pytest.mark.parametrize(("probe", "word"), MISSING_CASES)
def test_sweep_exits_2_on_a_case_that_does_not_exist(
    cases: Path, capsys, probe: list[str], word: str
) -> None:
    """Before: a misspelled [param] swept every release as "skip" and exited 0."""
    code, line = _refused([*SWEEP, *probe, "--pin", "torch==2.13.0"], cases, capsys)
    assert code == 2, line
    assert word in line


def test_a_parametrized_case_is_found_by_its_function_and_id(cases: Path) -> None:
    """A node id with parameters names the function before its brackets, and one
    of its parameter ids inside them."""
    from repromatrix.probe.spec import Probe

    probe = Probe(case="test_a.py::test_p[reentrant]", cases_root=cases / "cases").defined()
    assert probe.case == "test_a.py::test_p[reentrant]"


def test_a_parameter_id_made_at_run_time_is_kept_and_said_so(cases: Path) -> None:
    """Ids the source does not give (computed by a call) cannot be refused: the id is
    kept, and one line says that it was not checked."""
    from repromatrix.probe.spec import Probe

    said: list[str] = []
    case = "test_a.py::test_computed[x]"
    probe = Probe(case=case, cases_root=cases / "cases").defined(said.append)
    assert probe.case == case
    assert len(said) == 1 and case in said[0] and "cannot be checked" in said[0]


def test_a_case_file_that_is_not_python_is_bad_input(cases: Path, capsys) -> None:
    (cases / "cases" / "test_broken.py").write_text("def test_x(:\n")
    code, line = _refused(
        [*BISECT, "--case", "test_broken.py::test_x", "--pin", "torch==2.13.0"], cases, capsys
    )
    assert code == 2 and "cannot read test_broken.py" in line
