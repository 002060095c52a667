"""A matrix run, as a list of small steps:

load matrix -> select combinations -> preflight (cases, selection, folders)
  -> claim the results directory
  -> for each combination (--jobs N of them at once, scheduler.py):
       build environment -> run cases -> write its result -> merge results.json
  -> verdicts -> reports -> exit code (reports.Reporting)
"""

from __future__ import annotations

import hashlib
import shlex
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from repromatrix import __version__
from repromatrix.environment import (
    Environment,
    EnvRequest,
    EnvStore,
    IndexSettings,
    InstallError,
)
from repromatrix.errors import UserError, writable_folder
from repromatrix.execution import host, scheduler
from repromatrix.execution.cell import run_in_cell
from repromatrix.execution.collect_env import HostProbe
from repromatrix.execution.runner import CaseRecord, CaseRunner, check_records
from repromatrix.matrix import CaseIndex, Combination, Matrix, load_matrix
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.defaults import DEFAULT_TIER
from repromatrix.matrix.locate import FILE_NAME
from repromatrix.matrix.locate import shown as shown_matrix
from repromatrix.matrix.sessions import command_line
from repromatrix.matrix.shards import Shard
from repromatrix.outcomes import FAILURES, CaseStatus, combination_status
from repromatrix.redact import portable_argv, redact, redact_env
from repromatrix.reports import Reporting
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    EnvironmentInfo,
    FailureSignature,
    Results,
    ResultsDir,
    RunInfo,
    read_combinations,
    utc_now,
    write_combination,
    write_json_atomic,
)
from repromatrix.verdicts.knownissues import KnownIssue, Registry, RegistryLocation


@dataclass
class RunOptions:
    matrix: Path = Path("matrix.yaml")
    tier: str | None = None
    combinations: list[str] = field(default_factory=list)
    results: Path = Path("reports/latest")
    env_dir: Path | None = None
    cases: Path | None = None  # the cases folder; default: beside matrix.yaml
    selection: list[str] = field(default_factory=list)  # pytest node ids / paths in cases/
    mode: str = "fresh"  # fresh | update | resume
    reruns: int = 2
    workers: int = 1
    jobs: int = 1
    baseline: Path | None = None  # a previous results.json (or its folder) to compare with
    known_issues: Path | None = None  # default: known_issues.yaml in the cases folder
    shard: Shard | None = None  # run only this part of the selection (matrix/shards.py)
    # Where cells install from; None: the user's PIP_* / UV_* settings. The atlas's
    # --wheelhouse hands its folder here, so its cells install only from it.
    index: IndexSettings | None = None


def reporting_for(options: RunOptions) -> Reporting:
    """The matrix's known-issue registry (RegistryLocation's rule) and --baseline."""
    return Reporting.prepare(
        known_issues=RegistryLocation.of(
            matrix=options.matrix, cases=options.cases, explicit=options.known_issues
        ),
        baseline=options.baseline,
    )


def select(matrix: Matrix, options: RunOptions) -> list[Combination]:
    chosen = _chosen(matrix, options)
    return options.shard.take(chosen) if options.shard is not None else chosen


def _chosen(matrix: Matrix, options: RunOptions) -> list[Combination]:
    if options.combinations:
        chosen = [matrix.find(c) for c in options.combinations]
        if options.tier:
            wrong = [c.id for c in chosen if c.tier != options.tier]
            if wrong:
                raise UserError(f"combination {wrong[0]!r} is not in tier {options.tier!r}")
        return chosen
    return list(matrix.tier(options.tier or DEFAULT_TIER))


def preflight(matrix: Matrix, options: RunOptions) -> None:
    """Everything a run needs, checked before the results folder is claimed: a fresh
    run moves the previous results aside, and a run refused for bad input must not
    have cost them."""
    cases_root = (options.cases or matrix.path.parent / "cases").resolve()
    if not cases_root.is_dir():
        raise UserError(f"{cases_root}: no cases folder (--cases)")
    index = CaseIndex(cases_root)
    for selection in options.selection:
        target = selection.split("::", 1)[0]
        if not target or not (cases_root / target).resolve().is_relative_to(cases_root):
            raise UserError(f"{selection!r}: not a case in {cases_root.name}/")
        # A case id that names no case (a typo in [defualt]) is refused here, not left
        # to become a failing case that replaces the stored result.
        problem = index.problem(selection)
        if problem:
            raise UserError(f"{selection!r}: {problem}")
    writable_folder(options.results, "--results", renamed=options.mode == "fresh")
    writable_folder(EnvStore(options.env_dir).root, "--env-dir")
    if options.mode != "fresh" and options.results.is_dir():
        # What --resume and --update keep must be results, checked before any cell runs.
        read_combinations(options.results)
        if options.mode == "resume":
            for records in sorted((options.results / "records").glob("*.jsonl")):
                check_records(records)


