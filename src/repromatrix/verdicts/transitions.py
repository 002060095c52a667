"""Transitions: where a case's outcome changes between two combinations that differ
in one package (a neighbour in the same run, or the same combination in the baseline
run), which pins a bisect of it holds fixed, and the bisect command that finds the
release. Pure: reads stored results, runs nothing."""

from __future__ import annotations

import functools
import shlex
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from repromatrix.environment.source_tree import SourceTree, changed_text
from repromatrix.matrix.pins import Pin, PinKind, parse_pin, pin_text
from repromatrix.outcomes import COLLECTION_ID, FAILURES, CaseOutcome, CombinationStatus
from repromatrix.outcomes import raw_outcome as outcome_of_status
from repromatrix.results import CaseResult, CombinationResult, Transition

PASSED = CaseOutcome.PASSED


def raw_outcome(case: CaseResult) -> str:
    """What the run saw, before verdicts (older files may only have ``status``)."""
    outcome = case.outcome
    if outcome.__class__ is CaseOutcome:  # as read and as judged: no lookup
        return outcome  # type: ignore[return-value]
    if outcome:
        return CaseOutcome(outcome)
    return outcome_of_status(case.status)


def outcome_in(combination: CombinationResult, case_id: str) -> str | None:
    """The raw outcome of ``case_id`` in ``combination``; for the collection pseudo-case,
    ``passed`` when the combination's cases ran at all."""
    if case_id == COLLECTION_ID:
        if not combination.cases or combination.status == CombinationStatus.INSTALL_ERROR:
            return None
        failed = any(c.id == COLLECTION_ID for c in combination.cases)
        return CaseOutcome.FAILED if failed else PASSED
    for case in combination.cases:
        if case.id == case_id:
            return raw_outcome(case)
    return None


# --------------------------------------------------------------------------- transitions


def _packages(combination: CombinationResult) -> list[str]:
    """The matrix's packages for this combination, in column order."""
    return list(combination.requested)


def _resolved(combination: CombinationResult, package: str) -> str | None:
    if package in combination.resolved:
        return combination.resolved[package]
    # requested names are canonical; tolerate a resolved map that is not
    wanted = package.replace("_", "-").replace(".", "-").lower()
    for name, version in combination.resolved.items():
        if name.replace("_", "-").replace(".", "-").lower() == wanted:
            return version
    return None


@functools.lru_cache(maxsize=8192)  # a matrix repeats its versions in every row
def _version(text: str | None) -> Version | None:
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _held(combination: CombinationResult, package: str) -> dict[str, str]:
    """The other packages as resolved: what a transition's text shows."""
    held = {}
    for other in _packages(combination):
        version = _resolved(combination, other)
        if other != package and version is not None:
            held[other] = version
    return held


# Kinds of request whose resolved version names nothing an index can install.
HELD_AS_REQUESTED = frozenset({PinKind.SYSTEM, PinKind.ABSENT, PinKind.DIRECT, PinKind.PATH})


def held_pins(combination: CombinationResult, moving: str) -> list[str]:
    """The ``--pin`` arguments (matrix/pins.py's --pin grammar) that hold every matrix package
    but ``moving`` as ``combination`` had it, in column order:

    - ``PKG=system`` where it asked for the runner's own copy: its resolved version
      (2.11.0+cu128, from a CUDA image) is no index's to install;
    - ``PKG=null`` where it asked for none;
    - ``PKG@URL`` for a direct reference: what it resolved to (4.59.0.dev0 from git
      main) is on no index either;
    - ``PKG=./FOLDER`` for the project's own package, built from its folder;
    - else ``PKG==<resolved version>``, exactly (a local build such as 2.13.0+cpu too);
      a package with no resolved version is held as it was requested.
    """
    pins = []
    for package, spec in combination.requested.items():
        if package == moving:
            continue
        requested = _requested_pin(package, spec)
        version = _resolved(combination, package)
        if requested is not None and (requested.kind in HELD_AS_REQUESTED or version is None):
            pins.append(pin_text(requested))
        elif version is not None:
            pins.append(f"{package}=={version}")
    return pins


