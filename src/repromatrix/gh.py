"""The few things the nightly job asks of GitHub, through the ``gh`` command line
(authenticated by GH_TOKEN in CI): one tracking issue, opened or updated, and
bisect workflows dispatched. Without gh the commands are printed instead, so a
person can run them."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from repromatrix.errors import UserError
from repromatrix.redact import redact_text

TRACKING_LABEL = "nightly-regression"
TRACKING_TITLE = "Nightly: regressions"


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
        command = [self.gh or "gh", *args, *(["--repo", self.repo] if self.repo else [])]
        if not self.available:
            self.say(f"gh is not installed; run: {shlex.join(command)}")
            return ""
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
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

    def dispatch(self, workflow: str, inputs: dict[str, str], *, ref: str | None = None) -> None:
        args = ["workflow", "run", workflow]
        if ref:
            args += ["--ref", ref]
        for key, value in inputs.items():
            args += ["-f", f"{key}={value}"]
        self._call(args)
        span = f"{inputs.get('package')} {inputs.get('good')}..{inputs.get('bad')}"
        self.say(f"dispatched {workflow}: {span}")