def repro_command(combo: Combination, case_id: str | None = None, *, matrix: Path) -> str:
    """One line that reruns exactly this combination (and case) where the user is:
    ``nox -s <id>`` where a noxfile beside the matrix makes one session per combination
    (it reads that folder's matrix.yaml), else the repromatrix command itself (a project
    that only installed the tool, or a run of another matrix file)."""
    words = ["run", "--update", "--combination", combo.id]
    if Path(matrix).name != FILE_NAME:  # the default is found by searching upward
        words += ["--matrix", shown_matrix(matrix)]
    command = command_line(
        combo.id,
        folder=Path(matrix).parent,
        harness=words,
        combination=Path(matrix).name == FILE_NAME,
    )
    if case_id:
        command += f" -- {shlex.quote(case_id)}"
    return command


class MatrixRun:
    """Runs combinations one after another into a claimed results directory."""

    def __init__(
        self,
        matrix: Matrix,
        options: RunOptions,
        out: ResultsDir,
        *,
        say: Callable[[str], None] = print,
        registry: Registry | None = None,
    ) -> None:
        self.matrix = matrix
        self.options = options
        self.out = out
        self.say = say
        self.registry = registry or Registry()
        self.store = EnvStore(options.env_dir)
        self.index = options.index or IndexSettings.from_environment()
        self.cases_root = (options.cases or matrix.path.parent / "cases").resolve()
        if not self.cases_root.is_dir():
            raise UserError(f"{self.cases_root}: no cases folder")
        # torch.utils.collect_env, once per run
        self.host_probe = HostProbe(out.path, save=write_json_atomic)
        # A run of some cases of a combination (--update CASE) keeps its other results.
        self.earlier = (
            read_combinations(out.path) if options.mode == "update" and options.selection else {}
        )

    def run_info(self, started: str) -> RunInfo:
        return RunInfo(
            id=uuid.uuid4().hex[:12],
            started=started,
            tier=self.options.tier or (None if self.options.combinations else DEFAULT_TIER),
            matrix=shown_matrix(self.matrix.path),  # which file: it may be found upward
            matrix_sha256=hashlib.sha256(self.matrix.path.read_bytes()).hexdigest(),
            repromatrix=__version__,
            cases_commit=host.git_commit(self.cases_root),
            command=shlex.join(["repromatrix", *portable_argv(sys.argv[1:])]),
            host=host.describe(),
        )

    def run_combination(
        self,
        combo: Combination,
        *,
        say: Callable[[str], None] | None = None,
        visible_devices: str | None = None,
    ) -> CombinationResult:
        """Build, run and record one combination. ``say`` gets its progress lines
        (default: the run's); ``visible_devices`` is the CUDA_VISIBLE_DEVICES the
        scheduler gave it (the cell's environment only: not part of its identity)."""
        say = say or self.say
        started, clock = utc_now(), time.monotonic()
        result = CombinationResult(
            id=combo.id,
            tier=combo.tier,
            requested=combo.requested(),
            status="skipped",
            started=started,
            device=combo.device,
            tags=list(combo.tags),
            env=redact_env(dict(combo.env)),
            repro=repro_command(combo, matrix=self.matrix.path),
            visible_devices=visible_devices,
        )
        if not host.has_device(combo.device):
            result.message = host.NO_GPU_REASON
            return self._finish(result, clock)

        cell = CellSpec.of(combo)
        index = self.index.for_cell(cell)

        def run_cases(env: Environment) -> None:
            result.resolved = env.resolved
            result.environment = EnvironmentInfo(
                identity=env.identity[:16],
                reused=env.reused,
                build_seconds=round(env.seconds, 2),
                python=env.interpreter.version,
                system=env.system,
                index=index.describe(),
                sources={tree.package: tree.record() for tree in env.sources},
            )
            say(f"  environment {'reused' if env.reused else 'built'} in {env.seconds:.1f}s")
            for tree in env.sources:
                say(f"  {tree.line()}")
            self.host_probe.collect(env, combo.id)
            self._run_cases(env, combo, result, say, visible_devices)

        built = run_in_cell(
            self.store,
            EnvRequest.for_cell(cell, index),
            run_cases,
            timeout=combo.install_timeout,
            install_log=self.out.log_path(combo.id, "install"),
        )
        if isinstance(built, InstallError):
            result.status, result.message = "install-error", f"{built.stage}: {built.message}"
        return self._finish(result, clock)

    def _run_cases(
        self,
        env: Environment,
        combo: Combination,
        result: CombinationResult,
        say: Callable[[str], None],
        visible_devices: str | None,
    ) -> None:
        """The combination's cases in its built cell, into ``result``."""
        records = self.out.records_path(combo.id)
        stamp = records.with_suffix(".identity")
        if self.options.mode != "resume" or not stamp.exists() or stamp.read_text() != env.identity:
            records.unlink(missing_ok=True)  # records of another environment are not ours
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(env.identity)
        cell_env = dict(combo.env)
        if visible_devices is not None:
            cell_env["CUDA_VISIBLE_DEVICES"] = visible_devices
        runner = CaseRunner(
            env,
            self.cases_root,
            case_timeout=combo.case_timeout,
            extra_env=cell_env,
            workers=self.options.workers,
            log_path=self.out.log_path(combo.id, "cases"),
            on_case=CaseLines(say, lambda case_id: self.registry.match(result, case_id)),
        )
        selection = self.options.selection or list(combo.cases)
        # A failure inside a registered known-issue range is expected: rerunning it
        # to tell flaky from broken would only pay the imports again.
        ran = runner.run(
            selection,
            records,
            reruns=self.options.reruns,
            rerun_wanted=lambda case_id: self.registry.match(result, case_id) is None,
        )
        result.cases = with_earlier(
            [_case_result(r) for r in ran.cases], self.earlier.get(combo.id), combo
        )
        kept = sum(1 for c in result.cases if c.from_run)
        if kept:
            say(f"  {kept} other case(s) kept from the earlier run (marked from_run)")
        result.status = combination_status({c.outcome for c in result.cases})

    def _finish(self, result: CombinationResult, clock: float) -> CombinationResult:
        result.seconds = round(time.monotonic() - clock, 2)
        result.finished = utc_now()
        write_combination(self.out.path, result)
        return result