@functools.lru_cache(maxsize=4096)  # a matrix repeats few specs; judging asks often
def _requested_pin(package: str, spec: str) -> Pin | None:
    """A stored request (``str(Pin)``: null is "null") as a pin; None when it is not
    the matrix's grammar (a file edited by hand)."""
    try:
        return parse_pin(package, None if spec == "null" else spec)
    except ValueError:
        return None


def transition(
    *,
    direction: str,
    package: str,
    good: str,
    bad: str,
    combination: CombinationResult,
    case_id: str,
    source: str,
    good_combination: str,
    bad_combination: str,
    holding: tuple[dict[str, str], list[str]] | None = None,
) -> Transition:
    """The step of ``package`` from ``good`` to ``bad``, the others held as the failing
    ``combination`` had them (``holding``: its _held and held_pins, when known)."""
    held, pins = holding or (_held(combination, package), held_pins(combination, package))
    low, high = (good, bad) if direction == "regressed" else (bad, good)
    others = ", ".join(f"{name} {version}" for name, version in held.items())
    text = f"{direction} between {package} {low} and {high}" + (f" ({others})" if others else "")
    return Transition(
        direction=direction,
        package=package,
        good=good,
        bad=bad,
        held=held,
        pins=pins,
        case=case_id,
        source=source,
        good_combination=good_combination,
        bad_combination=bad_combination,
        text=text,
        bisect=bisect_command(
            package, good, bad, pins, case_id, direction, nox=_has_nox(combination)
        )
        if case_id
        else "",
    )


def _has_nox(combination: CombinationResult) -> bool:
    """Whether the run had a noxfile at hand: its repro line says (pipeline.repro_command);
    older results, without one, came from this repository's noxfile."""
    return not combination.repro or combination.repro.startswith("nox ")


def bisect_command(
    package: str,
    good: str,
    bad: str,
    pins: Iterable[str],
    case_id: str,
    direction: str,
    *,
    nox: bool = True,
) -> str:
    """The bisect command that finds the culprit (or fixing) release: the nox session
    where the run had a noxfile, else repromatrix itself."""
    parts = ["nox", "-s", "bisect", "--"] if nox else ["repromatrix", "bisect"]
    parts += ["--package", package, "--good", good, "--bad", bad]
    if direction == "fixed":
        parts += ["--find", "first-good"]
    for pin in pins:
        parts += ["--pin", pin]
    parts += ["--case", case_id]
    return " ".join(map(_quoted, parts))  # shlex.join


# shlex.quote, remembered: a large matrix's bisect commands are made of the same few
# hundred words (versions, pins, case ids).
_quoted = functools.lru_cache(maxsize=8192)(shlex.quote)


def baseline_transition(
    combination: CombinationResult, previous: CombinationResult, case_id: str
) -> Transition | None:
    """When exactly one package moved since the baseline run (a floating pin, say),
    the step it took."""
    moved = changed_packages(combination, previous)
    if len(moved) != 1 or combination.environment.python != previous.environment.python:
        return None
    if changed_sources(combination, previous):  # two things moved: no one step to blame
        return None
    package, (old, new) = next(iter(moved.items()))
    if old is None or new is None:
        return None
    return transition(
        direction="regressed",
        package=package,
        good=old,
        bad=new,
        combination=combination,
        case_id=case_id if case_id != COLLECTION_ID else _first_passing(previous),
        source="baseline",
        good_combination=combination.id,
        bad_combination=combination.id,
    )


def changed_packages(
    combination: CombinationResult, previous: CombinationResult
) -> dict[str, tuple[str | None, str | None]]:
    """package -> (then, now) for the matrix packages whose resolved version moved."""
    packages = dict.fromkeys([*_packages(previous), *_packages(combination)])
    out = {}
    for package in packages:
        then, now = _resolved(previous, package), _resolved(combination, package)
        if then != now:
            out[package] = (then, now)
    return out


