"""A hunt's answer on an issue (bisect.yml's and culprit.yml's comment job), and the
tracking issue reading it back.

The report (bisect.md, culprit.md) was written by a job that ran third-party releases:
it is posted only through the inert renderer (github/inert.py), within GitHub's limit,
headed by a line of the bot's own (the hunt, its run) and, on the comment's first line,
the hunt's marker: the one hidden-state codec (github/hidden.py) holding the hunt's key
and its verdict, so no text in the key or the report can close the HTML comment it
sits in (``-->``, ``--!>``). Cut, the comment keeps the verdict and names the artifact
that holds the whole report.

The tracking issue takes a hunt's answer only from a comment the workflow's own bot
identity wrote (``bots``: github-actions[bot], or a GitHub App's NAME[bot] named in
.github/repromatrix.yml's ``issue.bots``) whose first line is that marker: anyone can
comment on the tracking issue, and nobody else speaks for a hunt.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from repromatrix.github.authors import written_by
from repromatrix.github.hidden import hidden, read_hidden
from repromatrix.github.inert import inert
from repromatrix.github.markdown import COMMENT_LIMIT, code_span, link, one_line, text
from repromatrix.github.reading import parsed

KIND = "hunt"
MAX_REPORT = 4_000_000  # bytes of a report read
MAX_VERDICT = 300  # characters of a verdict kept


def marker(key: str, verdict: str) -> str:
    """The first line of a hunt's comment: its key and verdict, hidden and encoded."""
    return hidden(KIND, {"key": one_line(key, 500), "verdict": one_line(verdict, MAX_VERDICT)})


def verdict_of(report: str) -> str:
    """The report's verdict: its first paragraph that is bold and nothing else (bisect.md
    and culprit.md open with one), as plain text; "" when it has none."""
    for node in parsed(report[:MAX_REPORT]).walk():
        if node.type != "paragraph" or not node.children:
            continue
        spans = [  # markdown-it-py leaves empty text around the bold
            c
            for c in node.children[0].children
            if (c.type != "softbreak" and c.content.strip() != "") or c.type == "strong"
        ]
        if len(spans) == 1 and spans[0].type == "strong":
            shown = "".join(n.content for n in spans[0].walk() if n.type in ("text", "code_inline"))
            return one_line(shown, MAX_VERDICT)
    return ""


def read_report(path: Path) -> str | None:
    """The report's text, at most ``MAX_REPORT`` bytes of it; None when there is no
    report (a hunt that died before its upload), or what is there is not a file."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with open(path, "rb") as handle:
            return handle.read(MAX_REPORT).decode("utf-8", errors="replace")
    except OSError:
        return None


def comment_body(
    report: str | None,
    *,
    title: str,
    run_url: str,
    artifact: str,
    hunt: str = "",
    limit: int = COMMENT_LIMIT,
) -> str:
    """The comment: the marker (given a hunt key), ``title`` and the run, then the
    report made inert, all within ``limit`` characters; cut, it keeps the verdict and
    says which artifact of the run holds the whole report."""
    run = link("run", run_url)
    verdict = verdict_of(report) if report is not None else ""
    head = [marker(hunt, verdict)] if hunt else []
    if report is None:
        head.append(f"{text(title)} ended without a report ({run}).")
        return "\n".join(head) + "\n"
    head += [f"{text(title)} ({run}):", ""]
    note = (
        f"_… cut to fit a comment: the whole report is the artifact "
        f"{code_span(artifact)} of this {run}._"
    )
    said = f"**{text(verdict)}**" if verdict else ""
    room = limit - sum(len(line) + 1 for line in head) - len(said) - 2
    body = inert(report, limit=room, note=note, links=[run_url])
    if said and said not in body:  # cut before the verdict: it still heads the comment
        head += [said, ""]
    return "\n".join([*head, body]) + "\n"


def answers_in(comments: Iterable[object], bots: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Hunt key -> (its verdict, the comment's link), from the comments one of the
    ``bots`` logins wrote whose first line is a hunt's marker (the REST API's shape:
    ``user.login``, ``body``, ``html_url``). Later comments win."""
    bots = list(bots)
    found: dict[str, tuple[str, str]] = {}
    for comment in comments:
        if not isinstance(comment, dict) or not written_by(comment, bots):
            continue
        data = read_hidden(comment.get("body"), KIND, line="first")
        if not isinstance(data, dict) or not isinstance(data.get("key"), str):
            continue
        verdict = data.get("verdict") if isinstance(data.get("verdict"), str) else ""
        url = comment.get("html_url") or comment.get("url") or ""
        found[data["key"]] = (one_line(verdict, MAX_VERDICT), url if isinstance(url, str) else "")
    return found