def with_earlier(
    cases: list[CaseResult], earlier: CombinationResult | None, combo: Combination
) -> list[CaseResult]:
    """The cases run now, and the earlier run's other cases of this combination, kept
    and marked ``from_run`` (a one-case run replaces that case's result, not the
    combination's). Only results of the same pins are kept."""
    if earlier is None or earlier.requested != combo.requested():
        return cases
    now = {case.id: case for case in cases}
    merged = []
    for case in earlier.cases:
        if case.id in now:
            merged.append(now.pop(case.id))
        else:
            merged.append(case.model_copy(update={"from_run": case.from_run or earlier.started}))
    return merged + list(now.values())


def _case_result(record: CaseRecord) -> CaseResult:
    return CaseResult(
        id=record.id,
        status=record.outcome,
        outcome=record.outcome,
        seconds=round(record.seconds, 3),
        message=record.message,
        error_type=record.error_type,
        traceback=record.traceback,
        attempts=record.attempts,
        signature=FailureSignature.of(record.signature) if record.signature else None,
    )


def run(
    options: RunOptions,
    say: Callable[[str], None] | None = None,
    *,
    matrix: Matrix | None = None,
) -> tuple[Results, int]:
    """Run the selected combinations, ``options.jobs`` at once. Progress goes to a
    rich display on stdout, or as plain lines to ``say`` when one is given.
    ``matrix``: combinations made elsewhere (the atlas's cells), instead of the file's."""
    matrix = matrix or load_matrix(options.matrix, cases=options.cases)
    combos = select(matrix, options)
    preflight(matrix, options)
    # Registry and baseline are read now: bad input fails before the run, and a
    # baseline inside the results folder is read before a fresh run moves it aside.
    reporting = reporting_for(options)
    display: scheduler.Display = (
        scheduler.PlainDisplay(say) if say is not None else scheduler.RichDisplay()
    )
    schedule = scheduler.Scheduler(
        options.jobs,
        display,
        gpu_groups=scheduler.gpu_groups(options.jobs, scheduler.gpu_ids(host.gpus())),
    )
    out = ResultsDir(options.results.resolve())
    with out.claimed(options.mode):  # type: ignore[arg-type]
        runner = MatrixRun(matrix, options, out, say=display.line, registry=reporting.registry)
        info = runner.run_info(utc_now())
        done = read_combinations(out.path) if options.mode == "resume" else {}
        order = [c.id for c in matrix.combinations()]
        position = {c.id: i for i, c in enumerate(combos, 1)}
        todo: list[scheduler.Job[Combination]] = []
        for combo in combos:
            previous = done.get(combo.id)
            # As stored: with any credentials in a pin masked.
            if previous is not None and previous.requested == redact(combo.requested()):
                where = f"[{position[combo.id]}/{len(combos)}]"
                display.line(f"{where} {combo.id}: kept from the interrupted run")
                continue
            todo.append(scheduler.Job(combo.id, combo, needs_gpu=combo.device != "cpu"))

        def one(combo: Combination, lane: scheduler.Lane) -> CombinationResult:
            lane.say(f"[{position[combo.id]}/{len(combos)}] {combo.id} ({_pins_text(combo)})")
            result = runner.run_combination(combo, say=lane.say, visible_devices=lane.devices)
            lane.say(outcome_line(result, runner.registry))
            return result

        def merged(_job: scheduler.Job[Combination], _result: CombinationResult) -> None:
            # Its file is written already (run_combination); results.json follows,
            # from this one thread, under the directory's claim.
            info.finished = utc_now()
            out.merge(info, order)

        schedule.run(todo, one, merged)
        info.finished = utc_now()
        final = out.merge(info, order)
        results, code = reporting.finish(final, out.path, display.line, ran=[c.id for c in combos])
    return results, code


