"""A run of one case of a combination (run --update --combination ID CASE, i.e.
``nox -s ID -- CASE``) replaces that case's result and keeps the others, marked as
from the earlier run."""

from __future__ import annotations

from pathlib import Path

from repromatrix.matrix import parse_matrix
from repromatrix.pipeline import with_earlier
from repromatrix.results import CaseResult, CombinationResult

MATRIX = {"schema": 1, "tiers": {"smoke": [{"id": "cpu", "torch": "2.13.0"}]}}


def _case(case_id: str, outcome: str, from_run: str | None = None) -> CaseResult:
    return CaseResult(id=case_id, status=outcome, outcome=outcome, from_run=from_run)


def _earlier(requested: dict[str, str], *cases: CaseResult) -> CombinationResult:
    return CombinationResult(
        id="cpu",
        tier="smoke",
        requested=requested,
        status="failed",
        started="2026-11-20T10:00:00+00:00",
        cases=list(cases),
    )


def test_the_other_cases_stay_marked_from_the_earlier_run() -> None:
    combo = parse_matrix(MATRIX, Path("matrix.yaml")).find("cpu")
    earlier = _earlier(
        combo.requested(),
        _case("t.py::a", "passed"),
        _case("t.py::b", "failed"),
        _case("t.py::c", "passed", from_run="2026-11-01T00:00:00+00:00"),
    )
    merged = with_earlier([_case("t.py::b", "passed"), _case("t.py::d", "passed")], earlier, combo)
    assert [(c.id, c.outcome, c.from_run) for c in merged] == [
        ("t.py::a", "passed", "2026-11-20T10:00:00+00:00"),
        ("t.py::b", "passed", None),  # measured now
        ("t.py::c", "passed", "2026-11-01T00:00:00+00:00"),  # still the run that measured it
        ("t.py::d", "passed", None),
    ]
    assert earlier.cases[0].from_run is None  # the earlier result itself is not changed


def test_results_of_other_pins_are_not_kept() -> None:
    combo = parse_matrix(MATRIX, Path("matrix.yaml")).find("cpu")
    earlier = _earlier({"torch": "2.12.0"}, _case("t.py::a", "failed"))
    assert [c.id for c in with_earlier([_case("t.py::b", "passed")], earlier, combo)] == ["t.py::b"]
    assert [c.id for c in with_earlier([_case("t.py::b", "passed")], None, combo)] == ["t.py::b"]
