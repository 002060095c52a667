"""The one GitHub client: the few things repromatrix asks of GitHub, through the ``gh``
command line (authenticated by GH_TOKEN in CI, or ``gh auth login``): issues listed,
opened, edited, commented, closed and reopened (the nightly's tracking issue,
nightly/tracking.py decides which); workflows dispatched; last night's artifact
downloaded; a summary posted on an issue; for issue commands (issue/), an issue's
comments listed, created, edited and deleted, a reaction on a comment, the open
issues with a label, a labeller's permission (``IssueComments``, through ``gh api``).
Without a usable gh the commands are printed instead, so a person can run them where
gh works, and nothing claims to have been done."""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from repromatrix.errors import UserError
from repromatrix.github.inert import inert
from repromatrix.github.markdown import COMMENT_LIMIT, code_span
from repromatrix.redact import redact_text

if TYPE_CHECKING:
    from repromatrix.procs import Completed

TRACKING_LABEL = "nightly-regression"
TRACKING_TITLE = "Nightly: regressions"
GH_TIMEOUT = 120.0


class GitHub:
    def __init__(
        self,
        *,
        gh: str | None = None,
        repo: str | None = None,
        say: Callable[[str], None] = print,
    ) -> None:
        self.gh = gh if gh is not None else shutil.which("gh")
        self.repo = repo
        self.say = say

    @property
    def available(self) -> bool:
        return self.gh is not None

    def _call(self, args: Sequence[str], *, repo_flag: bool = True) -> str:
        """``gh ARGS`` (with --repo, which gh api does not take: its path names it)."""
        command = ["gh", *args, *(["--repo", self.repo] if self.repo and repo_flag else [])]
        if not self.available:
            self.say(f"gh is not installed; run: {shlex.join(command)}")
            return ""
        done = _run([self.gh or "gh", *command[1:]])
        if done.returncode != 0:
            detail = " ".join(redact_text(done.stderr).split())[:500]
            raise UserError(f"gh {' '.join(args[:2])} failed: {detail or 'no message'}")
        return done.stdout

    def issues(self, label: str, *, state: str = "all") -> list[dict]:
        """Issues with ``label`` (newest first): number, title, state, body."""
        listed = self._call(
            ["issue", "list", "--state", state, "--label", label, "--limit", "20",
             "--json", "number,title,state,body"]
        )  # fmt: skip
        found = json.loads(listed or "[]")
        return found if isinstance(found, list) else []

    def comments(self, number: int) -> list[dict]:
        """The comments of issue ``number``, oldest first, as the REST API has them
        (body, html_url, user.login): who wrote one is its ``[bot]`` login there, which
        GraphQL (``gh issue view --json comments``) does not say."""
        repo = self.repo or "{owner}/{repo}"  # gh fills the placeholders from GH_REPO / git
        listed = self._call(
            ["api", f"repos/{repo}/issues/{number}/comments?per_page=100", "--paginate"],
            repo_flag=False,
        )
        pages = _json_values(listed) if listed.strip() else []
        return [c for page in pages if isinstance(page, list) for c in page if isinstance(c, dict)]

    def create_issue(self, *, title: str, label: str, body: Path) -> int | None:
        """Open an issue; its number (None without gh). The label is created first
        (--force: left as it is when it exists); a token that may not create labels
        gets one warning and the issue is opened all the same."""
        try:
            self._call(["label", "create", label, "--force", "--color", "B60205"])
        except UserError as err:
            self.say(f"warning: {err}; opening the issue without creating the label")
        created = self._call(
            ["issue", "create", "--title", title, "--label", label, "--body-file", str(body)]
        )
        if not created.strip():
            return None
        # gh prints the new issue's URL: .../issues/<number>
        return int(created.strip().splitlines()[-1].rstrip("/").rsplit("/", 1)[-1])

    def edit_body(self, number: int, body: Path) -> None:
        self._call(["issue", "edit", str(number), "--body-file", str(body)])

    def post(self, number: int, body: Path) -> None:
        """Comment ``body`` on issue ``number`` (a failure is a UserError, unlike
        ``comment``, which prints the command for a person to run)."""
        self._call(["issue", "comment", str(number), "--body-file", str(body)])

    def close(self, number: int) -> None:
        self._call(["issue", "close", str(number)])

    def reopen(self, number: int) -> None:
        self._call(["issue", "reopen", str(number)])

    def completed_runs(
        self, workflow: str, *, branch: str | None, limit: int = 5, status: str = "completed"
    ) -> list[int]:
        """Ids of the newest completed runs of ``workflow`` (on ``branch``); ``status``
        ``success``: only those that succeeded."""
        args = ["run", "list", "--workflow", workflow, "--status", status]
        if branch:
            args += ["--branch", branch]
        listed = self._call([*args, "--limit", str(limit), "--json", "databaseId"])
        found = json.loads(listed or "[]")
        return [int(r["databaseId"]) for r in found if isinstance(r, dict) and "databaseId" in r]

    def download(self, run: int, *, name: str, into: Path) -> None:
        """Artifact ``name`` of run ``run`` into ``into`` (a UserError when it is not there)."""
        self._call(["run", "download", str(run), "--name", name, "--dir", str(into)])

    def dispatch(self, workflow: str, inputs: dict[str, str], *, ref: str | None = None) -> bool:
        """Start ``workflow``; True when started (without gh its command is printed)."""
        args = ["workflow", "run", workflow]
        if ref:
            args += ["--ref", ref]
        for key, value in inputs.items():
            args += ["-f", f"{key}={value}"]
        self._call(args)
        if not self.available:
            return False
        span = (
            f"{inputs.get('package')} {inputs.get('good')}..{inputs.get('bad')}"
            if "package" in inputs
            else inputs.get("name", "")  # a culprit hunt: its locks are too long to show
        )
        self.say(f"dispatched {workflow}: {span}")
        return True

    def comment(self, issue: int, body_file: Path) -> bool:
        """Post ``body_file`` on ``issue``; True when posted. Without gh, or with a gh
        that is not logged in, the exact command is printed instead."""
        body_file = fitted(body_file)
        command = ["gh", "issue", "comment", str(issue), "--body-file", _shown(body_file)]
        if self.repo:
            command += ["--repo", self.repo]
        if not self.available:
            self.say("gh is not installed; to post the summary, run:")
            self.say("  " + shlex.join(command))
            return False
        if _run([self.gh or "gh", "auth", "status"]).returncode != 0:
            self.say("gh is not authenticated (gh auth status); to post the summary, run:")
            self.say("  " + shlex.join(command))
            return False
        done = _run([self.gh or "gh", *command[1:]])
        if done.returncode != 0:
            detail = " ".join(redact_text(done.stderr or done.stdout).split())[:300]
            raise UserError(f"{shlex.join(command)} failed (exit {done.returncode}): {detail}")
        url = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else f"issue {issue}"
        self.say(f"posted the summary: {url}")
        return True


