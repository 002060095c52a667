"""An issue's repro kept as a case (``/repromatrix keep``, or the keep label, put by a
trusted person): from the event to the pull request. Nothing here runs the repro.

- **parse** (``checked_keeps``): each keep read against the issue's bot comment. Only
  the approved repro is kept (its sha256 is the one approved for the watch); the keep
  is filled with the pins, the versions the watch last saw it fail with and the
  expected status. Anything else is a refusal (a reply) or a note (a label's).
- **ack** (``acknowledge_keeps``): the keep recorded in the bot comment
  (``State.kept``), 👍 on the command, a reply saying what the pull request holds.
- **keep** (``changes``, ``open_pulls``: ``repromatrix issue keep``): one pull request
  per keep, written from the plan's repro checked against the approved digest again,
  and from the checkout's known_issues.yaml; nothing of it is run:

    cases/issues/test_issue_<N>.py   the repro, as string literals, in a test that runs
                                     it as the watch does (exit 0 passes, 125 skips,
                                     else fails), under a provenance header: the issue
                                     URL, the approved sha256 (the test refuses a REPRO
                                     that does not match it), the pins, the expected
                                     status
    cases/known_issues.yaml          the case registered known-broken with the issue's
                                     link, from the versions it was seen failing with
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import yaml

from repromatrix.errors import UserError
from repromatrix.github.markdown import code_span, link, text
from repromatrix.issue.bot import Comments, memory, remember
from repromatrix.issue.config import IssueSettings
from repromatrix.issue.plan import Plan, PlannedKeep, Reply
from repromatrix.issue.repro import MAX_REPRO, code_digest
from repromatrix.issue.state import Kept, State
from repromatrix.matrix.pins import parse_pin_option
from repromatrix.results import utc_now
from repromatrix.verdicts.knownissues import KnownIssue, parse_registry

Say = Callable[[str], None]
FOLDER = "issues"  # under the cases folder
REGISTRY = "known_issues.yaml"
KEPT_MARK = "# repromatrix: kept from an issue"  # the case file's first line
_HEADER_SAFE = re.compile(r"^[A-Za-z0-9 ._:/=<>!~,+@()\[\]#-]*$")


def case_file(issue: int) -> str:
    """The kept case's file, relative to the cases folder."""
    return f"{FOLDER}/test_issue_{issue}.py"


def case_id(issue: int) -> str:
    return f"{case_file(issue)}::test_issue_{issue}"


CASE_TEMPLATE = '''\
{mark} ({url}); written by /repromatrix keep, not by hand
"""Issue #{issue}'s repro, kept as a case: {url}

Kept by {by} on {day} from the repro the nightly watch runs. REPRO is the issue's
block as it was approved, byte for byte: the test refuses a REPRO whose sha256 is not
SHA256 (an edit belongs on the issue, approved again and kept again).

    issue     {url}
    sha256    {sha256}
    pins      {pins}
    expected  {expected_words}
"""

import hashlib
import subprocess
import sys

import pytest

ISSUE = {url_literal}
SHA256 = {sha256_literal}
PINS = {pins_literal}
EXPECTED = {expected_literal}
TIMEOUT = {timeout}
REPRO = "\\n".join(
    [
{lines}
    ]
)

{markers}def test_issue_{issue}(tmp_path):
    """The repro run as the watch runs it: exit 0 passes, 125 skips, anything else fails."""
    digest = hashlib.sha256(REPRO.encode("utf-8", "surrogatepass")).hexdigest()
    assert digest == SHA256, "REPRO is not the repro kept from the issue"
    script = tmp_path / "repro.py"
    script.write_text(REPRO, encoding="utf-8", errors="surrogatepass")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIMEOUT,
    )
    if done.returncode == 125:
        pytest.skip("the repro says it cannot run here (exit 125)")
    output = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, f"the repro exits {{done.returncode}}: {{output}}"
'''

