"""The one GitHub client: the few things repromatrix asks of GitHub, through the ``gh``
command line (authenticated by GH_TOKEN in CI, or ``gh auth login``): one tracking
issue, opened or updated; bisect workflows dispatched; a summary posted on an issue.
Without a usable gh the commands are printed instead, so a person can run them where
gh works, and nothing claims to have been done."""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError
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

    def _call(self, args: Sequence[str]) -> str:
        command = ["gh", *args, *(["--repo", self.repo] if self.repo else [])]
        if not self.available:
            self.say(f"gh is not installed; run: {shlex.join(command)}")
            return ""
        done = _run([self.gh or "gh", *command[1:]])
        if done.returncode != 0:
            detail = " ".join(redact_text(done.stderr).split())[:500]
            raise UserError(f"gh {' '.join(args[:2])} failed: {detail or 'no message'}")
        return done.stdout

    def find_issue(self, label: str, title: str) -> int | None:
        """The open issue with this label (the one with exactly this title first)."""
        listed = self._call(
            ["issue", "list", "--state", "open", "--label", label, "--json", "number,title"]
        )
        issues = json.loads(listed or "[]")
        exact = [i for i in issues if i.get("title") == title]
        chosen = (exact or issues)[:1]
        return int(chosen[0]["number"]) if chosen else None

    def ensure_tracking_issue(self, body: Path, *, label: str, title: str) -> int | None:
        """Update the tracking issue's body, or open it; its number (None without gh)."""
        number = self.find_issue(label, title)
        if number is not None:
            self._call(["issue", "edit", str(number), "--body-file", str(body)])
            self.say(f"updated tracking issue #{number}")
            return number
        # --force: create the label, or leave it as it is when it exists.
        self._call(["label", "create", label, "--force", "--color", "B60205"])
        created = self._call(
            ["issue", "create", "--title", title, "--label", label, "--body-file", str(body)]
        )
        if not created.strip():
            return None
        # gh prints the new issue's URL: .../issues/<number>
        number = int(created.strip().splitlines()[-1].rstrip("/").rsplit("/", 1)[-1])
        self.say(f"opened tracking issue #{number}")
        return number

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
