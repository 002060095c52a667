"""A bounds record on GitHub (bounds.yml's post job; ``repromatrix bounds-post``):

- ``--tracking``: one tracking issue per target (label ``bounds``, its first line the
  hidden state naming the target): opened when a declared bound is wrong, its body
  updated while one is, closed with a comment once every bound holds again;
- ``--comment PR``: the table on a pull request, one comment edited in place on each
  run (its first line marks it as the bounds comment of that target).

It reads bounds.json as data (record.read_record validates it: the job that wrote it
ran third-party releases and, on a pull request, the pull request's code) and renders
the text itself, through the one inert renderer (github/inert.py). It runs nothing of
the record.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.github import markdown as md
from repromatrix.github.authors import DEFAULT_BOTS, written_by
from repromatrix.github.client import GitHub, IssueComments
from repromatrix.github.hidden import hidden, read_hidden
from repromatrix.github.inert import inert
from repromatrix.hunts.bounds.record import BoundsRecord, read_record
from repromatrix.hunts.bounds.report import markdown

LABEL = "bounds"
KIND = "bounds"


def record_in(folder: Path) -> BoundsRecord:
    """The one bounds.json in ``folder`` (the file, its folder, or the folder of the
    hunt's folder as the workflow's artifact holds it)."""
    if folder.is_file() or (folder / "bounds.json").is_file():
        return read_record(folder)
    found = sorted(folder.glob("*/bounds.json")) if folder.is_dir() else []
    if len(found) != 1:
        raise UserError(f"{folder}: expected one bounds.json in it, found {len(found)}")
    return read_record(found[0])


def body(record: BoundsRecord, run_url: str = "") -> str:
    """The issue body or comment: the hidden line naming the target, then summary.md
    rendered from the record through the one inert renderer (github/inert.py), within
    GitHub's limit (cut, it says where the whole report is), and the run's link."""
    first = hidden(KIND, {"target": record.name})
    run = f"\n\nFrom {md.link('this run', run_url)}." if run_url else ""
    note = "The rest is cut here: the whole report is the run's `bounds` artifact."
    room = md.COMMENT_LIMIT - len(first) - len(run) - 2
    shown = inert(markdown(record), limit=room, note=note, links=[run_url] if run_url else [])
    return f"{first}\n{shown}{run}"


@dataclass(frozen=True)
class Action:
    """What the tracking issue needs: open, update, close or nothing."""

    verb: str  # open | update | close | none
    issue: int | None = None


def tracking_action(record: BoundsRecord, issues: list[dict]) -> Action:
    """Pure: the open tracking issue of this target (if any) and the record decide."""
    mine = [i for i in issues if _target(i.get("body") or "") == record.name]
    open_issue = next((i for i in mine if str(i.get("state", "")).lower() == "open"), None)
    number = int(open_issue["number"]) if open_issue else None
    if record.status != "done":
        return Action("none", number)
    if record.wrong:
        return Action("update" if number else "open", number)
    if record.holds and number:
        return Action("close", number)
    return Action("update" if number else "none", number)


def track(record: BoundsRecord, github: GitHub, *, run_url: str = "", say=print) -> Action:
    """Open, update or close the target's tracking issue."""
    action = tracking_action(record, github.issues(LABEL, state="all"))
    with tempfile.TemporaryDirectory(prefix="repromatrix-bounds-") as folder:
        written = Path(folder) / "body.md"
        written.write_text(body(record, run_url))
        if action.verb == "open":
            title = f"Declared bounds of {record.name} are wrong"
            github.create_issue(title=title, label=LABEL, body=written)
        elif action.verb in ("update", "close"):
            assert action.issue is not None
            github.edit_body(action.issue, written)
        if action.verb == "close":
            assert action.issue is not None
            closing = Path(folder) / "closing.md"
            closing.write_text(
                f"Every declared bound of {md.text(record.name)} holds again"
                + (f" ({md.link('this run', run_url)})" if run_url else "")
                + "; closing. bounds.yml opens one again when a bound goes wrong."
            )
            github.post(action.issue, closing)
            github.close(action.issue)
    say(f"tracking issue: {action.verb}" + (f" #{action.issue}" if action.issue else ""))
    return action


def comment(
    record: BoundsRecord, comments: IssueComments, pull: int, *, run_url: str = "",
    bots: tuple[str, ...] = DEFAULT_BOTS, say: Callable[[str], None] = print,
) -> None:  # fmt: skip
    """The table on pull request ``pull``: this target's comment edited, else a new one."""
    text = body(record, run_url)
    for existing in comments.comments(pull):
        if not written_by(existing, bots):
            continue  # only the workflow's own comment: anyone can write a look-alike
        if _target(str(existing.get("body") or "")) == record.name and existing.get("id"):
            comments.edit(int(existing["id"]), text)
            say(f"updated the bounds comment on #{pull}")
            return
    comments.create(pull, text)
    say(f"commented the bounds table on #{pull}")


def _target(text: str) -> str | None:
    data = read_hidden(text, KIND, line="first")
    target = data.get("target") if isinstance(data, dict) else None
    return target if isinstance(target, str) else None