EXPECTED_WORDS = {
    "fails": "fails: registered known-broken in cases/known_issues.yaml with the issue's link",
    "passes": "passes: a plain regression case (the watch last saw it pass)",
}


def render_case(
    *,
    issue: int,
    url: str,
    code: str,
    sha256: str,
    pins: list[str],
    packages: list[str],
    expected: str,
    by: str,
    day: str,
    timeout: int,
) -> str:
    """The case file's text. The repro goes in as a list of its lines, each a Python
    literal (whatever it holds), and the file is parsed before it is returned."""
    if code_digest(code) != sha256:
        raise UserError(f"issue #{issue}: the repro is not the one approved (sha256 {sha256[:12]})")
    for value in (url, by, day, *pins):
        if not _HEADER_SAFE.match(value):
            raise UserError(f"issue #{issue}: {value[:60]!r} cannot go into a case's header")
    lines = "\n".join(f"        {line!r}," for line in code.split("\n"))
    markers = "".join(f"@pytest.mark.requires({json.dumps(name)})\n" for name in packages)
    text = CASE_TEMPLATE.format(
        mark=KEPT_MARK, url=url, issue=issue, by=by or "a maintainer", day=day, sha256=sha256,
        pins=", ".join(pins) or "none", expected_words=EXPECTED_WORDS[expected],
        url_literal=json.dumps(url), sha256_literal=json.dumps(sha256),
        pins_literal=repr(tuple(pins)), expected_literal=json.dumps(expected),
        timeout=int(timeout), lines=lines, markers=markers,
    )  # fmt: skip
    tree = ast.parse(text)
    if _constant(tree, "REPRO") != code:  # what the file holds is the repro, exactly
        raise UserError(f"issue #{issue}: the case file would not hold the repro as approved")
    return text


def _constant(tree: ast.Module, name: str) -> object:
    """A module-level constant's value (a literal, or "\\n".join of a literal list)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = node.value
            if isinstance(value, ast.Call) and value.args:  # "\n".join([...])
                return "\n".join(ast.literal_eval(value.args[0]))
            return ast.literal_eval(value)
    return None


# --------------------------------------------------------------------------- texts: the registry


def registered(text: str, *, issue: int, url: str, failing: dict[str, str], source: str) -> str:
    """known_issues.yaml's text (``text``: as it is) with the kept case registered
    known-broken from the versions it was seen failing with (none seen: every version),
    with the issue's link. Checked by reading the result back."""
    case = case_id(issue)
    if case in _cases(text, source):
        return text
    entry = {
        "case": case,
        "when": {name: f">={version}" for name, version in failing.items()},
        "link": url,
        "note": f"issue #{issue}'s repro, kept by /repromatrix keep: known-broken until fixed",
    }
    block = yaml.safe_dump([entry], sort_keys=False, default_flow_style=None, width=200)
    # An empty registry written as a flow list ("[]", as `repromatrix init` does) takes
    # block entries only without it.
    kept = [line for line in text.splitlines() if line.strip() != "[]"]
    head = "".join(f"{line}\n" for line in kept)
    added = f"{head}\n# Kept from {url} (/repromatrix keep).\n{block}"
    _check(added, source, case, present=True)
    return added


def _cases(text: str, source: str) -> set[str]:
    return {issue.case for issue in registry_cases(text, source)}


def registry_cases(text: str, source: str) -> tuple[KnownIssue, ...]:
    """The entries of known_issues.yaml's text (a bad one: one line, exit 2)."""
    try:
        return parse_registry(yaml.safe_load(text or "") or [], source).issues
    except yaml.YAMLError as err:
        raise UserError(f"{source}: not YAML ({err})") from None


def _check(text: str, source: str, case: str, *, present: bool) -> None:
    try:
        found = case in _cases(text, source)
    except yaml.YAMLError as err:
        raise UserError(f"{source}: the edit would not be YAML ({err})") from None
    if found != present:
        raise UserError(f"{source}: the edit of {case} did not take (edited by hand?)")


