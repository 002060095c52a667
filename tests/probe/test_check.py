"""One verdict: --pin parsing, probe validation, and how a script's exit status or a
case's outcome becomes good / bad / skip. The environment here is the test's own
interpreter (it has pytest), so nothing is built."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.request import Environment
from repromatrix.environment.uv import InstallError, Interpreter
from repromatrix.errors import UserError
from repromatrix.execution._cell.signature import same_failure
from repromatrix.hunts.check.run import CheckOptions, plan, run
from repromatrix.hunts.hunt import Voice
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import PinKind, parse_pin_option, pin_text, unique_pins
from repromatrix.probe.check import check, unpinned_import
from repromatrix.probe.observation import EXIT_CODES
from repromatrix.probe.spec import Probe, Trial
from repromatrix.search.bisection import ProbeOutcome


@pytest.mark.parametrize(
    ("text", "package", "kind", "spec"),
    [
        ("torch==2.13.0", "torch", PinKind.EXACT, "2.13.0"),
        ("Unsloth_Zoo==2025.11.3", "unsloth-zoo", PinKind.EXACT, "2025.11.3"),
        ("peft>=0.15,<0.18", "peft", PinKind.RANGE, ">=0.15,<0.18"),
        ("peft ~= 0.15.0", "peft", PinKind.RANGE, "~=0.15.0"),
        ("transformers==4.5.*", "transformers", PinKind.RANGE, "==4.5.*"),
        ("torch=system", "torch", PinKind.SYSTEM, "system"),
        ("trl=latest", "trl", PinKind.LATEST, "latest"),
        ("unsloth=null", "unsloth", PinKind.ABSENT, ""),
        (
            "peft@git+https://github.com/huggingface/peft@main",
            "peft",
            PinKind.DIRECT,
            "git+https://github.com/huggingface/peft@main",
        ),
    ],
)
def test_pin_options(text: str, package: str, kind: PinKind, spec: str) -> None:
    pin = parse_pin_option(text)
    assert (pin.package, pin.kind, pin.spec) == (package, kind, spec)
    assert parse_pin_option(pin_text(pin)) == pin, "what reports show parses back"


@pytest.mark.parametrize("text", ["torch", "==2.0", "torch==", "torch=4.50=x", "torch>>1"])
def test_bad_pin_options_are_one_line_errors(text: str) -> None:
    with pytest.raises(UserError) as raised:
        parse_pin_option(text)
    assert "--pin" in str(raised.value)


def test_a_package_pinned_twice_is_refused() -> None:
    pins = [parse_pin_option("torch==2.13.0"), parse_pin_option("torch==2.12.0")]
    with pytest.raises(UserError, match="pinned twice"):
        unique_pins(pins)
    assert len(unique_pins([pins[0], pins[0]])) == 1


def test_probe_validation(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="one of --case"):
        Probe()
    with pytest.raises(UserError, match="no such file"):
        Probe(script=tmp_path / "missing.py").validated()
    with pytest.raises(UserError, match="no such folder"):
        Probe(case="test_x.py::test_y", cases_root=tmp_path / "nope").validated()
    with pytest.raises(UserError, match=r"no test_x\.py"):
        Probe(case="test_x.py::test_y", cases_root=tmp_path).validated()
    (tmp_path / "test_x.py").write_text("def test_y(): pass\n")
    assert Probe(case="test_x.py::test_y", cases_root=tmp_path).validated().cases_root.is_absolute()


# --------------------------------------------------------------------------- verdicts


class OwnInterpreter:
    """A store whose every cell is the test's own interpreter; ``asked``: the builds."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.asked: list = []

    def build(self, request, *, timeout, log=None):
        self.asked.append(request)
        return self.env


class Refusing:
    """A store that cannot build the cell."""

    def build(self, request, *, timeout, log=None):
        raise InstallError("resolve", "No solution found: tiny-pkg==1.0 needs torch<2", "uv log")


@pytest.fixture
def own_interpreter(tmp_path: Path) -> OwnInterpreter:
    """The store of 'the test's interpreter'."""
    env = Environment(
        root=tmp_path / "env",
        identity="ab" * 32,
        python=Path(sys.executable),
        resolved={"tiny-pkg": "1.0"},
        system={},
        reused=True,
        seconds=0.0,
        interpreter=Interpreter(sys.executable, "3.11.0", "CPython"),
    )
    return OwnInterpreter(env)