def changed_sources(
    combination: CombinationResult, previous: CombinationResult
) -> dict[str, tuple[SourceTree, SourceTree]]:
    """package -> (then, now) for the packages built from a folder whose source moved
    (an edit or a commit: the version alone stays the same)."""
    then, now = previous.environment.sources, combination.environment.sources
    out = {}
    for package in now.keys() & then.keys():
        old = SourceTree.of_record(package, then[package])
        new = SourceTree.of_record(package, now[package])
        if old.digest != new.digest:
            out[package] = (old, new)
    return dict(sorted(out.items()))


def source_change_text(changed: dict[str, tuple[SourceTree, SourceTree]]) -> str:
    """``your source changed: abc1234 -> def5678 + edits`` (each package named where
    more than one is built from a folder)."""
    if len(changed) == 1:
        [(old, new)] = changed.values()
        return f"your source changed: {changed_text(old, new)}"
    steps = ", ".join(f"{p} {changed_text(old, new)}" for p, (old, new) in changed.items())
    return f"your source changed: {steps}"


def _first_passing(combination: CombinationResult) -> str:
    return next((c.id for c in combination.cases if raw_outcome(c) == PASSED), "")


class Neighbours:
    """Combinations of one run grouped by 'everything but one package': two members
    of a group differ in exactly that package's resolved version.

    Each group is sorted by that version once; for each (group, case) its passing and
    its failing members are listed once, and the nearest of either below or above a
    member is a binary search: a whole matrix is judged in n log n of its size.
    """

    def __init__(self, combinations: Iterable[CombinationResult]) -> None:
        self.signatures: dict[str, dict[str, str | None]] = {}
        self.keys: dict[str, dict[str, tuple]] = {}  # combination -> package -> its group
        self.outcomes: dict[str, dict[str, str]] = {}
        self.combinations: dict[str, CombinationResult] = {}
        members: dict[tuple, list[tuple[Version, CombinationResult]]] = defaultdict(list)
        for combination in combinations:
            if combination.status == CombinationStatus.INSTALL_ERROR or not combination.resolved:
                continue
            signature = {p: _resolved(combination, p) for p in _packages(combination)}
            self.signatures[combination.id] = signature
            self.combinations[combination.id] = combination
            self.outcomes[combination.id] = {c.id: raw_outcome(c) for c in combination.cases}
            keys = self.keys[combination.id] = {}
            ordered = sorted(signature.items())  # once: each group's key leaves one out
            where = (combination.environment.python, combination.device)
            for i, (package, resolved) in enumerate(ordered):
                version = _version(resolved)
                if version is not None:
                    key = keys[package] = (*where, package, (*ordered[:i], *ordered[i + 1 :]))
                    members[key].append((version, combination))
        self.groups = {}
        for key, found in members.items():
            found.sort(key=lambda item: item[0])  # stable: matrix order among equals
            versions = [v for v, _ in found]
            distinct = sorted(set(versions))
            self.groups[key] = _Group(
                versions=versions,
                members=[m for _, m in found],
                rank={v: i for i, v in enumerate(distinct)},
                position={m.id: i for i, (_, m) in enumerate(found)},
            )
        self._scans: dict[tuple, _Scan] = {}
        # (combination, package) -> what a step of that package holds: asked once per
        # failing case of the combination.
        self._holding: dict[tuple[str, str], tuple[dict[str, str], list[str]]] = {}

    def _scan(self, key: tuple, case_id: str) -> _Scan:
        scan = self._scans.get((key, case_id))
        if scan is None:
            group = self.groups[key]
            if case_id == COLLECTION_ID:
                outcomes = [outcome_in(m, case_id) for m in group.members]
            else:
                seen = self.outcomes
                outcomes = [seen[m.id].get(case_id) for m in group.members]
            scan = _Scan.of(outcomes)
            self._scans[(key, case_id)] = scan
        return scan

    def transitions(self, combination: CombinationResult, case_id: str) -> list[Transition]:
        signature = self.signatures.get(combination.id)
        if signature is None:
            return []
        found: list[tuple[int, int, Transition]] = []
        keys = self.keys[combination.id]
        for column, package in enumerate(signature):
            key = keys.get(package)
            if key is None:  # not a version: no neighbour along it
                continue
            group = self.groups[key]
            scan = self._scan(key, case_id)
            me = group.position[combination.id]
            mine = group.versions[me]
            good = scan.pass_below(me)
            # a passing member of the same version is no transition: skip past equals
            while good is not None and group.versions[good] == mine:
                good = scan.pass_below(good)
            if good is not None:
                # The failure's lower edge: the oldest failing version above the good one.
                bad = scan.fail_above(good)
                if bad is not None and group.versions[bad] <= mine:
                    distance = group.rank[mine] - group.rank[group.versions[good]]
                    step = self._make("regressed", package, group, good, bad, case_id, combination)
                    found.append((distance, column, step))
            good = scan.pass_above(me)
            while good is not None and group.versions[good] == mine:
                good = scan.pass_above(good)
            if good is not None:
                bad = scan.fail_below(good)
                if bad is not None and group.versions[bad] >= mine:
                    distance = group.rank[group.versions[good]] - group.rank[mine]
                    step = self._make("fixed", package, group, good, bad, case_id, combination)
                    found.append((distance, column, step))
        found.sort(key=lambda item: (item[2].direction != "regressed", item[0], item[1]))
        return [t for _, _, t in found]

    def _make(
        self,
        direction: str,
        package: str,
        group: _Group,
        good_index: int,
        bad_index: int,
        case_id: str,
        combination: CombinationResult,
    ) -> Transition:
        good, bad = group.members[good_index], group.members[bad_index]
        bisect_case = case_id if case_id != COLLECTION_ID else _first_passing(good)
        holding = self._holding.get((combination.id, package))
        if holding is None:
            holding = _held(combination, package), held_pins(combination, package)
            self._holding[(combination.id, package)] = holding
        return transition(
            direction=direction,
            package=package,
            good=self.signatures[good.id][package] or "",
            bad=self.signatures[bad.id][package] or "",
            combination=combination,
            case_id=bisect_case,
            source="neighbour",
            good_combination=good.id,
            bad_combination=bad.id,
            holding=holding,  # copied by the model's validation
        )


