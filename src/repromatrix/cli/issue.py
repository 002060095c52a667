"""``repromatrix issue``: the four steps of .github/workflows/issue-repro.yml.

    repromatrix issue parse [--out plan]      the event -> plan/ (jobs, refusals, approvals);
                                              no repro runs
    repromatrix issue ack --plan plan         👀 on commands that run, 😕 + a reply on refusals,
                                              approvals into the bot comment
    repromatrix issue run --plan plan --issue 7 --out answers
                                              issue 7's job (one run job per issue),
                                              confined (issue/confine.py)
    repromatrix issue env                     the allowlisted environment, for env -i
    repromatrix issue post --plan plan --answers answers --run-url URL
                                              the bot comment, 🚀, a watch's flip
    repromatrix issue keep --plan plan --base main [--marks JSON] [--run-url URL]
                                              a pull request per kept repro (a case), per
                                              kept case marked possibly-fixed (post's marks)
                                              and per kept case whose issue closed as fixed

``parse`` reads $GITHUB_EVENT_NAME and the payload at $GITHUB_EVENT_PATH (issue_comment:
a command; issues: a label that approves or keeps, an issue closed as fixed; schedule or
workflow_dispatch: the nightly watch). A bad command is data (a refusal in the plan,
exit 0); a bad configuration, invocation or repository name exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError

if TYPE_CHECKING:
    from repromatrix.issue.plan import Plan

# The issue package (results models, the bisect and sweep planners) loads when an issue
# command runs, not when the parser is built: --help stays fast (tests/cli/test_startup.py).
CONFIG_FILE = Path(".github/repromatrix.yml")  # issue.config's, spelt here for the parser

MAX_EVENT_BYTES = 25_000_000  # GitHub's webhook payloads are capped at 25 MB


# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("issue",)


def add_commands(commands: argparse._SubParsersAction) -> None:
    issue = commands.add_parser(
        "issue",
        help="issue commands and the nightly watch of issue repros (issue-repro.yml)",
        description="The steps of .github/workflows/issue-repro.yml: parse, ack, run, post.",
    )
    steps = issue.add_subparsers(dest="step", required=True, metavar="STEP")
    parse = steps.add_parser("parse", help="the event to a plan (reads $GITHUB_EVENT_PATH)")
    parse.add_argument("--out", type=Path, default=Path("plan"), help="the plan folder")
    parse.add_argument("--event", type=Path, help="the payload (default: $GITHUB_EVENT_PATH)")
    parse.add_argument(
        "--event-name", help="issue_comment, schedule, ... (default: $GITHUB_EVENT_NAME)"
    )
    parse.add_argument("--config", type=Path, default=CONFIG_FILE, help="(default: %(default)s)")
    parse.add_argument("--cases", type=Path, default=Path("cases"), help="the cases folder")
    ack = steps.add_parser("ack", help="reactions and refusal replies for a plan")
    ack.add_argument("--plan", type=Path, default=Path("plan"))
    run = steps.add_parser("run", help="run a plan's jobs (the repro runs here)")
    run.add_argument("--plan", type=Path, default=Path("plan"))
    run.add_argument("--out", type=Path, default=Path("answers"))
    run.add_argument("--cases", type=Path, default=Path("cases"))
    run.add_argument("--issue", type=int, help="run only this issue's job (one run job each)")
    # The job inside its sandbox (issue/confine.py starts it so): run here, as is.
    run.add_argument("--sandboxed", action="store_true", help=argparse.SUPPRESS)
    steps.add_parser(
        "env",
        help="the run job's environment: its allowlist, URLs without credentials "
        "(NAME=VALUE, NUL-separated, for env -i)",
    )
    post = steps.add_parser("post", help="post a run's answers on their issues")
    post.add_argument("--plan", type=Path, default=Path("plan"))
    post.add_argument("--answers", type=Path, default=Path("answers"))
    post.add_argument("--run-url", default="", help="the workflow run, linked in the answer")
    keep = steps.add_parser("keep", help="open a pull request per kept repro of a plan")
    keep.add_argument("--plan", type=Path, default=Path("plan"))
    keep.add_argument("--cases", type=Path, default=Path("cases"), help="the checkout's cases")
    keep.add_argument("--base", required=True, help="the branch the pull requests go into")
    keep.add_argument("--run-url", default="", help="the workflow run, linked in each")
    keep.add_argument(
        "--marks", default="", help="kept cases to mark possibly-fixed (the post job's JSON)"
    )


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "issue":
        return None
    if args.step == "parse":
        return _parse(args)
    if args.step == "env":
        from repromatrix.issue.run import repro_environment

        allowed = repro_environment(os.environ)
        sys.stdout.write("".join(f"{name}={value}\0" for name, value in allowed.items()))
        return 0
    from repromatrix.github.client import IssueComments
    from repromatrix.issue.bot import acknowledge, post_answers
    from repromatrix.issue.plan import read_plan
    from repromatrix.issue.run import run_issue, run_plan

    plan = read_plan(args.plan)
    if args.step == "ack":
        from repromatrix.issue.keep import acknowledge_keeps

        client = IssueComments(plan.repository)
        acknowledge(plan, client)
        acknowledge_keeps(plan, client)
    elif args.step == "keep":
        return _keep(args, plan)
    elif args.step == "run":
        run = run_plan if args.sandboxed else run_issue
        results = run(plan, args.plan, args.out, args.cases, issue=args.issue)
        # A fault of repromatrix itself turns the job red (the issue is told either way);
        # a command that could not run is an answer, and the job stays green.
        return 1 if any(r.status == "failed" for r in results) else 0
    else:
        from repromatrix.issue.kept import marks_output

        client = IssueComments(plan.repository)
        marks: list = []
        failed = post_answers(plan, args.plan, args.answers, client, args.run_url, marks=marks)
        # The keep job's, as job outputs: no other job can change them.
        _outputs({"marks": marks_output(marks), "marked": len(marks)})
        return 1 if failed else 0  # the other issues were answered all the same
    return 0


def _keep(args: argparse.Namespace, plan: Plan) -> int:
    """The plan's keeps as pull requests (nothing of the repro runs)."""
    from repromatrix.github.client import PullRequests
    from repromatrix.issue.keep import changes, open_pulls
    from repromatrix.issue.kept import mark_changes, read_marks, settle_changes

    marks = read_marks(args.marks)
    where = _relative(args.cases)
    found = changes(plan, args.plan, args.cases, args.run_url, where)
    found += settle_changes(plan, args.cases, where, args.run_url)
    found += mark_changes(marks, args.cases, where, args.run_url)
    if not found:
        print("nothing to keep")
        return 0
    failed = open_pulls(found, PullRequests(plan.repository), args.base)
    return 1 if failed else 0


