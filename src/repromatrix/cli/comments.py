"""The ``hunt-comment`` command (cli/app.py adds it): a hunt's report as the comment
bisect.yml's and culprit.yml's comment job posts (nightly/hunt_comment.py).

    repromatrix hunt-comment --report FILE --title T --run-url URL --artifact NAME
                             [--hunt KEY] --out FILE

The report is made inert and fits GitHub's limit (the verdict kept, the artifact that
holds the whole report named); a missing report is said so. Exit status 0, or 2 for
bad input (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path

# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("hunt-comment",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    commenting = commands.add_parser(
        "hunt-comment",
        help="a hunt's report as an issue comment: inert, within GitHub's limit, headed by "
        "the hunt's marker (bisect.yml, culprit.yml)",
    )
    commenting.add_argument(
        "--report", type=Path, required=True, help="bisect.md or culprit.md (missing: said so)"
    )
    commenting.add_argument("--title", required=True, help="the hunt in a few words")
    commenting.add_argument("--run-url", required=True, help="the hunt's run")
    commenting.add_argument(
        "--artifact", required=True, help="the run's artifact that holds the whole report"
    )
    commenting.add_argument(
        "--hunt", default="", help="the hunt's key on the tracking issue (triage sets it)"
    )
    commenting.add_argument("--out", type=Path, required=True, metavar="FILE")


def run_command(args: argparse.Namespace) -> int | None:
    """The exit status of a command of this module, None for another one."""
    if args.command != "hunt-comment":
        return None
    from repromatrix.nightly.hunt_comment import comment_body, read_report
    from repromatrix.results import write_text_atomic

    body = comment_body(
        read_report(args.report),
        title=args.title,
        run_url=args.run_url,
        artifact=args.artifact,
        hunt=args.hunt,
    )
    write_text_atomic(args.out, body)
    print(f"wrote {args.out} ({len(body):,} characters)")
    return 0
