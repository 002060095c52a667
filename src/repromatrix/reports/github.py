"""Where a summary goes besides the results folder: the CI step summary and an issue.

- ``GITHUB_STEP_SUMMARY`` set (a GitHub Actions step): summary.md is appended to it.
- ``--issue N``: ``gh issue comment N --body-file summary.md`` when gh is installed
  and authenticated (``gh auth status``); otherwise that exact command is printed,
  for the user to run where gh works.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.redact import redact_text

GH_TIMEOUT = 120.0


def append_step_summary(text: str, environ: dict[str, str] | None = None) -> Path | None:
    environ = os.environ if environ is None else environ
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
    return path


def comment_command(issue: int, body_file: Path) -> list[str]:
    return ["gh", "issue", "comment", str(issue), "--body-file", _shown(body_file)]


def post_issue_comment(issue: int, body_file: Path, say: Callable[[str], None] = print) -> bool:
    """Post ``body_file`` on issue ``issue`` with gh; True when posted. Without a
    usable gh, print the command instead (and return False)."""
    command = comment_command(issue, body_file)
    gh = shutil.which("gh")
    if gh is None:
        say("gh is not installed; to post the summary, run:")
        say("  " + shlex.join(command))
        return False
    status = procs.run([gh, "auth", "status"], timeout=GH_TIMEOUT)
    if status.returncode != 0:
        say("gh is not authenticated (gh auth status); to post the summary, run:")
        say("  " + shlex.join(command))
        return False
    done = procs.run([gh, *command[1:]], timeout=GH_TIMEOUT)
    if done.returncode != 0:
        detail = " ".join(redact_text(done.stderr or done.stdout).split())[:300]
        raise UserError(f"{shlex.join(command)} failed (exit {done.returncode}): {detail}")
    url = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else f"issue {issue}"
    say(f"posted the summary: {url}")
    return True


def _shown(path: Path) -> str:
    """The body file as the user would type it: relative to here when inside."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