# --------------------------------------------------------------------------- parse


def checked_keeps(
    plan: Plan, client: Comments, settings: IssueSettings, server: str, repros: dict[int, str]
) -> None:
    """The plan's keeps checked against each issue's bot comment, in place: kept ones
    filled, the others a reply (a command's) or a note (a label's)."""
    kept: list[PlannedKeep] = []
    for keep in plan.keeps:
        state, _ids = memory(client.comments(keep.issue), plan.bots)
        refusal = _refusal(keep, state, settings)
        if refusal is None:
            kept.append(_filled(keep, state, settings, f"{server}/{plan.repository}"))
            plan.notes.append(f"#{keep.issue}: keep {case_id(keep.issue)}")
            continue
        repros.pop(keep.issue, None)  # the plan holds no repro it will not keep
        plan.notes.append(f"#{keep.issue}: not kept: {refusal}")
        if keep.comment is not None:
            plan.replies.append(Reply(issue=keep.issue, comment=keep.comment, body=refusal))
    plan.keeps = kept


def _refusal(keep: PlannedKeep, state: State, settings: IssueSettings) -> str | None:
    if state.approved is None:
        return (
            "repromatrix keeps the approved repro only, and none is approved yet: a "
            f"maintainer comments `/repromatrix approve` (or labels it {settings.label}) first"
        )
    if state.approved.sha256 != keep.sha256:
        return (
            f"the issue's repro (sha256 {keep.sha256[:12]}) is not the approved one "
            f"({state.approved.sha256[:12]}): a maintainer approves it first"
        )
    return None


def _filled(keep: PlannedKeep, state: State, settings: IssueSettings, base: str) -> PlannedKeep:
    """What the keep writes: the pins (the repository's, then the repro's), the versions
    the watch last saw it fail with, the expected status."""
    chosen: dict[str, str] = {}
    for pin in [*settings.pins, *keep.pins]:
        chosen[parse_pin_option(pin).package] = pin
    seen = state.decisive
    failing = dict(seen.versions) if seen is not None and seen.outcome == "bad" else {}
    return keep.model_copy(
        update={
            "url": f"{base}/issues/{keep.issue}",
            "pins": list(chosen.values()),
            "failing": {n: v for n, v in failing.items() if n in keep.packages},
            "expected": "passes" if seen is not None and seen.outcome == "good" else "fails",
            "minutes": settings.minutes,
        }
    )


# --------------------------------------------------------------------------- ack


def acknowledge_keeps(plan: Plan, client: Comments, say: Say = print) -> None:
    """Each keep into the bot comment, with a reply; 👍 on the command."""
    for keep in plan.keeps:
        kept = Kept(case=case_id(keep.issue), sha256=keep.sha256, by=keep.by, at=utc_now())
        remember(client, keep.issue, plan.bots, _kept(kept), say)
        client.create(keep.issue, keep_reply(keep))
        if keep.comment is not None:
            client.react(keep.comment, "+1")
        say(f"#{keep.issue}: keep {kept.case}")


def _kept(kept: Kept) -> Callable[[State], tuple[State, bool]]:
    return lambda state: (state.model_copy(deep=True, update={"kept": kept}), False)


def keep_reply(keep: PlannedKeep) -> str:
    expected = "registered as known-broken with this issue's link"
    if keep.expected == "passes":
        expected = "expected to pass (the watch last saw it pass): a plain regression case"
    return (
        f"Keeping the approved repro (sha256 {code_span(keep.sha256)}) as the case "
        f"{code_span(case_id(keep.issue))}, {expected}. This run's keep job opens the pull "
        "request adding it (written from the approved repro, never run); once a maintainer "
        "merges it, the nightly runs it like any case."
    )


# --------------------------------------------------------------------------- keep


class Pulls(Protocol):
    def head(self, branch: str) -> str: ...
    def branch(self, name: str, sha: str) -> None: ...
    def put(self, branch: str, path: str, text: str, message: str) -> None: ...
    def open(self, *, base: str, branch: str, title: str, body: str) -> str: ...


