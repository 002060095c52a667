"""Who wrote a comment. The bot's memory (the issue bot's comment) and a hunt's answer
(on the tracking issue) are read only from comments the workflow's own bot identity
wrote: ``github-actions[bot]`` (what ``GITHUB_TOKEN`` comments as), or a GitHub App's
``NAME[bot]`` where the workflows post with an App's token, named in
.github/repromatrix.yml's ``issue.bots``. A ``[bot]`` login is no person's (a person's
login is letters, digits and hyphens), so a person pasting a marker speaks for nobody.
The REST API says who (``user.login``); GraphQL (``gh issue view --json comments``)
drops the ``[bot]``, which is why comments are read through REST.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DEFAULT_BOTS = ("github-actions[bot]",)  # GITHUB_TOKEN's comments are this login's
BOT_LOGIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}\[bot\]$")


def written_by(comment: object, bots: Iterable[str]) -> bool:
    """Whether one of the ``bots`` logins wrote ``comment`` (a REST API comment:
    ``user.login``; logins compare without case)."""
    if not isinstance(comment, dict):
        return False
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return isinstance(login, str) and login.lower() in {name.lower() for name in bots}