@dataclass
class _Group:
    versions: list[Version]  # sorted
    members: list[CombinationResult]  # in the same order
    rank: dict[Version, int]  # index among the distinct versions
    position: dict[str, int]  # combination id -> index


@dataclass
class _Scan:
    """For one case across a sorted group: the members whose outcome passed, and those
    whose outcome failed, as ascending indices. The nearest of either strictly before
    or after a member is a binary search (one list built per group and case, in C:
    a matrix of 2,000 scans thousands of groups, and asks only about its failures)."""

    passes: list[int]
    fails: list[int]

    @classmethod
    def of(cls, outcomes: list[str | None]) -> _Scan:
        return cls(
            passes=[i for i, outcome in enumerate(outcomes) if outcome == PASSED],
            fails=[i for i, outcome in enumerate(outcomes) if outcome in FAILURES],
        )

    def pass_below(self, index: int) -> int | None:
        return _before(self.passes, index)

    def pass_above(self, index: int) -> int | None:
        return _after(self.passes, index)

    def fail_below(self, index: int) -> int | None:
        return _before(self.fails, index)

    def fail_above(self, index: int) -> int | None:
        return _after(self.fails, index)


def _before(indices: list[int], index: int) -> int | None:
    """The last of ascending ``indices`` below ``index``."""
    at = bisect_left(indices, index)
    return indices[at - 1] if at else None


def _after(indices: list[int], index: int) -> int | None:
    """The first of ascending ``indices`` above ``index``."""
    at = bisect_right(indices, index)
    return indices[at] if at < len(indices) else None
