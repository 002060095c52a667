"""The watch's follow-up, in the run job (no token; the approved repro, in cells like
tonight's check): what the post job needs to say a flip, beyond tonight's outcome.

1. **Confirmed**: where tonight's outcome differs from the last decisive night's
   (``job.since``), the repro runs ``job.confirm`` more times, each a fresh interpreter
   in the same cell. ``Result.runs`` holds every outcome; a flip that does not hold in
   all of them is flaky (issue/flips.py says so, and no hunt runs).
2. **Named**: a confirmed flip is found with the existing hunts, on the followed
   packages that moved since that night: one moved, a bisect of its releases (the
   others held at tonight's versions); several, a culprit hunt (ddmin, then a bisect of
   the culprit's releases). Then, where the package's repository is known (the issue
   config's ``repositories:``, else the GitHub repository its metadata names), a bisect
   of its commits between the two releases' tags: the commit, and the PR its subject
   names (``Named``).
3. **Main**: each package of ``job.main`` is installed from its repository's default
   branch at its head commit; where main passes and tonight's release fails, the run
   is confirmed as above and, the first time (``job.ahead`` is what was said), the
   commits from the release's tag to main's head are bisected: the first that passes
   (``OnMain``).

Everything is bounded by ``stop_at``: a probe that would start after it stops the hunt
(``OutOfTurn``), and what was found so far is the answer. The hunts write their reports
into the answer folder (``named/``, ``commits/``, ``main/``): the run's artifact.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.environment.store import default_store_root
from repromatrix.errors import UserError
from repromatrix.github.markdown import code_span, one_line
from repromatrix.hunts.bisect.commits import Commit as GitCommit
from repromatrix.hunts.bisect.commits import mirror, release_tag, requirement_url, resolve_ref
from repromatrix.hunts.bisect.options import BisectOptions
from repromatrix.hunts.bisect.report import BisectRecord, github_repository, project_urls
from repromatrix.hunts.bisect.run import BISECT
from repromatrix.hunts.culprit.locks import Lock
from repromatrix.hunts.culprit.options import CulpritOptions
from repromatrix.hunts.culprit.report import CulpritRecord
from repromatrix.hunts.culprit.run import CULPRIT
from repromatrix.hunts.hunt import Voice, run_hunt
from repromatrix.issue.answer import Commit, Named, OnMain, Outcome, Result
from repromatrix.issue.plan import Job, pins_of
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.probe.observation import Observation
from repromatrix.probe.prober import CellProber, Prober
from repromatrix.probe.spec import Probe, Trial
from repromatrix.redact import redact_text
from repromatrix.search.bisection import Find

MAIN_REF = "HEAD"  # a mirror's HEAD: the repository's default branch


class OutOfTurn(Exception):
    """The follow-up's time is spent: the hunt in progress stops, its answer so far kept."""


@dataclass
class Budget:
    """The prober the follow-up's hunts share: it counts the cells probed and starts
    none after ``stop_at`` (time.monotonic). A cell already seen tonight is answered
    from what it showed (``remember``): tonight's, once its reruns held, and each
    hunt's, so that a hunt's end or a culprit hunt's release bisect does not build it
    again (``fresh`` probes anyway: the reruns)."""

    prober: Prober
    stop_at: float
    cells: int = 0
    remember: bool = True
    seen: dict[object, Observation] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, trial: Trial, *, fresh: bool = False) -> Observation:
        key = cell_key(trial.cell)
        with self._lock:
            known = None if fresh or not self.remember else self.seen.get(key)
        if known is not None:
            return known
        if time.monotonic() >= self.stop_at:
            raise OutOfTurn("the watch's time for this issue ran out")
        with self._lock:
            self.cells += 1
        observed = self.prober(trial)
        with self._lock:
            self.seen.setdefault(key, observed)
        return observed


def cell_key(cell: CellSpec) -> object:
    """A cell as the follow-up compares them: its pins in any order, and the rest."""
    return frozenset(cell.pins), replace(cell, pins=())