def _relative(cases: Path) -> str:
    """The cases folder as a path in the repository (the job runs at its root)."""
    try:
        return cases.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        raise UserError(f"--cases {cases}: not inside the repository's checkout") from None


def _outputs(values: dict[str, object]) -> None:
    """Step outputs (GITHUB_OUTPUT), when the step has them."""
    if os.environ.get("GITHUB_OUTPUT"):
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
            out.writelines(f"{key}={value}\n" for key, value in values.items())


def _parse(args: argparse.Namespace) -> int:
    from repromatrix.github.client import IssueComments
    from repromatrix.github.repository import repository_name
    from repromatrix.issue.bot import watch_plan
    from repromatrix.issue.config import load_settings
    from repromatrix.issue.event import comment_plan, issues_plan, preflight_in
    from repromatrix.issue.keep import checked_keeps
    from repromatrix.issue.plan import Plan, write_plan

    settings = load_settings(args.config)
    name = args.event_name or os.environ.get("GITHUB_EVENT_NAME", "")
    if name in ("issue_comment", "issues"):
        payload = _payload(args.event or Path(os.environ.get("GITHUB_EVENT_PATH", "")))
        given = payload.get("repository") if isinstance(payload, dict) else None
        full_name = given.get("full_name") if isinstance(given, dict) else None
        if full_name is None:
            full_name = os.environ.get("GITHUB_REPOSITORY", "")
            repository = repository_name(full_name, "$GITHUB_REPOSITORY")
        else:
            repository = repository_name(full_name, "the event's repository.full_name")
        client = IssueComments(repository)
        permission = lambda login: _role(client, login)  # noqa: E731
        if name == "issues" and isinstance(payload, dict) and payload.get("action") == "closed":
            from repromatrix.issue.kept import closed

            plan, repros = Plan(event="issues", repository=repository, bots=settings.bots), {}
            closed(plan, payload, client, settings, permission)
        elif name == "issues":
            plan, repros = issues_plan(payload, settings, permission, repository)
        else:
            preflight = preflight_in(args.out, args.cases, settings)
            plan, repros = comment_plan(payload, settings, preflight, repository)
        if plan.keeps:  # against the bot comment: the approved repro, a kept case
            server = os.environ.get("GITHUB_SERVER_URL") or "https://github.com"
            checked_keeps(plan, client, settings, server, repros)
    elif name in ("schedule", "workflow_dispatch"):
        repository = repository_name(os.environ.get("GITHUB_REPOSITORY", ""), "$GITHUB_REPOSITORY")
        plan, repros = watch_plan(IssueComments(repository), settings, repository)
    else:
        raise UserError(
            f"event {name[:40]!r}: issue parse answers issue_comment, issues and schedule"
        )
    write_plan(plan, args.out, repros)
    for note in plan.notes:
        print(note)
    outputs = {
        "jobs": len(plan.jobs),
        "issues": json.dumps(sorted({job.issue for job in plan.jobs})),
        "ack": plan.acks(),
        "keeps": len(plan.keeps) + len(plan.settled),
    }
    _outputs(outputs)
    print(" ".join(f"{key}={value}" for key, value in outputs.items()))
    return 0


def _role(client: object, login: str) -> str:
    """The labeller's role; "none" when GitHub will not say (they are then not trusted)."""
    try:
        return client.permission(login)  # type: ignore[attr-defined]
    except UserError:
        return "none"


def _payload(path: Path) -> object:
    """The event payload; anything unreadable is one line (exit 2)."""
    if not str(path) or not path.is_file():
        raise UserError(f"event payload {path}: no such file ($GITHUB_EVENT_PATH)")
    if path.stat().st_size > MAX_EVENT_BYTES:
        raise UserError(f"event payload {path}: larger than {MAX_EVENT_BYTES} bytes")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserError(f"event payload {path}: not JSON ({err})") from None
