"""summary.md (the step summary, and what the tracking issue folds in) holds text from
the jobs that ran third-party code: case ids, messages. Read back with markdown-it-py,
none of it renders a link, image, HTML or a live mention; the <details> summaries say
it as escaped HTML text (before, a mention in a case id notified from a <summary>)."""

from __future__ import annotations

from pathlib import Path

from repromatrix.github.inert import inert, problems
from repromatrix.reports import write_all
from repromatrix.results import CaseResult, CombinationResult, Results
from repromatrix.verdicts import judge

HOSTILE = "@alice #12 <img src=x> [a](https://evil.example) ![i](https://t.example/x.png) `x` -->"


def test_summary_md_from_hostile_results_is_inert(tmp_path: Path) -> None:
    failed = CombinationResult(
        id="tf-latest", tier="nightly", requested={"transformers": "latest"},
        resolved={"transformers": "4.58.0"}, status="failed", message=HOSTILE,
        cases=[CaseResult(id=f"test_a.py::test_x[{HOSTILE}]", status="failed",
                          outcome="failed", message=HOSTILE, error_type="E@x")],
    )  # fmt: skip
    broken = CombinationResult(
        id="tf-old", tier="nightly", requested={"transformers": "4.0"}, resolved={},
        status="install-error", message=HOSTILE,
    )  # fmt: skip
    results = Results(combinations=[failed, broken])
    judge(results, None, None)
    summary = write_all(results, tmp_path)["summary.md"].read_text()
    # The project's own footer (<sub>) is its only inline HTML.
    assert problems(summary) == ["html_inline", "html_inline"]
    assert "<sub>" in summary.rsplit("\n\n", 1)[-1]
    posted = inert(summary)
    assert problems(posted) == []
    assert "<summary>📦 <code>tf-old</code> · install-error: @\u200balice" in posted
