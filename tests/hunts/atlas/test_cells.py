"""A combination's result as an atlas cell (cells.py): outcomes, registered links,
the repro line; a nightly's merged results folded back in; the matrix of a plan."""

from __future__ import annotations

from pathlib import Path

from repromatrix.hunts.atlas.cells import TIER, fold, matrix_data, record_of, repro
from repromatrix.hunts.atlas.universe import Universe
from repromatrix.matrix import parse_matrix
from repromatrix.results import CaseResult, CombinationResult, Results, RunInfo
from repromatrix.verdicts.knownissues import parse_registry

REQUESTED = {"torch": "2.13.0", "transformers": "4.56.2", "peft": "0.17.1"}
AXES = ("transformers", "peft")
LINK = "https://github.com/unslothai/unsloth/issues/2972"


def result(status: str, *cases: CaseResult, message: str = "", tags=()) -> CombinationResult:
    return CombinationResult(
        id="atlas-001", tier=TIER, requested=REQUESTED, status=status, cases=list(cases),
        message=message, resolved={"transformers": "4.56.2", "peft": "0.17.1", "six": "1"},
        tags=list(tags),
    )  # fmt: skip


def case(case_id: str, status: str, message: str = "", issue: dict | None = None) -> CaseResult:
    outcome = "failed" if status == "known-broken" else status
    return CaseResult(
        id=case_id, status=status, outcome=outcome, message=message, known_issue=issue
    )


def test_outcomes_of_a_combination() -> None:
    broken = result(
        "failed",
        case("a.py::t", "passed"),
        case("b.py::t", "known-broken", "RuntimeError: Trying to backward\nmore", {"link": LINK}),
        case("c.py::t", "skipped", "needs a GPU"),
    )
    cell = record_of(broken, "pair unanswered", {"torch": "2.13.0"}, AXES, ("transformers", "peft"))
    assert cell.pins == {"transformers": "4.56.2", "peft": "0.17.1"}
    assert cell.outcome == "breaks"
    assert [(f.case, f.error, f.link) for f in cell.failures] == [
        ("b.py::t", "RuntimeError: Trying to backward", LINK)
    ]
    assert cell.resolved == {"transformers": "4.56.2", "peft": "0.17.1"}
    assert cell.repro == (
        "repromatrix check --case b.py::t --pin torch==2.13.0 "
        "--pin transformers==4.56.2 --pin peft==0.17.1"
    )
    green = record_of(result("passed", case("a.py::t", "passed")), "x", {}, AXES)
    assert green.outcome == "works" and not green.failures
    refused = result("install-error", message="resolve: error: No solution found when ...")
    assert record_of(refused, "x", {}, AXES).outcome == "conflict"
    offline = result("install-error", message="install: network unreachable")
    assert record_of(offline, "x", {}, AXES).outcome == "error", "retried, never an answer"


def test_a_nightly_is_folded_back_with_registered_links() -> None:
    registry = parse_registry(
        [{"case": "b.py::t", "when": {"transformers": ">=4.53,<5"}, "link": LINK}], "k.yaml"
    )
    merged = Results(
        run=RunInfo(),
        combinations=[
            result("failed", case("b.py::t", "failed", "boom"), tags=["atlas-localise"]),
            CombinationResult(id="smoke", tier="smoke", requested=REQUESTED, status="passed"),
        ],
    )
    universe = Universe({"transformers": ("4.56.2",), "peft": ("0.17.1",)})
    cells = fold(merged, {}, universe, (), registry)
    assert len(cells) == 1, "only the atlas tier"
    assert cells[0].failures[0].link == LINK and cells[0].reason == "atlas-localise"


def test_a_lost_combination_is_no_answer() -> None:
    """Its job reported nothing (merge wrote it LOST, no cases): folding it as a cell
    would answer its pairs `works` without a case run."""
    merged = Results(
        run=RunInfo(),
        combinations=[
            result("lost", message="no result came back from its job, slice_0 / atlas-001"),
            CombinationResult(
                id="atlas-002",
                tier=TIER,
                requested={**REQUESTED, "peft": "0.18.0"},
                status="passed",
                cases=[case("a.py::t", "passed")],
            ),
        ],
    )
    universe = Universe({"transformers": ("4.56.2",), "peft": ("0.17.1", "0.18.0")})
    cells = fold(merged, {}, universe, ())
    assert [(c.pins["peft"], c.outcome) for c in cells] == [("0.18.0", "works")]


def test_a_plan_as_a_matrix_tier(tmp_path: Path) -> None:
    matrix_file = tmp_path / "matrix.yaml"
    matrix_file.write_text(
        "schema: 1\npackages: [torch, transformers, peft]\n"
        "defaults: {torch: '2.13.0', device: cpu}\n"
        "tiers: {smoke: [{id: one, transformers: '4.56.2'}]}\n"
        "atlas: {axes: {transformers: all, peft: all}, pins: {torch: '2.13.0'}, cases: [a.py]}\n"
    )
    matrix = parse_matrix(
        {"schema": 1, "packages": ["torch", "transformers", "peft"],
         "tiers": {"smoke": [{"id": "one", "transformers": "4.56.2"}]},
         "atlas": {"axes": {"transformers": "all", "peft": "all"},
                   "pins": {"torch": "2.13.0"}, "cases": ["a.py"]}},
        matrix_file,
    )  # fmt: skip
    assert matrix.atlas is not None
    universe = Universe({"transformers": ("4.56.2", "5.0.0"), "peft": ("0.17.1",)})
    data = matrix_data(
        matrix, matrix.atlas, universe, [(("5.0.0", "0.17.1"), "new release transformers 5.0.0")]
    )
    tier = parse_matrix(data, matrix_file).tier(TIER)
    assert [c.id for c in tier] == ["atlas-001"]
    assert tier[0].requested() == {"torch": "2.13.0", "transformers": "5.0.0", "peft": "0.17.1"}
    assert tier[0].cases == ("a.py",) and tier[0].tags == ("atlas-new-release-transformers-5-0-0",)
    assert repro({"torch": "null", "peft": "0.17.1"}, None) == (
        "repromatrix check --pin torch=null --pin peft==0.17.1"
    )
