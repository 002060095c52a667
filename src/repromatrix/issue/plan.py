"""The plan: what the ``parse`` job decided, handed to the ``run`` and ``post`` jobs as
an artifact (plan/plan.json and one repro-<issue>.py per job). Every job reads it back
through ``read_plan``, which validates it: a job trusts no file it did not write.

A job's kind is a hunt the bot offers (hunt_table.OFFERED) or the night's watch;
offered/ checks a job against the package index with the hunt's own planner (package
known, versions released, pins that do not conflict, the case defined) and the
repository's limits, before anything is built. Nothing here runs the repro.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from repromatrix.errors import UserError
from repromatrix.hunt_table import OFFERED
from repromatrix.issue.command import Command
from repromatrix.issue.config import DEFAULT_BOTS, IssueSettings, repository_url
from repromatrix.issue.repro import Repro
from repromatrix.issue.state import Observed
from repromatrix.matrix.model import Confinement
from repromatrix.matrix.pins import parse_pin_option, pin_text, unique_pins
from repromatrix.probe.spec import Probe
from repromatrix.results import write_json_atomic, write_text_atomic

PLAN_FILE = "plan.json"
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
_SHA256 = r"^[0-9a-f]{64}$"
# A watch's follow-up (issue/follow.py) may take this many probes' time limits, and at
# most FOLLOW_MAX seconds: the run job stops at 6 hours (issue-repro.yml).
FOLLOW_PROBES = 4
FOLLOW_MAX = 4.5 * 3600

# A job's kind: a hunt the bot offers (its row in hunt_table.py), or the night's watch.
JOB_KINDS = (*OFFERED, "watch")


def _job_kind(kind: str) -> str:
    if kind not in JOB_KINDS:
        raise ValueError(f"{kind[:40]!r} is not a job kind ({', '.join(JOB_KINDS)})")
    return kind


JobKind = Annotated[str, AfterValidator(_job_kind)]


class Job(BaseModel):
    """One run for one issue: a command, or a night's watch."""

    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    comment: int | None = Field(None, ge=1)  # the command's comment (None: the watch)
    author: str = Field("", max_length=60)
    kind: JobKind
    line: str = Field(max_length=2000)  # the command as written, or "watch"
    package: str | None = Field(None, max_length=100)
    start: str | None = Field(None, max_length=60)
    end: str | None = Field(None, max_length=60)
    releases: Literal["all", "latest-patch", "first-and-last-patch"] = "all"
    find: Literal["first-bad", "first-good"] = "first-bad"
    case: str | None = Field(None, max_length=300)
    pins: list[str] = Field(default_factory=list, max_length=40)
    watched: list[str] = Field(default_factory=list, max_length=40)  # the watch follows these
    source: Literal["comment", "issue", "case"] = "comment"
    timeout: float = Field(gt=0, le=6 * 3600)  # one probe's time limit, seconds
    # The watch's follow-up (issue/follow.py): reruns of a flip before it is said, the
    # last decisive night it flips from, where the followed packages' commits are, the
    # packages whose main branch runs too and those whose main was said to pass already.
    confirm: int = Field(0, ge=0, le=10)
    since: Observed | None = None
    repositories: dict[str, str] = Field(default_factory=dict, max_length=50)
    main: list[str] = Field(default_factory=list, max_length=10)
    ahead: dict[str, str] = Field(default_factory=dict, max_length=10)
    close: bool = False  # a confirmed flip to passing closes the issue (issue: close:)

    @field_validator("repositories")
    @classmethod
    def _repositories(cls, value: dict[str, str]) -> dict[str, str]:
        return {name: repository_url(url) for name, url in value.items()}

    # Whether the run job may run it unconfined where it cannot confine (settings').
    confinement: Confinement = "required"

    def repro_name(self) -> str:
        return f"repro-{self.issue}.py"

    def follow_seconds(self) -> float:
        """What a watch's follow-up (reruns, hunts, main branches) may take after its
        check: FOLLOW_PROBES probes' limits, within the run job's hours."""
        if self.kind != "watch" or not (self.since or self.main):
            return 0.0
        return min(self.timeout * FOLLOW_PROBES, FOLLOW_MAX)

    def seconds(self) -> float:
        """The whole job's time: one probe's limit and a minute, and the follow-up's."""
        return self.timeout + 60 + self.follow_seconds()


class Reply(BaseModel):
    """A command that cannot run: 😕 on the comment and this body as a reply. From the
    watch, a repro that is not the approved one: the line, said once for its sha256
    (``refused``, kept in the bot comment's state)."""

    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    comment: int | None = Field(None, ge=1)
    body: str = Field(max_length=8000)
    refused: str | None = Field(None, pattern=_SHA256)
    # An untrusted author's comment: refused at most once a day per author and issue
    # (bot.acknowledge), so that comments cannot buy the bot's replies.
    author: str | None = Field(None, max_length=60)


