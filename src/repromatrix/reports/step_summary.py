"""The CI step summary: in a GitHub Actions step (``GITHUB_STEP_SUMMARY`` set),
summary.md is appended to it. Posting on an issue (``--issue N``) is github/client.py's."""

from __future__ import annotations

import os
from pathlib import Path

from repromatrix.redact import redact_text


def append_step_summary(text: str, environ: dict[str, str] | None = None) -> Path | None:
    environ = os.environ if environ is None else environ
    target = environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    text = redact_text(text)  # summary.md is masked already; this file is a door too
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
    return path
