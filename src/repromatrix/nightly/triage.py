"""Culprit hunting without a person: which regressions of tonight's nightly are
handed to a bisect, and over which range.

The rules that name a range are verdicts' (verdicts/judge.py): tonight's results are
judged against last night's (``verdicts.judge``), which gives every failing case its
transitions, nearest first: the one package that moved since last night
(``baseline_transition``), and the neighbours of tonight's run that differ in one
package and pass (``Neighbours``), each with the pins that hold the rest
(``held_pins``). This module only decides what the nightly does with them:

- a regression is a case that passed last night and fails tonight (known-broken and
  flaky are not), or a combination that no longer installs;
- a case that fails tonight and did not run last night (new) may still be bisected
  from a neighbour; one failing last night too was triaged then;
- without last night's results nothing is new, so nothing is dispatched;
- only a step between two final releases of a package the matrix installs is
  bisected (bisect walks releases; a system torch comes from the runner's image);
- one bisect per (package, range, case), at most ``limit`` a night;
- everything not bisected gets a one-line reason;
- a regression that no single package explains (more than one package moved since
  last night, or only dependencies did) becomes a culprit hunt between last night's
  and tonight's resolved sets (``CulpritRequest``: the two locks, for culprit.yml),
  one per combination, at most ``limit`` a night.

Nothing here talks to GitHub: nightly/follow.py does, through github/client.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from packaging.version import InvalidVersion, Version

from repromatrix.matrix.sessions import command_line
from repromatrix.outcomes import FAILURES, Verdict
from repromatrix.results import CaseResult, CombinationResult, Results, Transition
from repromatrix.verdicts import changed_packages, judge
from repromatrix.verdicts.causes import combination_cause, failure_cause
from repromatrix.verdicts.knownissues import Registry

INSTALL = "<install>"  # the "case" of a combination that no longer installs


@dataclass(frozen=True)
class Regression:
    combination: str
    case: str
    before: str  # last night's outcome
    now: str
    signature: str = ""  # the key of what it died of (verdicts/causes.py)


class Dispatch:
    """A hunt the nightly hands a workflow: ``HUNT``, its row in hunt_table.py (the
    workflow it goes to); ``INPUTS``, each workflow input and the field it comes from
    (several values joined by spaces); ``NAMED_BY``, the fields its name on the tracking
    issue holds after ``HUNT``."""

    HUNT: ClassVar[str]
    INPUTS: ClassVar[dict[str, str]]
    NAMED_BY: ClassVar[tuple[str, ...]]

    @property
    def hunt(self) -> str:
        """The hunt's name on the tracking issue (its comment carries it back)."""
        return ":".join([self.HUNT, *(getattr(self, name) for name in self.NAMED_BY)])

    def workflow_inputs(self, issue: int | None = None) -> dict[str, str]:
        """Its workflow's inputs, with its name on the tracking issue and the issue's
        number (its answer goes there)."""
        inputs: dict[str, str] = {}
        for name, attribute in self.INPUTS.items():
            value = getattr(self, attribute)
            inputs[name] = " ".join(value) if isinstance(value, tuple) else value
        inputs["hunt"] = self.hunt
        if issue is not None:
            inputs["issue"] = str(issue)
        return inputs


@dataclass(frozen=True)
class BisectRequest(Dispatch):
    """The inputs of bisect.yml (and of ``nox -s bisect``) for one culprit hunt."""

    HUNT: ClassVar[str] = "bisect"
    INPUTS: ClassVar[dict[str, str]] = {
        name: name for name in ("package", "good", "bad", "find", "case", "pins", "cell")
    }
    NAMED_BY: ClassVar[tuple[str, ...]] = ("package", "good", "bad", "combination", "case")

    package: str
    good: str
    bad: str
    find: str  # first-bad | first-good
    case: str
    pins: tuple[str, ...]  # --pin arguments holding the other packages (verdicts.held_pins)
    combination: str
    reason: str
    cell: str = ""  # the combination as JSON (matrix.cell): the cell the nightly built

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.package, self.good, self.bad, self.find, self.case)

    @property
    def what(self) -> str:
        """The hunt in a few words, for the tracking issue."""
        return f"{self.package} {self.good}..{self.bad} ({self.find})"


