"""``repromatrix bounds-post``: a bounds record on GitHub (bounds.yml's post job).

    repromatrix bounds-post REPORT (--tracking | --comment PR) [--repo OWNER/NAME]
                            [--run-url URL] [--bot LOGIN ...]

REPORT: bounds.json, its folder, or the folder holding one hunt's folder (the
workflow's artifact). ``--tracking`` opens, updates or closes the target's tracking
issue; ``--comment PR`` puts the table on a pull request (edited in place, and only a
comment the bot wrote: --bot, else .github/repromatrix.yml's issue.bots, else
github-actions[bot]). It reads the record as data and runs nothing of it. Exit status:
0 posted, 2 bad input or a gh failure (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from repromatrix.cli.bots import add_bot_option, bot_logins

COMMANDS = ("bounds-post",)  # what add_commands adds (cli/app.py builds only its group)


def add_commands(commands: argparse._SubParsersAction) -> None:
    post = commands.add_parser(
        "bounds-post",
        help="a bounds record on GitHub: the tracking issue, or the table on a pull request",
        description=__doc__.split("\n\n", 2)[2].strip() if __doc__ else None,
    )
    post.add_argument("report", type=Path, metavar="REPORT", help="bounds.json or its folder")
    where = post.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--tracking", action="store_true", help="open, update or close the tracking issue"
    )
    where.add_argument("--comment", type=int, metavar="PR", help="comment the table on this PR")
    post.add_argument("--repo", help="OWNER/NAME (default: gh's, from the checkout)")
    post.add_argument("--run-url", default="", help="the workflow run, linked in the text")
    add_bot_option(post, whose="whose pull-request comment is the bounds comment to edit")


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "bounds-post":
        return None
    from repromatrix.github.client import GitHub, IssueComments
    from repromatrix.github.repository import repository_name
    from repromatrix.hunts.bounds.tracking import comment, record_in, track

    record = record_in(args.report)
    repo = repository_name(args.repo, "--repo") if args.repo else None
    if args.tracking:
        track(record, GitHub(repo=repo), run_url=args.run_url)
    else:
        if repo is None:
            from repromatrix.errors import UserError

            raise UserError("--comment needs --repo OWNER/NAME")
        bots = tuple(bot_logins(args.bot))
        comment(record, IssueComments(repo), args.comment, run_url=args.run_url, bots=bots)
    return 0
