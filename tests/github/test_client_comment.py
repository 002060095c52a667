"""`sweep --issue N` and `report --issue N` post a report of the user's own run: one that
is too long for GitHub (65,536 characters: a sweep.md of many releases) is posted cut by
the inert renderer, with a line naming the whole report, never refused and lost."""

from __future__ import annotations

from pathlib import Path

from repromatrix.github.client import GitHub, fitted
from repromatrix.github.markdown import COMMENT_LIMIT


def _long_report(tmp_path: Path) -> Path:
    rows = "\n".join(f"| 1.{n}.0 | bad | 0.2 | exit 1: @alice {'x' * 60} |" for n in range(2000))
    report = tmp_path / "sweep.md"
    report.write_text(f"# Sweep\n\n**1.0.0–1.1999.0 bad**\n\n| version | outcome | s | message |\n"
                      f"|---|---|---:|---|\n{rows}\n")  # fmt: skip
    return report


def test_a_report_that_fits_is_posted_as_it_is(tmp_path: Path) -> None:
    report = tmp_path / "sweep.md"
    report.write_text("**21.2–21.3 good · 22.0 bad**\n")
    assert fitted(report) == report


def test_a_report_too_long_is_cut_to_fit_with_the_verdict_and_a_note(tmp_path: Path) -> None:
    report = _long_report(tmp_path)
    assert len(report.read_text()) > COMMENT_LIMIT
    cut = fitted(report)
    assert cut == tmp_path / "sweep.comment.md"
    text = cut.read_text()
    assert len(text) <= COMMENT_LIMIT
    assert "**1.0.0–1.1999.0 bad**" in text  # the verdict leads
    assert "the whole report is `sweep.md`" in text.splitlines()[-1]
    assert "@alice" not in text  # inert: the cut text mentions no one


def test_without_gh_the_command_printed_posts_the_cut_file(tmp_path: Path) -> None:
    said: list[str] = []
    client = GitHub(say=said.append)
    client.gh = None  # no gh on this machine
    assert client.comment(7, _long_report(tmp_path)) is False
    assert "--body-file" in said[-1] and "sweep.comment.md" in said[-1]