ERROR_LINE = 200  # characters of a failure's error on the live console (results keep all)


def case_line(record: CaseRecord, issue: KnownIssue | None, *, rerun: bool = False) -> str:
    """A case's progress line as it finishes: a failure inside a registered range
    says known-broken and the issue, as the verdicts will; a skip says why."""
    outcome = str(record.outcome)
    tail = ""
    if issue is not None and record.outcome in FAILURES:
        outcome, tail = CaseStatus.KNOWN_BROKEN, f"  {issue.link}"
    elif record.outcome == "skipped" and record.message:
        tail = f"  ({one_line(record.message)})"
    again = " (rerun)" if rerun else ""
    return f"    {outcome:<12} {record.id}  {record.seconds:.1f}s{again}{tail}"


class CaseLines:
    """What the live console says as each case of a combination finishes: its line,
    and under an unexpected failure its error line, as it happens (once: a rerun of
    the same case says "(rerun)")."""

    def __init__(
        self, say: Callable[[str], None], issue_of: Callable[[str], KnownIssue | None]
    ) -> None:
        self.say = say
        self.issue_of = issue_of
        self.seen: set[str] = set()

    def __call__(self, record: CaseRecord) -> None:
        issue = self.issue_of(record.id)
        rerun = record.id in self.seen
        self.seen.add(record.id)
        self.say(case_line(record, issue, rerun=rerun))
        if record.outcome in FAILURES and issue is None and not rerun:
            error = one_line(record.message)
            if record.error_type and not error.startswith(record.error_type):
                error = f"{record.error_type}: {error}"
            if error:
                cut = error if len(error) <= ERROR_LINE else error[: ERROR_LINE - 1] + "…"
                self.say(f"        {cut}")


def one_line(text: str) -> str:
    """The first line of a message that says something."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def outcome_line(result: CombinationResult, registry: Registry) -> str:
    """A combination's closing line: ``-> known-broken`` when every failure is a
    registered one (the verdict may still change once neighbours and a baseline are
    compared; the run's last lines give the verdicts)."""
    failing = [case for case in result.cases if case.outcome in FAILURES]
    issues = [registry.match(result, case.id) for case in failing]
    if failing and all(issues):
        links = sorted({issue.link for issue in issues if issue is not None})
        return f"  -> known-broken ({len(failing)} failing: {', '.join(links)})"
    return f"  -> {result.status}" + (f": {result.message}" if result.message else "")


def _pins_text(combo: Combination) -> str:
    return ", ".join(f"{p.package} {p}" for p in combo.pins)