def trial(tmp_path: Path, probe: Probe, *pins: str) -> Trial:
    cell = CellSpec(pins=tuple(parse_pin_option(p) for p in pins))
    return Trial(probe, cell, IndexSettings(), tmp_path / "work", "1.0")


def script_check(tmp_path: Path, body: str, store, timeout: float = 60.0):
    script = tmp_path / "repro.py"
    script.write_text(textwrap.dedent(body))
    probe = Probe(script=script, timeout=timeout).validated()
    return check(trial(tmp_path, probe, "tiny-pkg==1.0"), store=store)


# What transformers prints on import under a newer torch: a warning and its source line.
WARN = (
    "import sys, warnings; warnings.warn_explicit('`torch.utils._pytree._register_pytree_node`"
    " is deprecated', FutureWarning, __file__, 1)"
)


@pytest.mark.parametrize(
    ("body", "outcome", "detail"),
    [
        ("print('fine')", ProbeOutcome.GOOD, "exit 0: fine"),
        ("pass", ProbeOutcome.GOOD, "exit 0"),
        ("import sys; sys.exit(1)", ProbeOutcome.BAD, "exit 1"),
        (
            "raise RuntimeError('backward through the graph a second time')",
            ProbeOutcome.BAD,
            "exit 1: RuntimeError: backward through the graph a second time",
        ),
        # The verdict line the probe printed on stdout comes before stderr's ...
        (
            "import sys; print('loss nan'); sys.exit('diverged at step 3')",
            ProbeOutcome.BAD,
            "exit 1: loss nan",
        ),
        # ... which speaks when stdout said nothing,
        (
            "import sys; sys.exit('diverged at step 3')",
            ProbeOutcome.BAD,
            "exit 1: diverged at step 3",
        ),
        # and an uncaught exception is the reason, whatever was printed before it.
        (
            "print('step 1'); raise RuntimeError('boom')",
            ProbeOutcome.BAD,
            "exit 1: RuntimeError: boom",
        ),
        (
            "import sys; print('step 1\\nloss nan'); sys.exit(2)",
            ProbeOutcome.BAD,
            "exit 2: loss nan",
        ),
        ("import sys; sys.exit(125)", ProbeOutcome.SKIP, "exit 125: untestable"),
        (
            f"{WARN}; print('skip: needs a GPU'); sys.exit(125)",
            ProbeOutcome.SKIP,
            "exit 125: untestable: skip: needs a GPU",
        ),
        # A library's warning on stderr (its line, then the source line under it) is
        # never the reason: the line the probe printed is (issue N, bisect.md showed
        # "_torch_pytree._register_pytree_node(").
        (
            f"{WARN}; print('bad: checkpoint called without use_reentrant'); sys.exit(1)",
            ProbeOutcome.BAD,
            "exit 1: bad: checkpoint called without use_reentrant",
        ),
        (f"{WARN}; sys.exit(1)", ProbeOutcome.BAD, "exit 1"),
        (
            f"{WARN}; raise RuntimeError('checkpoint failed')",
            ProbeOutcome.BAD,
            "exit 1: RuntimeError: checkpoint failed",
        ),
        # An import of a package nobody pinned: the environment is incomplete, not bad.
        (
            "import peft",
            ProbeOutcome.SKIP,
            "untestable (peft is not pinned): exit 1: ModuleNotFoundError: No module named 'peft'",
        ),
        (
            "from unsloth_zoo.x import y",
            ProbeOutcome.SKIP,
            "untestable (unsloth-zoo is not pinned): exit 1: "
            "ModuleNotFoundError: No module named 'unsloth_zoo'",
        ),
        # An import from the pinned package itself is the behaviour looked for: bad.
        (
            "raise ImportError(\"cannot import name 'Gone' from 'tiny_pkg' (x.py)\")",
            ProbeOutcome.BAD,
            "exit 1: ImportError: cannot import name 'Gone' from 'tiny_pkg' (x.py)",
        ),
        (
            "raise ModuleNotFoundError(\"No module named 'tiny_pkg.sub'\")",
            ProbeOutcome.BAD,
            "exit 1: ModuleNotFoundError: No module named 'tiny_pkg.sub'",
        ),
        ("import sys; sys.exit(3)", ProbeOutcome.BAD, "exit 3"),
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
            ProbeOutcome.BAD,
            "killed by signal 11",
        ),
    ],
)
def test_script_exit_status_is_the_verdict(
    tmp_path: Path, own_interpreter: OwnInterpreter, body: str, outcome: ProbeOutcome, detail: str
) -> None:
    observation = script_check(tmp_path, body, own_interpreter)
    assert (observation.outcome, observation.detail) == (outcome, detail)
    assert (tmp_path / "work" / "1.0.run.log").exists()
    assert observation.cell is not None and observation.cell.identity == "ab" * 8
    assert own_interpreter.asked[0].pins[0].spec == "1.0"