class IssueComments:
    """Issue comments and reactions through ``gh api`` (REST), for issue/'s bot. Unlike
    GitHub above it needs gh: the workflow that uses it always has one."""

    def __init__(self, repo: str, *, gh: str | None = None) -> None:
        self.repo = repo
        self.gh = gh if gh is not None else shutil.which("gh")

    def _api(self, path: str, *args: str, payload: dict | None = None) -> Any:
        if self.gh is None:
            raise UserError("gh is not installed: issue commands post through it")
        command = [self.gh, "api", f"repos/{self.repo}/{path}", *args]
        with tempfile.TemporaryDirectory(prefix="repromatrix-gh-") as folder:
            if payload is not None:
                body = Path(folder) / "payload.json"
                body.write_text(json.dumps(payload))
                command += ["--input", str(body)]
            done = _run(command)
        if done.returncode != 0:
            detail = " ".join(redact_text(done.stderr or done.stdout).split())[:500]
            raise UserError(f"gh api {path} failed: {detail or 'no message'}")
        return _json_values(done.stdout)

    def comments(self, issue: int) -> list[dict]:
        """Every comment of the issue, oldest first (all pages)."""
        pages = self._api(f"issues/{issue}/comments?per_page=100", "--paginate")
        return [c for page in pages if isinstance(page, list) for c in page if isinstance(c, dict)]

    def create(self, issue: int, body: str) -> int | None:
        made = self._api(f"issues/{issue}/comments", "--method", "POST", payload={"body": body})
        first = made[0] if made else {}
        return first.get("id") if isinstance(first, dict) else None

    def edit(self, comment: int, body: str) -> None:
        self._api(f"issues/comments/{comment}", "--method", "PATCH", payload={"body": body})

    def delete(self, comment: int) -> None:
        self._api(f"issues/comments/{comment}", "--method", "DELETE")

    def permission(self, login: str) -> str:
        """What ``login`` may do here: admin, maintain, write, triage, read or none (a
        labeled event says who labelled, not with what right)."""
        found = self._api(f"collaborators/{quote(login, safe='')}/permission")
        first = found[0] if found else {}
        role = first.get("role_name") if isinstance(first, dict) else None
        return role if isinstance(role, str) else "none"

    def react(self, comment: int, content: str) -> None:
        """A reaction on a comment: eyes, rocket, confused, ..."""
        self._api(
            f"issues/comments/{comment}/reactions", "--method", "POST", payload={"content": content}
        )

    def close(self, issue: int) -> None:
        """Close the issue as completed (the watch, where ``issue: close: true``)."""
        payload = {"state": "closed", "state_reason": "completed"}
        self._api(f"issues/{issue}", "--method", "PATCH", payload=payload)

    def labelled(self, label: str, limit: int = 200) -> list[dict]:
        """Open issues (not pull requests) with ``label``, oldest first."""
        query = f"issues?state=open&labels={quote(label)}&sort=created&direction=asc&per_page=100"
        pages = self._api(query, "--paginate")
        found = [i for page in pages if isinstance(page, list) for i in page if isinstance(i, dict)]
        return [i for i in found if "pull_request" not in i][:limit]