@dataclass(frozen=True)
class CulpritRequest(Dispatch):
    """The inputs of culprit.yml (and of ``nox -s culprit``): last night's and tonight's
    resolved versions of one combination as locks, and the case that regressed."""

    HUNT: ClassVar[str] = "culprit"
    INPUTS: ClassVar[dict[str, str]] = {
        "good": "good", "bad": "bad", "case": "case", "pins": "pins", "name": "combination",
        "cell": "cell",
    }  # fmt: skip
    NAMED_BY: ClassVar[tuple[str, ...]] = ("combination", "case")

    combination: str
    case: str
    good: tuple[str, ...]  # name==version, last night
    bad: tuple[str, ...]  # name==version, tonight
    pins: tuple[str, ...]  # held on both sides: the runner's torch, a git pin
    changed: tuple[str, ...]  # "package old -> new", for the log and the issue
    reason: str
    cell: str = ""  # the combination as JSON (matrix.cell): nulls, overrides, indexes, env

    @property
    def what(self) -> str:
        return f"{self.combination}: {len(self.changed)} packages moved"

    def command(self, good_results: str, bad_results: str) -> str:
        """The local command that hunts the same culprit from the two results folders."""
        args = [
            "--good-results", good_results, "--bad-results", bad_results,
            "--combination", self.combination, "--case", self.case,
        ]  # fmt: skip
        for pin in self.pins:
            args += ["--pin", pin]
        if self.cell:
            args += ["--cell", self.cell]
        # nox runs a session from its noxfile's folder; the results folders triage
        # names are relative to where it runs.
        return command_line("culprit", args, folder=Path.cwd())


@dataclass
class Triage:
    regressions: list[Regression] = field(default_factory=list)
    bisects: list[BisectRequest] = field(default_factory=list)
    culprits: list[CulpritRequest] = field(default_factory=list)
    not_bisected: list[str] = field(default_factory=list)  # one line each: what and why
    flagged: list[str] = field(default_factory=list)  # combinations the verdicts call REGRESSED

    @property
    def regressed(self) -> bool:
        return bool(self.regressions or self.flagged)

    def requests(self) -> list[BisectRequest | CulpritRequest]:
        """Every hunt asked for, each with its ``HUNT`` (the workflow it goes to)."""
        return [*self.bisects, *self.culprits]

    def dump(self) -> dict:
        return {
            "regressed": self.regressed,
            "regressions": [asdict(r) for r in self.regressions],
            "flagged": self.flagged,
            "bisects": [asdict(b) for b in self.bisects],
            "culprits": [asdict(c) for c in self.culprits],
            "not_bisected": self.not_bisected,
        }


def triage(
    tonight: Results,
    baseline: Results | None,
    *,
    limit: int = 5,
    registry: Registry | None = None,
    cells: Mapping[str, str] | None = None,
) -> Triage:
    """Regressions against ``baseline`` and at most ``limit`` bisects for them.

    ``tonight`` is judged in place (``verdicts.judge`` with ``registry`` and
    ``baseline``: the same verdicts ``repromatrix report`` gives with them). Without
    a baseline nothing is new, so nothing is dispatched (a first nightly would
    otherwise bisect every old failure). ``cells``: combination id -> its cell as JSON
    (matrix.cell), handed to each hunt so that it rebuilds the cells the nightly ran."""
    judge(tonight, registry, baseline)
    cells = cells or {}
    found = Triage(flagged=[c.id for c in tonight.combinations if c.verdict == Verdict.REGRESSED])
    if baseline is None:
        return found
    for combo in tonight.combinations:
        before = baseline.find(combo.id)
        if before is not None and before.status == "passed" and combo.status == "install-error":
            found.regressions.append(
                Regression(
                    combo.id, INSTALL, "passed", "install-error", combination_cause(combo).key
                )
            )
            found.not_bisected.append(f"{combo.id}: no longer installs ({combo.message})")
        for case in combo.cases:
            if case.status not in FAILURES or case.change == "still-failing":
                continue  # passing, skipped, flaky, known-broken; or triaged last night
            if case.change == "regressed":
                found.regressions.append(
                    Regression(
                        combo.id,
                        case.id,
                        case.baseline_status or "",
                        case.status,
                        failure_cause(combo, case).key,
                    )
                )
            request, why = _culprit_hunt(combo, case, before)
            if request is None:
                hunt = _lock_hunt(combo, case, before) if case.change == "regressed" else None
                if hunt is not None and combo.id in {c.combination for c in found.culprits}:
                    why += "; a culprit hunt of this combination is already requested"
                elif hunt is not None and len(found.culprits) >= limit:
                    why += f"; over the limit of {limit} culprit hunts a night"
                elif hunt is not None:
                    found.culprits.append(replace(hunt, cell=cells.get(combo.id, "")))
                    why += f"; culprit hunt over the {len(hunt.changed)} packages that moved"
                found.not_bisected.append(f"{combo.id} {case.id}: {why}")
            elif request.key not in {b.key for b in found.bisects}:
                if len(found.bisects) < limit:
                    found.bisects.append(replace(request, cell=cells.get(combo.id, "")))
                else:
                    found.not_bisected.append(
                        f"{combo.id} {case.id}: over the limit of {limit} bisects a night"
                    )
    return found