@dataclass
class Tonight:
    """Tonight's check as the follow-up starts from it."""

    job: Job
    probe: Probe
    index: IndexSettings
    out: Path  # the answer folder
    observation: Observation  # the first run's
    budget: Budget

    @property
    def versions(self) -> dict[str, str]:
        resolved = self.observation.resolved
        return {name: resolved[name] for name in self.job.watched if name in resolved}

    def cell(self, versions: dict[str, str], *, without: str | list[str] = ()) -> CellSpec:
        """The job's pins with the followed packages at ``versions`` (exact), less
        ``without`` (the packages a hunt pins itself)."""
        without = [without] if isinstance(without, str) else without
        pins = [
            Pin(pin.package, PinKind.EXACT, versions[pin.package])
            if pin.package in versions
            else pin
            for pin in pins_of(self.job)
            if pin.package not in without
        ]
        return CellSpec(pins=tuple(pins))

    def rerun(self, cell: CellSpec, name: str) -> Outcome:
        trial = Trial(self.probe, cell, self.index, self.out / "steps", name)
        return self.budget(trial, fresh=True).outcome.value  # type: ignore[return-value]


def follow(
    job: Job,
    result: Result,
    observation: Observation,
    probe: Probe,
    out: Path,
    *,
    stop_at: float,
    prober: Prober | None = None,
    remember: bool = True,
) -> None:
    """The follow-up of tonight's check (``result``, its ``observation``), into
    ``result``: ``runs``, ``named``, ``main`` and lines of its Markdown. ``remember``:
    False builds every cell a hunt asks for (benchmarks/bench_flip.py compares)."""
    budget = Budget(prober or CellProber(), stop_at, remember=remember)
    index = IndexSettings.from_environment()
    tonight = Tonight(job, probe, index, out, observation, budget)
    lines: list[str] = []
    outcome = result.outcome
    result.runs = [outcome] if outcome else []
    flipped = job.since is not None and outcome in ("good", "bad") and outcome != job.since.outcome
    try:
        if flipped and outcome is not None:
            assert job.since is not None
            confirm(tonight, result, outcome)
            held = result.runs.count(outcome)
            lines.append(f"- confirmed: {outcome} in {held} of {len(result.runs)} runs")
            if held == len(result.runs):
                # Tonight's cell at its versions held in every run: the hunts take it as seen.
                budget.seen[cell_key(tonight.cell(tonight.versions))] = observation
                result.named = named(tonight, job.since.versions, outcome)
                lines.append(f"- where it changed: {_said(result.named)}")
        for package in job.main:
            on_main = main_branch(tonight, package, outcome)
            result.main.append(on_main)
            lines.append(f"- {package} main: {_main_said(on_main)}")
    except (OutOfTurn, UserError) as err:  # tonight's answer stands, whatever stopped here
        said = one_line(redact_text(str(err)), 300)
        lines.append(f"- stopped: {said}")
        if result.named is not None and not result.named.note:
            result.named.note = said
    finally:
        if result.named is not None:
            result.named.cells = budget.cells
    if lines:
        result.markdown += "\n**The watch's follow-up** (reports in the run's artifact)\n\n"
        result.markdown += "\n".join(lines) + "\n"


def confirm(tonight: Tonight, result: Result, outcome: str) -> None:
    """``job.confirm`` reruns of tonight's cell, each outcome into ``result.runs`` as
    it comes (a run stopped half way keeps what it confirmed)."""
    cell = tonight.cell({})
    for number in range(1, tonight.job.confirm + 1):
        result.runs.append(tonight.rerun(cell, f"confirm-{number}"))


def named(tonight: Tonight, before: dict[str, str], outcome: str) -> Named:
    """Where the flip changed, with the hunts: a bisect (one package moved) or a
    culprit hunt (several), then the package's commits between the two releases."""
    now = tonight.versions
    moved = [p for p in tonight.job.watched if p in before and p in now and before[p] != now[p]]
    passes = outcome == "good"
    if not moved:
        return Named(
            how="none",
            old=before,
            new=now,
            note="no followed package moved since the last decisive night: the change "
            "is elsewhere in the stack",
        )
    if len(moved) == 1:
        found = _bisected(tonight, moved[0], before, now, passes)
    else:
        found = _culprit(tonight, moved, before, now, passes)
    if found.package and found.before and found.release:
        _into_commits(tonight, found, passes)
    return found


