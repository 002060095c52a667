"""A combination's result as an atlas cell (cells.py): outcomes, each case's runs and
failure signature, registered links (http(s) only), bounded messages, the repro
line; the matrix of a plan, an optional axis's absence as a null pin."""

from __future__ import annotations

from pathlib import Path

from repromatrix.hunts.atlas.cells import TIER, matrix_data, record_of
from repromatrix.hunts.atlas.localise import Planned
from repromatrix.hunts.atlas.universe import ABSENT, Universe
from repromatrix.hunts.atlas.view import repro_line
from repromatrix.matrix import parse_matrix
from repromatrix.results import CaseResult, CombinationResult

REQUESTED = {"torch": "2.13.0", "transformers": "4.56.2", "peft": "0.17.1"}
AXES = ("transformers", "peft")
LINK = "https://github.com/unslothai/unsloth/issues/2972"
TRACEBACK = """\
Traceback (most recent call last):
  File "/e/lib/python3.11/site-packages/torch/utils/checkpoint.py", line 9, in backward
    raise RuntimeError("Trying to backward through the graph a second time (at 0x7f00)")
RuntimeError: Trying to backward through the graph a second time (at 0x7f00)"""


def result(status: str, *cases: CaseResult, message: str = "", tags=()) -> CombinationResult:
    return CombinationResult(
        id="atlas-001", tier=TIER, requested=REQUESTED, status=status, cases=list(cases),
        message=message, resolved={"transformers": "4.56.2", "peft": "0.17.1", "six": "1"},
        tags=list(tags),
    )  # fmt: skip


def case(case_id: str, status: str, message: str = "", issue=None, **more) -> CaseResult:
    outcome = "failed" if status == "known-broken" else status
    return CaseResult(
        id=case_id, status=status, outcome=outcome, message=message, known_issue=issue, **more
    )


def test_outcomes_of_a_combination() -> None:
    broken = result(
        "failed",
        case("a.py::t", "passed"),
        case("b.py::t", "known-broken", "RuntimeError: Trying to backward\nmore",
             {"link": LINK}, traceback=TRACEBACK, attempts=["failed"] * 3),
        case("c.py::t", "skipped", "needs a GPU"),
        case("d.py::t", "failed", "=HYPERLINK(1) " + "x" * 20_000, {"link": "javascript:x"}),
    )  # fmt: skip
    cell = record_of(broken, "pair unanswered", {"torch": "2.13.0"}, AXES, ("transformers", "peft"))
    assert cell.pins == {"transformers": "4.56.2", "peft": "0.17.1"}
    assert cell.outcome == "breaks"
    b = cell.cases["b.py::t"]
    assert (b.status, b.runs, b.passed, b.link) == ("known-broken", 3, 0, LINK)
    assert b.error == "RuntimeError: Trying to backward"
    assert b.cause == (
        "RuntimeError: Trying to backward through the graph a second time (at <hex>) "
        "(at torch/utils/checkpoint.py:backward)"
    )
    assert len(b.signature) == 12
    d = cell.cases["d.py::t"]
    assert d.link == "" and len(d.error) <= 300, "a javascript: link, a long message"
    assert cell.cases["c.py::t"].signature == "" and cell.cases["a.py::t"].passed == 1
    assert cell.resolved == {"transformers": "4.56.2", "peft": "0.17.1"}
    assert cell.repro == (
        "repromatrix check --case b.py::t --pin torch==2.13.0 "
        "--pin transformers==4.56.2 --pin peft==0.17.1"
    )
    green = record_of(result("passed", case("a.py::t", "passed")), "x", {}, AXES)
    assert green.outcome == "works"
    flaky = result("passed", case("a.py::t", "flaky", attempts=["failed", "passed"]))
    assert record_of(flaky, "x", {}, AXES).outcome == "flaky"
    refused = result("install-error", message="resolve: error: No solution found when ...")
    assert record_of(refused, "x", {}, AXES).outcome == "conflict"
    offline = result("install-error", message="install: network unreachable")
    assert record_of(offline, "x", {}, AXES).outcome == "error", "retried, never an answer"


def test_one_cause_one_signature_across_cells() -> None:
    """Two cells failing of the same bug (other addresses, other folders) share a key."""
    other = TRACEBACK.replace("/e/", "/f/g/").replace("0x7f00", "0x1234")
    one = record_of(result("failed", case("b.py::t", "failed", "x", traceback=TRACEBACK)),
                    "x", {}, AXES)  # fmt: skip
    two = record_of(result("failed", case("b.py::t", "failed", "y", traceback=other)),
                    "x", {}, AXES)  # fmt: skip
    assert one.cases["b.py::t"].signature == two.cases["b.py::t"].signature


def test_a_plan_as_a_matrix_tier(tmp_path: Path) -> None:
    matrix_file = tmp_path / "matrix.yaml"
    matrix_file.write_text(
        "schema: 1\npackages: [torch, transformers, peft]\n"
        "defaults: {torch: '2.13.0', device: cpu}\n"
        "tiers: {smoke: [{id: one, transformers: '4.56.2'}]}\n"
        "atlas: {axes: {transformers: all, peft: {versions: all, optional: true}},"
        " pins: {torch: '2.13.0'}, cases: [a.py]}\n"
    )
    matrix = parse_matrix(
        {"schema": 1, "packages": ["torch", "transformers", "peft"],
         "tiers": {"smoke": [{"id": "one", "transformers": "4.56.2"}]},
         "atlas": {"axes": {"transformers": "all", "peft": {"versions": "all", "optional": True}},
                   "pins": {"torch": "2.13.0"}, "cases": ["a.py"]}},
        matrix_file,
    )  # fmt: skip
    assert matrix.atlas is not None
    universe = Universe({"transformers": ("4.56.2", "5.0.0"), "peft": (ABSENT, "0.17.1")})
    planned = [
        Planned(("5.0.0", "0.17.1"), "new release transformers 5.0.0"),
        Planned(("5.0.0", ABSENT), "pair unanswered"),
    ]
    tier = parse_matrix(matrix_data(matrix, matrix.atlas, universe, planned), matrix_file).tier(
        TIER
    )
    assert [c.id for c in tier] == ["atlas-001", "atlas-002"]
    assert tier[0].requested() == {"torch": "2.13.0", "transformers": "5.0.0", "peft": "0.17.1"}
    assert tier[1].requested()["peft"] == "null", "an absent axis: not installed"
    assert tier[0].cases == ("a.py",) and tier[0].tags == ("atlas-new-release-transformers-5-0-0",)
    assert repro_line({"torch": None, "peft": "0.17.1"}, None) == (
        "repromatrix check --pin torch=null --pin peft==0.17.1"
    )
