"""Culprit hunting without a person: which regressions of tonight's nightly can be
handed to a bisect, and over which range.

Two ways a failing case points at one package's releases:

1. **Last night**: the case passed in last night's results for the same
   combination id (ids come from matrix.yaml, so they survive a floating pin
   moving) and fails tonight, and exactly one *requested* package resolved to a
   different version: that package moved from release A to a newer release B.
   Bisect it over (A, B], the other requested packages held at tonight's versions.
2. **A neighbour** (issue C's rule, applied to a new failure that rule 1 cannot
   attribute): another combination of tonight's run that requests the same
   packages, resolved them identically but for one, and passes the case. Bisect
   that package between the two versions: first-bad when the failing side is the
   newer, first-good (when was it fixed) when it is the older.

Everything else (two packages moved, a git pin whose version did not change, a
system torch from a new image, pre-releases) is reported with the reason it was
not bisected. Nothing here talks to GitHub: see github.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from packaging.version import InvalidVersion, Version

from .results import CaseResult, CombinationResult, Results

PASSED = frozenset({"passed"})
FAILED = frozenset({"failed", "error", "crashed", "timed-out"})
# A failure inside a registered known-issue range is expected, not a regression.
EXPECTED = frozenset({"known-broken"})
INSTALL = "<install>"  # the "case" of a combination that no longer installs


@dataclass(frozen=True)
class Regression:
    combination: str
    case: str
    before: str  # last night's outcome ("" when the case is new)
    now: str


@dataclass(frozen=True)
class BisectRequest:
    """The inputs of bisect.yml (and of ``nox -s bisect``) for one culprit hunt."""

    package: str
    good: str
    bad: str
    find: str  # first-bad | first-good
    case: str
    pins: tuple[str, ...]  # PKG==VER: the other requested packages, held fixed
    combination: str
    reason: str

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.package, self.good, self.bad, self.find, self.case)

    def workflow_inputs(self, issue: int | None = None) -> dict[str, str]:
        inputs = {
            "package": self.package,
            "good": self.good,
            "bad": self.bad,
            "find": self.find,
            "case": self.case,
            "pins": " ".join(self.pins),
        }
        if issue is not None:
            inputs["issue"] = str(issue)
        return inputs


@dataclass
class Triage:
    regressions: list[Regression] = field(default_factory=list)
    bisects: list[BisectRequest] = field(default_factory=list)
    not_bisected: list[str] = field(default_factory=list)  # one line each: what and why
    flagged: list[str] = field(
        default_factory=list
    )  # combinations report's verdicts call REGRESSED

    @property
    def regressed(self) -> bool:
        return bool(self.regressions or self.flagged)

    def dump(self) -> dict:
        return {
            "regressed": self.regressed,
            "regressions": [asdict(r) for r in self.regressions],
            "flagged": self.flagged,
            "bisects": [asdict(b) for b in self.bisects],
            "not_bisected": self.not_bisected,
        }


def outcome(case: CaseResult) -> str:
    """What the case did, with a known-issue verdict kept (it is not a regression)."""
    if case.status in EXPECTED:
        return case.status
    return case.outcome or case.status


def triage(tonight: Results, baseline: Results | None, *, limit: int = 5) -> Triage:
    """Regressions against ``baseline`` and at most ``limit`` bisects for them.
    Without a baseline nothing is new, so nothing is dispatched (a first nightly
    would otherwise bisect every old failure)."""
    found = Triage(flagged=[c.id for c in tonight.combinations if c.verdict == "REGRESSED"])
    if baseline is None:
        return found
    for combo in tonight.combinations:
        before = baseline.find(combo.id)
        if before is not None and before.status == "passed" and combo.status == "install-error":
            found.regressions.append(Regression(combo.id, INSTALL, "passed", "install-error"))
            found.not_bisected.append(f"{combo.id}: no longer installs ({combo.message})")
        for case in combo.cases:
            now = outcome(case)
            if now not in FAILED:
                continue
            old_case = _case(before, case.id) if before is not None else None
            old = outcome(old_case) if old_case is not None else ""
            if old in PASSED:
                found.regressions.append(Regression(combo.id, case.id, old, now))
                request, why = _from_last_night(combo, before, case.id)  # type: ignore[arg-type]
            elif old == "":
                request, why = None, "new case or combination"
            else:
                continue  # failed last night too: not new, already triaged then
            if request is None:
                neighbour, why_not = _from_neighbours(tonight, combo, case.id)
                request = neighbour
                why = f"{why}; {why_not}" if neighbour is None else why
            if request is None:
                found.not_bisected.append(f"{combo.id} {case.id}: {why}")
            elif request.key not in {b.key for b in found.bisects}:
                if len(found.bisects) < limit:
                    found.bisects.append(request)
                else:
                    found.not_bisected.append(
                        f"{combo.id} {case.id}: over the limit of {limit} bisects a night"
                    )
    return found


def _case(combo: CombinationResult, case_id: str) -> CaseResult | None:
    return next((c for c in combo.cases if c.id == case_id), None)


def _release(version: str | None) -> Version | None:
    """A final release version, or None (missing, a dev build of a git pin, a
    pre-release, a local CUDA build): bisect walks released versions only."""
    if not version:
        return None
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    if parsed.is_prerelease or parsed.is_devrelease or parsed.local:
        return None
    return parsed


def _held_pins(combo: CombinationResult, moving: str) -> tuple[str, ...]:
    """The other requested packages at the versions this combination resolved;
    ``system`` and absent ones stay out (the bisect runner provides its own)."""
    pins = []
    for package, spec in combo.requested.items():
        version = combo.resolved.get(package)
        if package == moving or spec in ("system", "null") or _release(version) is None:
            continue
        pins.append(f"{package}=={version}")
    return tuple(pins)


def _moved(before: CombinationResult, now: CombinationResult) -> list[str]:
    return [
        package
        for package in now.requested
        if before.resolved.get(package) != now.resolved.get(package)
    ]


def _from_last_night(
    combo: CombinationResult, before: CombinationResult, case_id: str
) -> tuple[BisectRequest | None, str]:
    moved = _moved(before, combo)
    if not moved:
        return None, "no requested package moved since last night (a dependency, the cases?)"
    if len(moved) > 1:
        return None, f"{len(moved)} requested packages moved since last night: {', '.join(moved)}"
    package = moved[0]
    if combo.requested.get(package) == "system":
        return None, f"{package} is the runner's own (system) copy; its releases cannot be bisected"
    old, new = before.resolved.get(package), combo.resolved.get(package)
    good, bad = _release(old), _release(new)
    if good is None or bad is None:
        return None, f"{package} moved {old} -> {new}, not between two releases"
    if bad <= good:
        return None, f"{package} moved back ({old} -> {new})"
    return (
        BisectRequest(
            package=package,
            good=str(old),
            bad=str(new),
            find="first-bad",
            case=case_id,
            pins=_held_pins(combo, package),
            combination=combo.id,
            reason=f"passed last night with {package} {old}, fails tonight with {new}",
        ),
        "",
    )


def _from_neighbours(
    run: Results, combo: CombinationResult, case_id: str
) -> tuple[BisectRequest | None, str]:
    """The closest passing neighbour that differs from ``combo`` in exactly one
    requested package's resolved release."""
    best: tuple[Version, BisectRequest] | None = None
    for other in _passing_neighbours(run.combinations, combo, case_id):
        differing = [p for p in combo.requested if other.resolved.get(p) != combo.resolved.get(p)]
        if len(differing) != 1:
            continue
        package = differing[0]
        failing, passing = (
            _release(combo.resolved.get(package)),
            _release(other.resolved.get(package)),
        )
        if failing is None or passing is None:
            continue
        find = "first-bad" if failing > passing else "first-good"
        request = BisectRequest(
            package=package,
            good=str(passing),
            bad=str(failing),
            find=find,
            case=case_id,
            pins=_held_pins(combo, package),
            combination=combo.id,
            reason=(
                f"passes in {other.id} with {package} {passing}, fails in {combo.id} with {failing}"
            ),
        )
        distance = _distance(failing, passing)
        if best is None or distance < best[0]:
            best = (distance, request)
    if best is None:
        return None, "no passing neighbour differs in one package's release"
    return best[1], ""


def _passing_neighbours(
    combos: Iterable[CombinationResult], combo: CombinationResult, case_id: str
) -> Iterable[CombinationResult]:
    for other in combos:
        if other.id == combo.id or set(other.requested) != set(combo.requested):
            continue
        if other.device != combo.device:
            continue  # a CPU pass says nothing about a GPU failure
        case = _case(other, case_id)
        if case is not None and outcome(case) in PASSED:
            yield other


def _distance(a: Version, b: Version) -> Version:
    """An ordering key for 'how far apart': release tuples subtracted place by place."""
    width = max(len(a.release), len(b.release))
    pa = a.release + (0,) * (width - len(a.release))
    pb = b.release + (0,) * (width - len(b.release))
    return Version(".".join(str(abs(x - y)) for x, y in zip(pa, pb, strict=True)))