def _bisected(
    tonight: Tonight, package: str, before: dict[str, str], now: dict[str, str], passes: bool
) -> Named:
    old, new = before[package], now[package]
    good, bad = (new, old) if passes else (old, new)
    find = Find.FIRST_GOOD if passes else Find.FIRST_BAD
    options = BisectOptions(
        package=package, good=good, bad=bad, find=find, probe=tonight.probe,
        cell=tonight.cell(now, without=package), index=tonight.index, out=tonight.out / "named",
    )  # fmt: skip
    try:
        record = _bisect(options, tonight.budget)
    except UserError as err:  # e.g. a side's release is not in the index any more
        return Named(how="bisect", package=package, note=_not_started("bisect", err))
    found = Named(how="bisect", package=package, releases=len(record.candidates))
    if record.status != "found" or record.first is None:
        found.note = f"the bisect did not conclude: {one_line(redact_text(record.verdict), 300)}"
        return found
    found.release, found.before = record.first, record.last
    found.old, found.new = {**now, package: record.last or old}, {**now, package: record.first}
    return found


def _culprit(
    tonight: Tonight, moved: list[str], before: dict[str, str], now: dict[str, str], passes: bool
) -> Named:
    good, bad = (now, before) if passes else (before, now)
    held = {name: version for name, version in now.items() if name not in moved}
    options = CulpritOptions(
        good=Lock("tonight" if passes else "the last decisive night", {p: good[p] for p in moved}),
        bad=Lock("the last decisive night" if passes else "tonight", {p: bad[p] for p in moved}),
        probe=tonight.probe,
        cell=tonight.cell(held, without=moved),
        name="flip",
        out=tonight.out / "named",
        index=tonight.index,
    )
    try:
        record = _run_culprit(options, tonight.budget)
    except UserError as err:
        return Named(how="culprit", note=_not_started("culprit hunt", err))
    found = Named(how="culprit")
    if record.status != "found" or len(record.culprits) != 1:
        found.note = f"the culprit hunt did not name one package: {one_line(record.verdict, 300)}"
        return found
    culprit = record.culprits[0]
    package = str(culprit["package"])
    found.package = package
    found.releases = int((record.release_bisect or {}).get("candidates") or 2)
    # The good lock's side holds; the release bisect walked from it to the bad side.
    last_good, first_bad = culprit.get("last_good") or culprit["good"], culprit["bad"]
    found.release, found.before = (last_good, first_bad) if passes else (first_bad, last_good)
    # Each side as the release bisect had it: the good lock's other packages held.
    base = {**now, **{p: good[p] for p in moved}}
    found.old, found.new = {**base, package: found.before}, {**base, package: found.release}
    return found


def _into_commits(tonight: Tonight, found: Named, passes: bool) -> None:
    """The commits between the two releases' tags, where the repository is known."""
    package = found.package or ""
    url = repository(tonight, package)
    if url is None:
        found.note = f"no repository known for {package} (issue config: repositories:)"
        return
    try:
        repo = mirror(url, _store())
        tags = [release_tag(repo, v) for v in (found.before or "", found.release or "")]
        if None in tags:
            found.note = f"no tag for {package} {found.before} or {found.release} in its repository"
            return
        old, new = (resolve_ref(repo, tag or "", "--git") for tag in tags)
    except UserError as err:
        found.note = f"{package}'s repository: {err}"
        return
    good, bad = (new, old) if passes else (old, new)
    others = found.new if passes else found.old
    options = BisectOptions(
        package=package, good=good, bad=bad, find=Find.FIRST_GOOD if passes else Find.FIRST_BAD,
        git=url, probe=tonight.probe, cell=tonight.cell(others, without=package),
        index=tonight.index, out=tonight.out / "commits",
    )  # fmt: skip
    found.commit, found.commits, note = _commit_bisect(options, tonight.budget)
    found.note = note or found.note


