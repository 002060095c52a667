"""The workflows' bot identity on the command line (nightly, bounds-post): ``--bot``,
else .github/repromatrix.yml's ``issue.bots``, else github-actions[bot]. Only comments
these logins wrote are read back as the bot's own (github/authors.py)."""

from __future__ import annotations

import argparse

from repromatrix.errors import UserError


def add_bot_option(parser: argparse._ActionsContainer, *, whose: str) -> None:
    """``--bot LOGIN`` (repeatable); ``whose``: what the bot's comments are, in the help."""
    parser.add_argument(
        "--bot",
        action="append",
        metavar="LOGIN",
        help=f"{whose}: the workflows' bot identity, NAME[bot] (repeatable; default: "
        ".github/repromatrix.yml's issue.bots, else github-actions[bot])",
    )


def bot_logins(given: list[str] | None) -> list[str]:
    """The bot logins: --bot, else the issue bot's (.github/repromatrix.yml), else
    github-actions[bot]; a settings file that does not read costs a warning, never the
    run."""
    from repromatrix.github.authors import BOT_LOGIN, DEFAULT_BOTS
    from repromatrix.issue.config import load_settings

    for login in given or []:
        if not BOT_LOGIN.match(login):
            raise UserError(f"--bot {login[:60]!r}: not a bot login (NAME[bot])")
    if given:
        return given
    try:
        return load_settings().bots
    except UserError as err:
        print(f"warning: {err}; the bot's comments are read from {', '.join(DEFAULT_BOTS)}")
        return list(DEFAULT_BOTS)
