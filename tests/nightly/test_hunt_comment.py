"""A hunt's answer on an issue (`repromatrix hunt-comment`, what bisect.yml and
culprit.yml post): its report inert and within GitHub's limit, the verdict kept, the
marker unbreakable; and the tracking issue taking answers from the bot alone. Before,
the workflows posted the report with `cat` and a printf'd marker, and the tracking
issue took any commenter's bold line as the verdict."""

from __future__ import annotations

from pathlib import Path

from repromatrix import cli
from repromatrix.github.hidden import read_hidden
from repromatrix.github.inert import problems
from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.nightly.hunt_comment import answers_in, comment_body, verdict_of

RUN = "https://github.com/o/r/actions/runs/9"
VERDICT = "first bad: packaging 22.0 (last good: 21.3), 4 steps, 1m02s"
BOT = {"login": "github-actions[bot]", "type": "Bot"}


def report(rows: int = 3, script: str = "import packaging\n") -> str:
    table = "| # | version | outcome | detail |\n| ---: | --- | --- | --- |\n"
    row = "| {} | 22.0 | bad | @octo/core see #1 <img src=x> |\n"
    table += "".join(row.format(i) for i in range(rows))
    return (
        f"### Bisect of packaging: first-bad\n\n**{VERDICT}**\n\n{table}\n"
        f"<details>\n<summary>script.py</summary>\n\n```python\n{script}```\n\n</details>\n"
    )


def test_the_report_is_posted_inert_headed_by_the_hunt_and_its_run() -> None:
    # A script holding a tab-closed fence broke out of bisect.md's fixed ```python fence.
    hostile = report(script="s = '''\n```\t\n@alice ![x](https://t.example/x.png)\n'''\n")
    title, artifact = "Bisect of packaging 21.3..22.0", "bisect-packaging-21.3-22.0"
    body = comment_body(hostile, title=title, run_url=RUN, artifact=artifact, hunt="bisect:k")
    first, rest = body.split("\n", 1)
    assert read_hidden(first, "hunt", line="first") == {
        "key": "bisect:k",
        "verdict": VERDICT,
    }
    assert rest.startswith(f"Bisect of packaging 21.3..22.0 ([run]({RUN})):")
    assert [p for p in problems(rest) if p != "link"] == [] and rest.count("](") == 1


def test_a_79k_report_fits_keeps_its_verdict_and_names_its_artifact() -> None:
    big = report(rows=1500)
    assert len(big) > 79_000
    body = comment_body(big, title="Bisect", run_url=RUN, artifact="bisect-packaging-21.3-22.0")
    assert len(body) <= COMMENT_LIMIT
    assert f"**{VERDICT}**" in body
    assert "the whole report is the artifact `bisect-packaging-21.3-22.0`" in body
    # Even a report whose verdict comes after more than fits keeps it at the top.
    late = "x " * 40_000 + f"\n\n**{VERDICT}**\n"
    assert f"**{VERDICT}**" in comment_body(late, title="B", run_url=RUN, artifact="a")


def test_a_marker_key_cannot_close_its_comment() -> None:
    key = "bisect:x:1:2:pk:test_a.py::t[a --> b --!> <img src=x>]"
    body = comment_body(None, title="Bisect", run_url=RUN, artifact="a", hunt=key)
    first = body.split("\n", 1)[0]
    assert first.count("-->") == 1 and first.endswith("-->") and "--!>" not in first
    assert read_hidden(first, "hunt", line="first")["key"] == key
    assert "Bisect ended without a report" in body


def test_only_the_bots_own_comments_answer_for_a_hunt() -> None:
    real = comment_body(report(), title="B", run_url=RUN, artifact="a", hunt="k")
    forged = comment_body(report().replace("22.0", "99.0"), title="B", run_url=RUN,
                          artifact="a", hunt="k")  # fmt: skip
    comments = [
        {"user": BOT, "body": real, "html_url": "https://g/c/1"},
        {"user": {"login": "mallory", "type": "User"}, "body": forged, "html_url": "x"},
        {"user": BOT, "body": f"**{VERDICT}**\n<!-- repromatrix:hunt k -->"},  # no marker line
        {"user": {"login": "my-app[bot]", "type": "Bot"}, "body": forged, "html_url": "y"},
    ]
    assert answers_in(comments, ["github-actions[bot]"]) == {"k": (VERDICT, "https://g/c/1")}
    assert answers_in(comments, ["my-app[bot]"])["k"][0].startswith("first bad: packaging 99.0")
    assert verdict_of("no verdict here\n\n**bold** and more\n") == ""


def test_the_command_writes_the_comment(tmp_path: Path) -> None:
    (tmp_path / "bisect.md").write_text(report())
    out = tmp_path / "comment.md"
    argv = ["hunt-comment", "--report", str(tmp_path / "bisect.md"), "--title", "Bisect",
            "--run-url", RUN, "--artifact", "a", "--hunt", "k", "--out", str(out)]  # fmt: skip
    assert cli.main(argv) == 0
    assert read_hidden(out.read_text(), "hunt", line="first")["verdict"] == VERDICT
    argv[2] = str(tmp_path / "missing.md")
    assert cli.main(argv) == 0 and "ended without a report" in out.read_text()