def test_a_script_over_its_time_limit_is_bad(
    tmp_path: Path, own_interpreter: OwnInterpreter
) -> None:
    observation = script_check(
        tmp_path, "import time; time.sleep(30)", timeout=1.0, store=own_interpreter
    )
    assert observation.outcome is ProbeOutcome.BAD
    assert "timed out" in observation.detail
    assert observation.seconds < 20


def test_an_environment_that_cannot_be_built_is_skipped(tmp_path: Path) -> None:
    observation = script_check(tmp_path, "print('never runs')", Refusing())
    assert observation.outcome is ProbeOutcome.SKIP
    assert observation.detail.startswith("install-error: resolve: No solution found")
    assert "uv log" in (tmp_path / "work" / "1.0.install.log").read_text()
    assert EXIT_CODES[observation.outcome] == 125


CASES = """
import pytest

def test_passes():
    pass

def test_fails():
    assert 1 == 2, "the regression"

def test_skips():
    pytest.skip("needs a GPU")

@pytest.mark.parametrize("mode", ["a", "b"])
def test_mixed(mode):
    assert mode == "a"
"""


@pytest.mark.parametrize(
    ("case", "outcome", "detail"),
    [
        ("test_cases.py::test_passes", ProbeOutcome.GOOD, "passed"),
        ("test_cases.py::test_fails", ProbeOutcome.BAD, "failed: AssertionError: the regression"),
        ("test_cases.py::test_skips", ProbeOutcome.SKIP, "skipped"),
        ("test_cases.py::test_mixed", ProbeOutcome.BAD, "failed"),  # a failing parametrization
        ("test_cases.py::test_mixed[a]", ProbeOutcome.GOOD, "passed"),
        # A node this version of the cases does not have: untestable, as in git bisect.
        ("test_cases.py::test_absent", ProbeOutcome.SKIP, "no case matched"),
    ],
)
def test_case_outcome_is_the_verdict(
    tmp_path: Path, own_interpreter: OwnInterpreter, case: str, outcome: ProbeOutcome, detail: str
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_cases.py").write_text(CASES)
    probe = Probe(case=case, cases_root=cases, timeout=120).validated()
    observation = check(trial(tmp_path, probe, "tiny-pkg==1.0"), store=own_interpreter)
    assert observation.outcome is outcome
    assert observation.detail.startswith(detail), observation.detail


def test_an_unpinned_import_in_a_case_is_untestable(
    tmp_path: Path, own_interpreter: OwnInterpreter
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_imports.py").write_text("def test_needs_peft():\n    import peft_absent_x\n")
    probe = Probe(case="test_imports.py::test_needs_peft", cases_root=cases).validated()
    observation = check(trial(tmp_path, probe, "tiny-pkg==1.0"), store=own_interpreter)
    assert observation.outcome is ProbeOutcome.SKIP, observation.detail
    assert "peft-absent-x is not pinned" in observation.detail
    assert "No module named 'peft_absent_x'" in observation.detail


@pytest.mark.parametrize(
    ("detail", "pins", "missing"),
    [
        ("exit 1: ModuleNotFoundError: No module named 'peft'", ["torch==2.13.0"], "peft"),
        ("exit 1: ModuleNotFoundError: No module named 'peft'", ["peft>=0.15"], None),
        ("exit 1: ModuleNotFoundError: No module named 'peft'", ["peft=null"], "peft"),
        ("exit 1: ImportError: cannot import name 'X' from 'trl.core'", ["peft=latest"], "trl"),
        ("exit 1: RuntimeError: No module named 'peft'", ["torch==2.13.0"], None),
        ("exit 1", [], None),
    ],
)
def test_unpinned_import(detail: str, pins: list[str], missing: str | None) -> None:
    assert unpinned_import(detail, [parse_pin_option(p) for p in pins]) == missing


def test_check_prints_what_floating_pins_resolved_to(
    tmp_path: Path, own_interpreter: OwnInterpreter
) -> None:
    script = tmp_path / "repro.py"
    script.write_text("print('fine')\n")
    pins = (parse_pin_option("tiny-pkg>=0.5"), parse_pin_option("other==2.0"))
    options = CheckOptions(
        probe=Probe(script=script), cell=CellSpec(pins=pins), index=IndexSettings()
    )
    said: list[str] = []
    told: list[str] = []
    voice = Voice(say=told.append, note=said.append)
    checked = plan(options, voice)
    prober = lambda trial: check(trial, store=own_interpreter, log=said.append)  # noqa: E731
    _observation, code = run(checked, prober, voice)
    assert code == 0
    assert "resolved: tiny-pkg>=0.5 -> 1.0" in said
    assert not any("other" in line for line in said if line.startswith("resolved:"))
    assert told[0].startswith("good: script repro.py with tiny-pkg>=0.5 other==2.0")


@pytest.mark.parametrize(("pin", "outcome"), [("pyyaml==6.0", "bad"), ("tiny-pkg==1.0", "skip")])
def test_a_module_is_matched_to_the_distribution_that_provides_it(
    tmp_path: Path, own_interpreter: OwnInterpreter, pin: str, outcome: str
) -> None:
    """``yaml`` is PyYAML's module (asked of the environment's importlib.metadata): an
    import error from it is the pinned package's behaviour when PyYAML is pinned."""
    script = tmp_path / "repro.py"
    script.write_text("raise ImportError(\"cannot import name 'Gone' from 'yaml' (x.py)\")\n")
    probe = Probe(script=script).validated()
    observation = check(trial(tmp_path, probe, pin), store=own_interpreter)
    assert observation.outcome.value == outcome, observation.detail
    assert observation.detail.endswith("ImportError: cannot import name 'Gone' from 'yaml' (x.py)")


def test_checks_verdict_line_names_the_folder_pins_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repromatrix.probe.observation import BuiltCell, Observation

    # `mylib=.` is read from where the command runs: a Python project of its own here,
    # not whatever folder the test process happens to be in.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nversion = "0.1"\n')
    script = tmp_path / "repro.py"
    script.write_text("print('fine')\n")
    options = CheckOptions(
        probe=Probe(script=script),
        cell=CellSpec(pins=(parse_pin_option("mylib=."),)),
        index=IndexSettings(),
    )
    tree = {"path": ".", "digest": "sha256:" + "5" * 64, "commit": "a" * 40, "dirty": True}
    cell = BuiltCell(identity="d" * 16, sources={"mylib": tree})
    told: list[str] = []
    voice = Voice(say=told.append, note=print)
    run(plan(options, voice), lambda _trial: Observation(ProbeOutcome.BAD, "exit 1", 0.2, cell),
        voice)  # fmt: skip
    assert told[0].endswith("(your source: mylib . aaaaaaa + edits, sha256:555555555555)")


# --------------------------------------------------------------------------- signatures

RAISES_IN_A_PACKAGE = """
import sys
sys.path.insert(0, {site!r})
import fakestack
fakestack.step({step})
"""


def test_a_bad_probe_carries_what_it_died_of(
    tmp_path: Path, own_interpreter: OwnInterpreter
) -> None:
    """A script's Python traceback gives its signature, the same one the cell plugin
    would give a case; probes that fail for one cause compare equal (a hunt compares
    causes), a good probe has none, one without a traceback is named by its exit."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "fakestack").mkdir(parents=True)
    (site / "fakestack" / "__init__.py").write_text(
        "def step(n):\n    raise RuntimeError(f'graph freed at step {n}')\n"
    )
    first, second = (
        script_check(tmp_path, RAISES_IN_A_PACKAGE.format(site=str(site), step=n), own_interpreter)
        for n in (3, 12)
    )
    assert first.outcome is ProbeOutcome.BAD and first.signature is not None
    assert first.signature.frames == ("fakestack/__init__.py:step",)
    assert first.signature.message == "graph freed at step <n>"
    assert same_failure(first.signature, second.signature)
    good = script_check(tmp_path, "pass", own_interpreter)
    assert good.signature is None
    bare = script_check(tmp_path, "import sys; sys.exit(3)", own_interpreter)
    assert (bare.signature.exception, bare.signature.frames) == ("exit 3", ())


def test_a_failing_case_probe_carries_the_cases_signature(
    tmp_path: Path, own_interpreter: OwnInterpreter
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_cases.py").write_text(CASES)
    probe = Probe(case="test_cases.py::test_fails", cases_root=cases, timeout=120).validated()
    observation = check(trial(tmp_path, probe, "tiny-pkg==1.0"), store=own_interpreter)
    assert observation.signature is not None
    assert (observation.signature.exception, observation.signature.message) == (
        "AssertionError",
        "the regression",
    )