def main_branch(tonight: Tonight, package: str, released: str | None) -> OnMain:
    """``package`` from its repository's default branch, over tonight's other
    versions; confirmed, and its first passing commit found, when it passes ahead of
    tonight's release (the first time: ``job.ahead``)."""
    on_main = OnMain(package=package)
    url = repository(tonight, package)
    if url is None:
        on_main.note = f"no repository known for {package} (issue config: repositories:)"
        return on_main
    try:
        repo = mirror(url, _store())
        head = resolve_ref(repo, MAIN_REF, "main")
    except UserError as err:
        on_main.note = f"{package}'s repository: {err}"
        return on_main
    on_main.commit = Commit(sha=head)
    pin = Pin(package, PinKind.DIRECT, requirement_url(url, GitCommit(0, head)))
    cell = tonight.cell(tonight.versions, without=package).with_pins(pin)
    on_main.outcome = tonight.rerun(cell, f"main-{package}")
    on_main.runs = [on_main.outcome]
    ahead = on_main.outcome == "good" and released == "bad"
    if not ahead or package in tonight.job.ahead:
        return on_main
    for number in range(1, tonight.job.confirm + 1):
        on_main.runs.append(tonight.rerun(cell, f"main-{package}-confirm-{number}"))
    if any(run != "good" for run in on_main.runs):
        return on_main
    release = tonight.versions.get(package)
    tag = release_tag(repo, release) if release else None
    if tag is None:
        on_main.note = f"no tag for {package} {release} in its repository: main not bisected"
        return on_main
    options = BisectOptions(
        package=package, good=head, bad=resolve_ref(repo, tag, "--git"), find=Find.FIRST_GOOD,
        git=url, probe=tonight.probe, cell=tonight.cell(tonight.versions, without=package),
        index=tonight.index, out=tonight.out / "main",
    )  # fmt: skip
    on_main.since, _count, note = _commit_bisect(options, tonight.budget)
    on_main.note = note or on_main.note
    return on_main


def _commit_bisect(options: BisectOptions, budget: Budget) -> tuple[Commit | None, int, str]:
    """A bisect over commits: the first commit it found, the commits searched, and
    in words why none was found ("" when one was)."""
    try:
        record = _bisect(options, budget)
    except UserError as err:
        return None, 0, _not_started("commit bisect", err)
    count = int(record.commits.get("count") or 0)
    first = record.commits.get("first")
    if record.status == "found" and isinstance(first, dict):
        return _commit(first), count, ""
    return None, count, f"the commit bisect did not conclude: {one_line(record.verdict, 300)}"


def repository(tonight: Tonight, package: str) -> str | None:
    """Where ``package``'s commits are: the issue config's URL, else the GitHub
    repository its metadata names (read in tonight's cell, nothing of it run)."""
    given = tonight.job.repositories.get(package)
    if given:
        return given
    cell = tonight.observation.cell
    if cell is None or cell.interpreter is None:
        return None
    return github_repository(project_urls(cell.interpreter, package))


def _commit(found: dict) -> Commit:
    pr = found.get("pr")
    return Commit(
        sha=str(found.get("sha", ""))[:40],
        subject=one_line(redact_text(str(found.get("subject") or "")), 300),
        pr=int(pr) if isinstance(pr, str) and pr.isdigit() and len(pr) < 10 else None,
    )


def _not_started(hunt: str, err: UserError) -> str:
    """A hunt its plan refused (bad input is one line): said, and the flip still is; a
    folder of the runner (a find-links wheelhouse) as ``<local>/NAME``, as reports say."""
    said = _MACHINE_PATH.sub(r"<local>/\1", redact_text(str(err)))
    return f"the {hunt} could not start: {one_line(said, 300)}"


# An absolute path of this machine: its last part is kept (what it names), not where it is.
_MACHINE_PATH = re.compile(r"(?<![\w<>.~/:])/(?:[\w.+@-]+/)*([\w.+@-]+)/?")


def _said(found: Named) -> str:
    if found.release is None or found.package is None:
        return found.note or "not found"
    said = f"{found.package} {found.before} → {found.release} ({found.how})"
    if found.commit is not None:
        said += f", commit {code_span(found.commit.sha[:12])}"
    return said + (f"; {found.note}" if found.note else "")


def _main_said(on_main: OnMain) -> str:
    if on_main.outcome is None:
        return on_main.note or "not run"
    said = f"{on_main.outcome} at {code_span((on_main.commit.sha if on_main.commit else '')[:12])}"
    if on_main.since is not None:
        said += f", since {code_span(on_main.since.sha[:12])}"
    return said + (f"; {on_main.note}" if on_main.note else "")


def _store() -> Path:
    return default_store_root()


# The hunts on the one road (hunts.hunt.run_hunt), handed the budget; their lines unsaid.
def _bisect(options: BisectOptions, prober: Prober) -> BisectRecord:
    record, _code = run_hunt(BISECT, options, prober, Voice(say=_quiet, note=_quiet))
    return record


def _run_culprit(options: CulpritOptions, prober: Prober) -> CulpritRecord:
    record, _code = run_hunt(CULPRIT, options, prober, Voice(say=_quiet, note=_quiet))
    return record


def _quiet(_line: str) -> None:
    return None
