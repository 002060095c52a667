"""Synthetic results for the verdict and report tests, built with the results models."""

from __future__ import annotations

from repromatrix.outcomes import combination_status
from repromatrix.reports.environment import parse as parse_collect_env
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    EnvironmentInfo,
    Results,
    RunInfo,
)

CASE_A = "test_lora.py::test_lora_gets_gradients[reentrant]"
CASE_B = "test_double_backward.py::test_fresh_forward_per_backward_works"

TRACEBACK = """test_lora.py:41: in test_lora_gets_gradients
    loss.backward()
<env>/lib/python3.11/site-packages/torch/_tensor.py:630: in backward
    torch.autograd.backward(
E   RuntimeError: Trying to backward through the graph a second time"""


def case(case_id: str, outcome: str, message: str = "", **extra) -> CaseResult:
    failing = outcome in ("failed", "error", "crashed", "timed-out")
    return CaseResult(
        id=case_id,
        status=outcome,
        outcome=outcome,
        seconds=0.25,
        message=message
        or ("RuntimeError: Trying to backward through the graph" if failing else ""),
        error_type="RuntimeError" if failing else None,
        traceback=TRACEBACK if failing else "",
        attempts=extra.pop("attempts", [outcome] * (3 if failing else 1)),
        **extra,
    )


def combination(
    combination_id: str,
    versions: dict[str, str],
    cases: list[CaseResult] | None = None,
    *,
    status: str | None = None,
    python: str = "3.11.7",
    message: str = "",
    resolved: bool = True,
) -> CombinationResult:
    cases = cases or []
    return CombinationResult(
        id=combination_id,
        tier="smoke",
        requested=dict(versions),
        resolved={**versions, "numpy": "2.4.6"} if resolved else {},
        status=status or combination_status({c.outcome or c.status for c in cases}),
        cases=cases,
        message=message,
        environment=EnvironmentInfo(python=python if resolved else ""),
        repro=f"nox -s {combination_id}",
    )


def results(*combinations: CombinationResult, run_id: str = "run1") -> Results:
    return Results(
        run=RunInfo(id=run_id, started="2026-11-22T10:00:00+00:00", tier="smoke"),
        combinations=list(combinations),
    )


def versions(transformers: str, peft: str = "0.17.1", torch: str = "2.13.0") -> dict[str, str]:
    return {"torch": torch, "transformers": transformers, "peft": peft}


COLLECT_ENV_TEXT = """PyTorch version: 2.13.0+cpu
Is debug build: False
CUDA used to build PyTorch: Could not collect

OS: Debian GNU/Linux 12 (bookworm) (x86_64)
Python version: 3.11.7 (main) [GCC 12.2.0] (64-bit runtime)
Is CUDA available: False
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
"""


def demo_results():
    """A small matrix with one of everything."""
    ladder = []
    for version, a in [("4.52.4", "passed"), ("4.53.0", "failed"), ("4.56.2", "failed")]:
        cases = [case(CASE_A, a), case(CASE_B, "failed" if version == "4.56.2" else "passed")]
        ladder.append(combination(f"tf{version}", versions(version), cases))
    flaky = combination(
        "flaky",
        versions("4.52.4", peft="0.15.2"),
        [case(CASE_A, "flaky", "passed on rerun 1", attempts=["failed", "passed"])],
    )
    broken = combination(
        "tf-main",
        versions("5.0.0.dev0"),
        status="install-error",
        resolved=False,
        message="resolve: No solution found when resolving dependencies",
    )
    gpu = combination(
        "gpu",
        {"torch": "system", "unsloth": "latest"},
        status="skipped",
        resolved=False,
        message="requires a CUDA GPU; this host has none",
    )
    stored = results(*ladder, flaky, broken, gpu)
    stored.run.host = {
        "platform": "Linux-x86_64",
        "cpus": 2,
        "gpus": [],
        "collect_env": {
            "combination": "tf4.52.4",
            "text": COLLECT_ENV_TEXT,
            "fields": parse_collect_env(COLLECT_ENV_TEXT),
        },
    }
    return stored


def own_source(commit: str, dirty: bool, digest: str) -> dict[str, dict]:
    """environment.sources of a combination that built ``mylib`` from its folder."""
    record = {"path": ".", "digest": f"sha256:{digest * 64}"[:71], "commit": commit}
    return {"mylib": {**record, "dirty": dirty}}


def own_package(combination_id: str, outcome: str, sources: dict) -> CombinationResult:
    """A combination of the user's own package (``mylib: "."``) beside torch."""
    stored = combination(combination_id, {"torch": "2.13.0", "mylib": "."}, [case(CASE_A, outcome)])
    stored.resolved["mylib"] = "0.1.0"
    stored.environment.sources = sources
    return stored