class PullRequests(IssueComments):
    """A pull request of a few files, through ``gh api`` (REST) alone: a branch from
    the base's head, each file put on it (the contents API: one commit a file), the
    pull request. Nothing is cloned or pushed: the job holds no credential on disk."""

    def head(self, branch: str) -> str:
        found = self._api(f"git/ref/heads/{quote(branch, safe='/')}")
        first = found[0] if found else {}
        sha = first.get("object", {}).get("sha") if isinstance(first, dict) else None
        if not isinstance(sha, str):
            raise UserError(f"gh api: no head commit for branch {branch}")
        return sha

    def branch(self, name: str, sha: str) -> None:
        self._api("git/refs", "--method", "POST", payload={"ref": f"refs/heads/{name}", "sha": sha})

    def put(self, branch: str, path: str, text: str, message: str) -> None:
        """``path`` on ``branch`` holds ``text`` (created, or replaced: its blob's sha)."""
        payload = {
            "message": message,
            "content": base64.b64encode(text.encode("utf-8", "surrogatepass")).decode(),
            "branch": branch,
        }
        try:
            found = self._api(f"contents/{quote(path)}?ref={quote(branch, safe='')}")
        except UserError as err:
            if "404" not in str(err):
                raise
            found = []
        first = found[0] if found else {}
        if isinstance(first, dict) and isinstance(first.get("sha"), str):
            payload["sha"] = first["sha"]
        self._api(f"contents/{quote(path)}", "--method", "PUT", payload=payload)

    def open(self, *, base: str, branch: str, title: str, body: str) -> str:
        """The pull request of ``branch`` into ``base``; its URL."""
        payload = {"title": title, "head": branch, "base": base, "body": body}
        made = self._api("pulls", "--method", "POST", payload=payload)
        first = made[0] if made else {}
        url = first.get("html_url") if isinstance(first, dict) else None
        return url if isinstance(url, str) else ""


def _json_values(text: str) -> list[Any]:
    """Every JSON value in ``text``: gh api --paginate prints one array per page."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    text = text.strip()
    while at < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            raise UserError(
                f"gh api printed something that is not JSON: {text[at : at + 80]!r}"
            ) from None
        values.append(value)
        at = end
        while at < len(text) and text[at].isspace():
            at += 1
    return values


def fitted(report: Path) -> Path:
    """The report as a comment GitHub takes: itself when it fits in its 65,536
    characters, else ``NAME.comment.md`` beside it, cut by the inert renderer (whole
    blocks, the verdict first) with a line naming the whole report."""
    text = report.read_text(encoding="utf-8", errors="replace")
    if len(text) <= COMMENT_LIMIT:
        return report
    note = f"_… cut to fit a comment: the whole report is {code_span(report.name)}._"
    cut = report.with_name(f"{report.stem}.comment.md")
    cut.write_text(inert(text, limit=COMMENT_LIMIT - 1, note=note) + "\n")
    return cut


def _shown(path: Path) -> str:
    """The body file as the user would type it: relative to here when inside."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _run(command: list[str]) -> Completed:
    # procs (subprocess, ctypes) loads when gh is called, not when the command line
    # reads TRACKING_LABEL for its help: --help stays fast.
    from repromatrix import procs

    return procs.run(command, timeout=GH_TIMEOUT)