@dataclass(frozen=True)
class Change:
    """One pull request: its branch, title, body and files (path -> text)."""

    branch: str
    title: str
    body: str
    files: dict[str, str]


def changes(plan: Plan, folder: Path, cases: Path, run_url: str, cases_path: str) -> list[Change]:
    """The pull requests of the plan's keeps (``folder``: the plan; ``cases``: the
    checkout's cases folder, ``cases_path``: the same, relative to the repository)."""
    registry_path = f"{cases_path}/{REGISTRY}"
    found = []
    for keep in plan.keeps:
        files = {
            f"{cases_path}/{case_file(keep.issue)}": render_case(
                issue=keep.issue, url=keep.url, code=_repro(folder, keep), sha256=keep.sha256,
                pins=keep.pins, packages=keep.packages, expected=keep.expected,
                by=keep.by, day=utc_now()[:10], timeout=keep.minutes * 60,
            ),
        }  # fmt: skip
        if keep.expected == "fails":
            files[registry_path] = registered(
                read_checked_out(cases / REGISTRY), issue=keep.issue, url=keep.url,
                failing=keep.failing, source=registry_path,
            )  # fmt: skip
        found.append(Change(f"repromatrix/keep-{keep.issue}-{keep.sha256[:8]}",
                            f"Keep issue #{keep.issue}'s repro as a case",
                            _keep_body(keep, run_url), files))  # fmt: skip
    return found


def open_pulls(found: list[Change], pulls: Pulls, base: str, say: Say = print) -> int:
    """Each change as a pull request into ``base``; how many could not be opened (one
    already open from the same branch is said, not failed)."""
    failed = 0
    for change in found:
        try:
            pulls.branch(change.branch, pulls.head(base))
        except UserError as err:
            if "already exists" in str(err).lower():
                say(f"{change.branch}: the branch exists already (a pull request is open)")
                continue
            failed += 1
            say(f"{change.branch}: {err}")
            continue
        try:
            for path, content in change.files.items():
                pulls.put(change.branch, path, content, f"{change.title}: {path}")
            url = pulls.open(base=base, branch=change.branch, title=change.title, body=change.body)
            say(f"opened {url or change.branch}: {change.title}")
        except UserError as err:
            failed += 1
            say(f"{change.branch}: {err}")
    return failed


def _repro(folder: Path, keep: PlannedKeep) -> str:
    """The plan's repro of the issue, checked against the approved digest."""
    path = folder / f"repro-{keep.issue}.py"
    if path.is_symlink() or not path.is_file() or path.stat().st_size > 4 * MAX_REPRO:
        raise UserError(f"#{keep.issue}: the plan holds no repro to keep")
    code = path.read_text(encoding="utf-8", errors="surrogatepass")
    if code_digest(code) != keep.sha256:
        raise UserError(f"#{keep.issue}: the plan's repro is not the approved one; nothing kept")
    return code


def read_checked_out(path: Path) -> str:
    """A file of the checkout ('' when absent, a link or unreadable)."""
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _keep_body(keep: PlannedKeep, run_url: str) -> str:
    seen = ", ".join(f"{n} {v}" for n, v in keep.failing.items())
    registered_words = (
        f"registered known-broken in {code_span(REGISTRY)} with the issue's link"
        + (f", from {text(seen)}" if seen else "")
        if keep.expected == "fails"
        else "expected to pass: the watch last saw it pass"
    )
    return (
        f"Keeps the repro of #{keep.issue} as the case {code_span(case_id(keep.issue))}, "
        f"{registered_words}.\n\n"
        f"- the approved repro: sha256 {code_span(keep.sha256)}, kept by {text(keep.by)}\n"
        "- written from the repro by its digest; nothing ran it to write this\n"
        "- once merged, the nightly runs it like any case\n\n"
        f"{link('the run', run_url) if run_url else ''}\n"
    )