class PlannedApproval(BaseModel):
    """A repro a trusted person approved for the watch (a label, /repromatrix approve):
    ack records its sha256 in the bot comment's state."""

    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    comment: int | None = Field(None, ge=1)  # /repromatrix approve's comment (👍 on it)
    sha256: str = Field(pattern=_SHA256)
    by: str = Field(pattern=LOGIN.pattern)
    how: Literal["label", "approve"]
    head: list[str] = Field(default_factory=list, max_length=10)  # the code's first lines


class PlannedKeep(BaseModel):
    """A repro to keep as a case (``/repromatrix keep``, the keep label): ack records it
    in the bot comment, ``issue keep`` opens the pull request (issue/keep.py). The plan
    holds its code as repro-<issue>.py, checked against ``sha256`` (the approved one)."""

    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    comment: int | None = Field(None, ge=1)  # /repromatrix keep's comment (👍 on it)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    by: str = Field(pattern=LOGIN.pattern)
    url: str = Field(
        "", pattern=r"^(https://[A-Za-z0-9.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/issues/\d+)?$"
    )
    pins: list[str] = Field(default_factory=list, max_length=40)
    packages: list[str] = Field(default_factory=list, max_length=40)  # the cells' requires()
    failing: dict[str, str] = Field(default_factory=dict, max_length=40)  # seen failing with
    expected: Literal["fails", "passes"] = "fails"
    minutes: int = Field(60, ge=1, le=360)


class PlannedSettle(BaseModel):
    """A kept case whose issue a trusted person closed as fixed: the keep job's pull
    request makes it a plain regression case (issue/kept.py)."""

    model_config = ConfigDict(extra="forbid")

    issue: int = Field(ge=1)
    by: str = Field(pattern=LOGIN.pattern)


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(1, alias="schema")
    event: Literal["issue_comment", "issues", "schedule", "workflow_dispatch"]
    repository: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    # Whose comments are the bot's (settings.bots): the bot comment is found among theirs.
    bots: list[str] = Field(default_factory=lambda: list(DEFAULT_BOTS), max_length=10)
    jobs: list[Job] = []
    replies: list[Reply] = []
    approvals: list[PlannedApproval] = Field(default_factory=list, max_length=10)
    keeps: list[PlannedKeep] = Field(default_factory=list, max_length=10)
    settled: list[PlannedSettle] = Field(default_factory=list, max_length=10)
    notes: list[str] = []  # what the parse job decided not to do, and why (the log)

    def acks(self) -> int:
        """What the ack job does: replies, approvals, keeps, 👀 on commands."""
        commands = sum(1 for j in self.jobs if j.comment)
        return len(self.replies) + len(self.approvals) + len(self.keeps) + commands


def effective_pins(
    settings: IssueSettings,
    command_pins: tuple[str, ...],
    repro: Repro | None,
    searched: str | None,
) -> list[str]:
    """The pins a run holds: the repository's defaults, the repro's own, then the
    command's; a later one replaces an earlier one for the same package. The searched
    package is left out of the defaults and the repro's (the command may not pin it)."""
    chosen: dict[str, str] = {}
    for text in [*settings.pins, *(repro.needs if repro else ())]:
        package = parse_pin_option(text).package
        if package != searched:
            chosen[package] = text
    for text in command_pins:
        chosen[parse_pin_option(text).package] = text
    return list(chosen.values())


def make_job(
    command: Command,
    *,
    issue: int,
    comment: int | None,
    author: str,
    repro: Repro | None,
    settings: IssueSettings,
) -> Job:
    return Job(
        issue=issue,
        comment=comment,
        author=author if LOGIN.match(author) else "",
        kind=command.kind,
        line=command.line,
        package=command.package,
        start=command.start,
        end=command.end,
        releases=command.releases,  # type: ignore[arg-type]
        find=command.find,  # type: ignore[arg-type]
        case=command.case,
        pins=effective_pins(settings, command.pins, repro, command.package),
        watched=repro.packages() if repro else [],
        source="case" if command.case else (repro.source if repro else "comment"),  # type: ignore[arg-type]
        timeout=settings.minutes * 60.0,
        confinement=settings.confinement,
    )


def probe_for(job: Job, folder: Path, cases: Path) -> Probe:
    if job.case is not None:
        return Probe(case=job.case, cases_root=cases, timeout=job.timeout)
    return Probe(script=folder / job.repro_name(), cases_root=cases, timeout=job.timeout)


def pins_of(job: Job) -> tuple:
    return unique_pins([parse_pin_option(text) for text in job.pins])


def write_plan(plan: Plan, folder: Path, repros: dict[int, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for issue, code in repros.items():
        write_text_atomic(folder / f"repro-{issue}.py", code)
    write_json_atomic(folder / PLAN_FILE, plan.model_dump(mode="json", by_alias=True))


def read_plan(folder: Path) -> Plan:
    path = folder / PLAN_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Plan.model_validate(data)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file (the parse job's artifact)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: not JSON ({err})") from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: {where}: {first['msg']}") from None


def pin_texts(pins: tuple) -> list[str]:
    return [pin_text(p) for p in pins]