def _culprit_hunt(
    combo: CombinationResult, case: CaseResult, before: CombinationResult | None
) -> tuple[BisectRequest | None, str]:
    """The first of the case's transitions (nearest first) that a bisect can walk,
    or why there is none."""
    reasons = []
    if case.change == "regressed" and before is not None:
        if not any(t.source == "baseline" for t in case.transitions):
            reasons.append(_no_single_step(combo, before))
    else:
        then = case.baseline_status
        reasons.append(f"{then} last night" if then else "new case or combination")
    for step in case.transitions:
        why = _not_bisectable(combo, step)
        if why is None:
            return _request(combo, step), ""
        reasons.append(why)
    if not any(t.source == "neighbour" for t in case.transitions):
        reasons.append("no passing neighbour differs in one package's version")
    return None, "; ".join(reasons)


def _lock_hunt(
    combo: CombinationResult, case: CaseResult, before: CombinationResult | None
) -> CulpritRequest | None:
    """A culprit hunt between last night's and tonight's resolved sets, or None when
    they cannot be compared (no baseline, another Python, nothing moved). Packages
    the runner's image provides (system) and git pins are held, not locked."""
    if before is None or before.environment.python != combo.environment.python:
        return None
    held = {
        package: spec
        for package, spec in combo.requested.items()
        if spec == "system" or "@" in spec or spec.startswith(("git+", "https://", "file:"))
    }
    system = set(combo.environment.system) | set(before.environment.system)
    skip = set(held) | system

    def lock(result: CombinationResult) -> tuple[str, ...]:
        return tuple(
            f"{name}=={version}"
            for name, version in sorted(result.resolved.items())
            if name not in skip and _release(version) is not None
        )

    good, bad = lock(before), lock(combo)
    then, now = dict(p.split("==") for p in good), dict(p.split("==") for p in bad)
    changed = tuple(
        f"{name} {then.get(name, 'none')} -> {now.get(name, 'none')}"
        for name in sorted(set(then) | set(now))
        if then.get(name) != now.get(name)
    )
    if not changed:
        return None
    pins = tuple(
        f"{package}=system" if spec == "system" else f"{package}@{spec.removeprefix('@')}"
        for package, spec in sorted(held.items())
    ) + tuple(  # a local build (2.13.0+cpu) no index lists as a release: held as it is
        f"{name}=={version}"
        for name, version in sorted(combo.resolved.items())
        if name not in skip and _release(version) is None and before.resolved.get(name) == version
    )
    return CulpritRequest(
        combination=combo.id,
        case=case.id,
        good=good,
        bad=bad,
        pins=pins,
        changed=changed,
        reason=f"passed last night, fails tonight; {len(changed)} packages moved",
    )


def _no_single_step(combo: CombinationResult, before: CombinationResult) -> str:
    """Why last night's run names no step (verdicts.baseline_transition gave none)."""
    then, now = before.environment.python, combo.environment.python
    if then != now:
        return f"the cells' Python changed since last night ({then} -> {now})"
    moved = changed_packages(combo, before)
    if not moved:
        return "no requested package moved since last night (a dependency, the cases?)"
    if len(moved) > 1:
        return f"{len(moved)} requested packages moved since last night: {', '.join(moved)}"
    [(package, (old, new))] = moved.items()
    return f"{package} is not installed on both nights ({old or 'none'} -> {new or 'none'})"


def _not_bisectable(combo: CombinationResult, step: Transition) -> str | None:
    """Triage's policy on one transition: None when a bisect can walk it."""
    package, good, bad = step.package, step.good, step.bad
    if combo.requested.get(package) == "system":
        return f"{package} is the runner's own (system) copy; its releases cannot be bisected"
    passes, fails = _release(good), _release(bad)
    if passes is None or fails is None:
        return f"{package} {good} -> {bad}, not between two releases"
    if step.direction == "regressed" and fails <= passes:
        return f"{package} moved back ({good} -> {bad})"
    if not step.case:
        return f"{package} {good} -> {bad}: no case passed on the good side to bisect with"
    return None


def _request(combo: CombinationResult, step: Transition) -> BisectRequest:
    package, good, bad = step.package, step.good, step.bad
    if step.source == "baseline":
        reason = f"passed last night with {package} {good}, fails tonight with {bad}"
    else:
        reason = (
            f"passes in {step.good_combination} with {package} {good}, "
            f"fails in {step.bad_combination} with {bad}"
        )
    return BisectRequest(
        package=package,
        good=good,
        bad=bad,
        find="first-bad" if step.direction == "regressed" else "first-good",
        case=step.case,
        pins=tuple(step.pins),
        combination=combo.id,
        reason=reason,
    )


def _release(version: str) -> Version | None:
    """A final release version, or None (a dev build of a git pin, a pre-release, a
    local CUDA build): bisect walks released versions only."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    if parsed.is_prerelease or parsed.is_devrelease or parsed.local:
        return None
    return parsed
