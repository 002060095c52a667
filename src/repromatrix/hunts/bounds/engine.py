"""The search of a bounds hunt, pure: handed the dependencies (ranges.py) and the cells
(cellset.Cells over an oracle), it answers, for each dependency, whether the lowest
and the newest release its range admits work, and whether its upper bound shuts out
releases that work.

1. **Both ends of every range at once**: the newest allowed set, and the all-floors
   set (uv's ``--resolution lowest-direct``, resolved by the caller).
2. **A working set** of the others to judge each dependency beside: the newest set
   when it works. Else a set that works is found (the all-floors set, the target's
   release day, the middle of every range) and culprit's ddmin (search/ddmin.py)
   finds which dependencies' newest releases break it, moved back one group at a
   time; each of those is then bisected (search/bisection.py) to its newest
   working release: ``ceiling-missing``, with the first release that fails.
3. **Each end beside the working set**, all at once: the floor of every dependency,
   and the newest release each cap shuts out.
4. **Short searches only where an end fails**: a floor that fails is bisected up to
   the lowest release that works (``floor-too-low``); a shut-out release that fails is
   bisected down to the first that fails, and a cap that shuts out working releases is
   ``ceiling-too-tight``. Cells grow with the number of dependencies and the log of
   their release counts, never with the release counts.
5. **The floors together**: when the all-floors set fails although each floor works
   alone, ddmin names the floors that fail together (``floors-conflict``); so does a
   lowest-direct resolution that had to lift a floor.

A set uv refuses is a skip (nothing ran); a search stops asking after ``skip_budget``
skips and says which releases it could not test. Every answer names its cells.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from packaging.version import Version

from repromatrix.hunts.bounds.cellset import Cells, Seen, Versions
from repromatrix.hunts.bounds.ranges import Dependency, suggest
from repromatrix.outcomes import BOUND_TABLE, BoundVerdict, ProbeOutcome
from repromatrix.search import ddmin as dd
from repromatrix.search.bisection import Find, SearchResult, search

GOOD, BAD, SKIP = ProbeOutcome.GOOD, ProbeOutcome.BAD, ProbeOutcome.SKIP
SKIP_BUDGET = 3  # untestable releases one search tries before it says so


@dataclass
class End:
    """What is known of one end of a range: its verdict, the release judged and what
    it did, the release shown to work nearest it and the one shown to fail, the
    releases the answer could not test, and the cells that show it."""

    verdict: BoundVerdict = BoundVerdict.OK
    tested: Version | None = None  # floor: the lowest admitted; ceiling: the newest admitted
    outcome: ProbeOutcome | None = None
    works: Version | None = None  # floor: lowest shown to work; ceiling: newest shown to work
    fails: Version | None = None  # floor: highest failing below it; ceiling: first failing
    excluded: Version | None = None  # ceiling: the newest release the cap shuts out, tested
    excluded_outcome: ProbeOutcome | None = None
    untested: tuple[Version, ...] = ()  # releases between the two that could not be tested
    together: tuple[str, ...] = ()  # the other dependencies it fails with
    evidence: str = ""  # tested, or inferred by which rule
    reason: str = ""
    cells: list[int] = field(default_factory=list)

    def show(self, *seen: Seen | None) -> None:
        for one in seen:
            if one is not None and one.number and one.number not in self.cells:
                self.cells.append(one.number)


@dataclass
class Answer:
    dependency: Dependency
    floor: End = field(default_factory=End)
    ceiling: End = field(default_factory=End)
    verdict: BoundVerdict = BoundVerdict.OK
    suggested: str = ""


@dataclass
class Judgement:
    answers: list[Answer]
    working: dict[str, Version] | None  # the set every end was judged beside
    working_from: str  # how it was found
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Floors:
    """The all-floors set as uv's lowest-direct resolution gave it (None: it could not
    resolve), the floors it had to lift (name -> declared floor), and uv's words."""

    versions: dict[str, Version] | None
    lifted: dict[str, Version] = field(default_factory=dict)
    reason: str = ""


def judge(
    dependencies: Sequence[Dependency],
    cells: Cells,
    *,
    floors: Floors | None = None,
    references: Sequence[tuple[str, Versions]] = (),
    skip_budget: int = SKIP_BUDGET,
    say: Callable[[str], None] = lambda _line: None,
) -> Judgement:
    """Every dependency's answer (module docstring: the steps)."""
    return _Bounds(dependencies, cells, floors, references, skip_budget, say).judge()


class _Bounds:
    def __init__(self, dependencies, cells, floors, references, skip_budget, say) -> None:
        self.answers = {d.name: Answer(d) for d in dependencies}
        self.testable = [d for d in dependencies if d.admitted]
        self.cells: Cells = cells
        self.floors: Floors | None = floors
        self.references = references
        self.skip_budget = skip_budget
        self.say = say
        self.notes: list[str] = []

    # ------------------------------------------------------------------ the steps

    def judge(self) -> Judgement:
        for answer in self.answers.values():
            if not answer.dependency.admitted:
                for end in (answer.floor, answer.ceiling):
                    end.verdict, end.reason = BoundVerdict.UNTESTABLE, answer.dependency.reason
        if not self.testable:
            return self._judged(None, "no dependency to test")
        newest = {d.name: d.admitted[-1] for d in self.testable}
        floors = self._floor_set()
        first = [(newest, "newest allowed set")]
        if floors is not None:
            first.append((floors, "all floors (lowest-direct)"))
        said = self.cells.batch(first)
        working, how = self._working_set(newest, said[0], floors)
        if working is None:
            for answer in self.answers.values():
                for end in (answer.floor, answer.ceiling):
                    if end.verdict is BoundVerdict.OK:
                        end.verdict, end.reason = BoundVerdict.UNTESTABLE, how
            return self._judged(None, how)
        self.say(f"working set ({how}): {_text(working)}")
        self._ends(working)
        self._floors_together(working, floors)
        return self._judged(working, how)

    def _floor_set(self) -> dict[str, Version] | None:
        if self.floors is None or self.floors.versions is None:
            if self.floors is not None:
                self.notes.append(f"the floors cannot be installed together: {self.floors.reason}")
            return None
        names = {d.name for d in self.testable}
        return {n: v for n, v in self.floors.versions.items() if n in names}

    def _working_set(
        self, newest: dict[str, Version], said: Seen, floors: dict[str, Version] | None
    ) -> tuple[dict[str, Version] | None, str]:
        if said.outcome is GOOD:
            return dict(newest), "the newest allowed set works"
        reference, how = self._reference(newest, floors, said)
        if reference is None:
            return None, how
        self.say(f"the newest allowed set fails ({said.detail}); a working set {how}")
        target = dict(newest)
        groups: list[tuple[str, ...]] = []
        for _ in self.testable:
            changes = [n for n in target if target[n] != reference[n]]
            if not changes:
                break
            found = dd.ddmin(changes, self._mix(reference, target), jobs=self.cells.jobs)
            if found.status is not dd.Status.FOUND:
                self.notes.append(f"which newest releases break the set is unknown: {found.reason}")
                return dict(reference), how + "; ddmin could not conclude"
            groups.append(found.minimal)
            target = {**target, **{m: reference[m] for m in found.minimal}}
            if self.cells(target, "newest set, culprits moved back").outcome is GOOD:
                break
        else:
            return dict(reference), how
        for group in groups:
            for name in group:
                target[name] = self._ceiling_culprit(name, reference[name], target, group)
        return target, f"{how}, the newest releases that break it moved back"

    def _reference(
        self, newest: dict[str, Version], floors: dict[str, Version] | None, said: Seen
    ) -> tuple[dict[str, Version] | None, str]:
        """A set that works: the all-floors one, the caller's (the target's release
        day), the middle of every range; then one dependency moved at a time (the
        floors with one at its newest: a single floor that is too low; the newest with
        one at its floor: a single newest release that breaks), ``jobs`` at a time;
        (None, why) when none does."""
        middle = {d.name: d.admitted[(len(d.admitted) - 1) // 2] for d in self.testable}
        tried = [f"newest: {said.outcome.value} ({said.detail})"]
        named = [("all floors", floors), *self.references, ("middle", middle)]
        for label, versions in named:
            if versions is None:
                continue
            whole = {**newest, **{n: v for n, v in versions.items() if n in newest}}
            seen = self.cells(whole, f"reference set: {label}")
            if seen.outcome is GOOD:
                return whole, f"found from {label}"
            tried.append(f"{label}: {seen.outcome.value} ({seen.detail})")
        lowest = {d.name: d.admitted[0] for d in self.testable}
        base = {**lowest, **(floors or {})}
        moved = [({**base, n: newest[n]}, f"all floors, {n} newest") for n in newest]
        moved += [({**newest, n: lowest[n]}, f"newest, {n} at its floor") for n in newest]
        for start in range(0, len(moved), self.cells.jobs):
            chunk = moved[start : start + self.cells.jobs]
            for (versions, label), seen in zip(chunk, self.cells.batch(chunk), strict=True):
                if seen.outcome is GOOD:
                    return versions, f"found from {label}"
        tried.append("no single dependency moved to its floor or newest made one work")
        return None, "no set of the declared ranges was found to work: " + "; ".join(tried)

    def _mix(self, reference: Versions, target: Versions) -> dd.Oracle:
        """ddmin's oracle: the reference set with ``applied`` moved to ``target``."""

        def oracle(applied: frozenset[str]) -> dd.Trial:
            mixed = {**reference, **{n: target[n] for n in applied}}
            seen = self.cells(mixed, "mix (ddmin)")
            if seen.unresolvable:
                return dd.Trial(dd.Outcome.UNRESOLVABLE, seen.detail)
            return dd.Trial(dd.Outcome(seen.outcome.value), seen.detail)

        return oracle

    def _ceiling_culprit(
        self, name: str, works: Version, beside: dict[str, Version], group: tuple[str, ...]
    ) -> Version:
        """A dependency whose newest release broke the set: bisected between the
        release that works beside ``beside`` and its newest; its newest working one."""
        dependency = self.answers[name].dependency
        end = self.answers[name].ceiling
        walk = [v for v in dependency.admitted if v >= works]
        end.tested = dependency.admitted[-1]
        if len(walk) < 2:
            return works
        result = search(walk, self._along(beside, name, f"ceiling of {name}"), Find.FIRST_BAD)
        _shown_by(end, result)
        said = _said(result, walk[-1])
        if said is GOOD:  # its newest works here: what broke the set was another's
            end.outcome, end.works = GOOD, walk[-1]
            self.notes.append(f"{name}'s newest works once {', '.join(group)} moved back")
            return walk[-1]
        if said is not BAD:
            end.verdict, end.outcome = BoundVerdict.UNTESTABLE, said
            end.reason = f"{end.tested} could not be tested beside the working set"
            return works
        end.verdict, end.outcome = BoundVerdict.CEILING_MISSING, BAD
        end.together = tuple(n for n in group if n != name)
        end.works = result.last if result.last is not None else _best(result, GOOD, max)
        end.fails = result.first if result.first is not None else result.could_be_first[-1]
        end.untested = tuple(result.could_be_first[:-1])
        end.evidence = "tested"
        end.reason = f"{end.tested} fails beside a working set; {end.works} works"
        return end.works or works

    def _ends(self, working: dict[str, Version]) -> None:
        asked: list[tuple[Versions, str]] = []
        for d in self.testable:
            if working[d.name] != d.admitted[0]:
                asked.append(({**working, d.name: d.admitted[0]}, f"floor of {d.name}"))
            if self._caps(d, working):
                asked.append(({**working, d.name: d.excluded[-1]}, f"shut out: {d.name}"))
        self.cells.batch(asked)  # every end at once; the searches below read them back
        tasks: list[Callable[[], object]] = []
        for d in self.testable:
            tasks.append(lambda d=d: self._floor(d, working))
            tasks.append(lambda d=d: self._ceiling(d, working))
        self.cells.each(tasks)

    def _caps(self, d: Dependency, working: Versions) -> bool:
        """Whether ``d``'s cap is to be tested: its newest admitted works here and
        its range shuts out newer releases."""
        return bool(d.excluded) and working[d.name] == d.admitted[-1]

    def _floor(self, d: Dependency, working: dict[str, Version]) -> None:
        end = self.answers[d.name].floor
        lowest = d.admitted[0]
        seen = self.cells({**working, d.name: lowest}, f"floor of {d.name}")
        end.tested, end.outcome = lowest, seen.outcome
        end.show(seen)
        if seen.outcome is GOOD:
            end.works, end.evidence = lowest, "tested"
            return
        if seen.outcome is SKIP:
            end.verdict, end.evidence = BoundVerdict.UNTESTABLE, "could not be tested"
            end.reason = f"{lowest} could not be tested beside the working set: {seen.detail}"
            return
        walk = [v for v in d.admitted if v <= working[d.name]]
        result = search(walk, self._along(working, d.name, f"floor of {d.name}"), Find.FIRST_GOOD)
        _shown_by(end, result)
        end.verdict, end.evidence = BoundVerdict.FLOOR_TOO_LOW, "tested"
        end.works = result.first if result.first is not None else result.could_be_first[-1]
        end.fails = result.last if result.last is not None else _best(result, BAD, max)
        end.untested = tuple(result.could_be_first[:-1])
        end.reason = f"{lowest} fails ({seen.detail}); {end.works} is the lowest that works"

    def _ceiling(self, d: Dependency, working: dict[str, Version]) -> None:
        end = self.answers[d.name].ceiling
        if end.verdict is not BoundVerdict.OK:
            return  # a culprit of the newest set: judged in _ceiling_culprit
        newest = d.admitted[-1]
        end.tested, end.outcome, end.works, end.evidence = newest, GOOD, newest, "tested"
        end.show(self.cells.known(working))
        if working[d.name] != newest:  # judged beside a reference set; newest not tried
            end.verdict, end.outcome, end.works = BoundVerdict.UNTESTABLE, None, None
            end.reason = "the newest set could not be taken apart; its newest was not judged alone"
            return
        if not d.excluded:
            end.reason = "no release above the cap yet" if d.has_ceiling else ""
            return
        shut = d.excluded[-1]
        seen = self.cells({**working, d.name: shut}, f"shut out: {d.name}")
        end.excluded, end.excluded_outcome = shut, seen.outcome
        end.show(seen)
        if seen.outcome is GOOD:
            end.verdict, end.works = BoundVerdict.CEILING_TOO_TIGHT, shut
            end.evidence = "tested; the releases between inferred (one flip along the walk)"
            end.reason = f"{shut}, which the cap shuts out, works"
            return
        if seen.outcome is SKIP:
            end.verdict = BoundVerdict.UNTESTABLE
            end.reason = f"{shut}, shut out by the cap, could not be tested: {seen.detail}"
            return
        walk = [newest, *d.excluded]
        result = search(walk, self._along(working, d.name, f"shut out: {d.name}"), Find.FIRST_BAD)
        _shown_by(end, result)
        first = result.first if result.first is not None else result.could_be_first[0]
        works = result.last if result.last is not None else _best(result, GOOD, max)
        end.fails, end.untested = first, tuple(result.could_be_first[:-1])
        if works is not None and works > newest:
            end.verdict, end.works = BoundVerdict.CEILING_TOO_TIGHT, works
            end.reason = f"the cap shuts out {d.excluded[0]} to {works}, which work; {first} fails"
        elif _said(result, d.excluded[0]) is BAD:
            end.reason = f"{first}, the first release shut out, fails: the cap holds"
        else:
            end.verdict = BoundVerdict.UNTESTABLE
            end.reason = (
                f"{shut} fails, but the releases just above the cap could not be tested "
                f"({', '.join(map(str, result.could_be_first))})"
            )

    def _floors_together(
        self, working: dict[str, Version], floors: dict[str, Version] | None
    ) -> None:
        """Floors that only fail together (the all-floors cell), and floors uv had to lift."""
        alone = {a.dependency.name: a.floor for a in self.answers.values() if a.dependency.admitted}
        if self.floors is not None:
            for name, declared in self.floors.lifted.items():
                end = alone.get(name)
                if end is not None and end.verdict is BoundVerdict.OK:
                    end.verdict, end.evidence = BoundVerdict.FLOORS_CONFLICT, "resolved (uv)"
                    end.reason = (
                        f"uv's lowest-direct resolution cannot keep {declared} beside the other "
                        f"floors: {self.floors.reason}"
                    )
        if floors is None:
            return
        seen = self.cells(floors, "all floors (lowest-direct)")
        if seen.outcome is not BAD:
            return
        working_floors = {n: alone[n].works or working[n] for n in floors}
        if working_floors != floors:
            again = self.cells(working_floors, "working floors together")
            if again.outcome is not BAD:
                self.notes.append(
                    "the all-floors set fails only through the floors that are too low"
                )
                return
        changes = [n for n in working if working[n] != working_floors[n]]
        found = dd.ddmin(changes, self._mix(working, working_floors), jobs=self.cells.jobs)
        if found.status is not dd.Status.FOUND or len(found.minimal) < 2:
            self.notes.append(
                f"the floors fail together; which of them is unknown ({found.reason})"
            )
            return
        together = self.cells(
            {**working, **{n: working_floors[n] for n in found.minimal}}, "floors together"
        )
        for name in found.minimal:
            end = alone[name]
            if end.verdict is BoundVerdict.OK:
                end.verdict, end.evidence = BoundVerdict.FLOORS_CONFLICT, "tested"
                end.together = tuple(n for n in found.minimal if n != name)
                end.reason = f"works alone, fails with the floors of {', '.join(end.together)}"
                end.show(together)

    # ------------------------------------------------------------------ helpers

    def _along(self, beside: Versions, name: str, role: str) -> Callable[[Version], Seen]:
        """A search's oracle: ``name`` at a release, the others as in ``beside``;
        after ``skip_budget`` untestable releases it stops asking."""
        skipped = 0

        def probe(version: Version) -> Seen:
            nonlocal skipped
            if skipped >= self.skip_budget:
                return Seen(SKIP, f"not tried: {skipped} releases could not be tested")
            seen = self.cells({**beside, name: version}, role)
            skipped += seen.outcome is SKIP
            return seen

        return probe

    def _judged(self, working: dict[str, Version] | None, how: str) -> Judgement:
        for answer in self.answers.values():
            answer.verdict = verdict_of(answer)
            answer.suggested = suggested(answer)
        return Judgement(list(self.answers.values()), working, how, self.notes)


def verdict_of(answer: Answer) -> BoundVerdict:
    """The first of its ends' verdicts in the table's order of precedence."""
    words = {answer.floor.verdict, answer.ceiling.verdict}
    return next(row.verdict for row in BOUND_TABLE if row.verdict in words)


def suggested(answer: Answer) -> str:
    """The specifier that admits exactly the releases shown to work at both ends."""
    floor, ceiling = answer.floor, answer.ceiling
    lower = floor.works if floor.verdict is BoundVerdict.FLOOR_TOO_LOW else None
    upper: tuple[str, Version] | None = None
    if ceiling.verdict is BoundVerdict.CEILING_MISSING and ceiling.fails is not None:
        upper = ("<", ceiling.fails)
    elif ceiling.verdict is BoundVerdict.CEILING_TOO_TIGHT and ceiling.works is not None:
        upper = ("<", ceiling.fails) if ceiling.fails is not None else ("<=", ceiling.works)
    return suggest(answer.dependency.specifier, lower=lower, upper=upper)


def _shown_by(end: End, result: SearchResult) -> None:
    end.show(*(step.observation for step in result.steps))


def _said(result: SearchResult, candidate: Version) -> ProbeOutcome | None:
    """What the search's test of ``candidate`` said (None: not tested)."""
    return next((s.observation.outcome for s in result.steps if s.candidate == candidate), None)


def _best(result: SearchResult, outcome: ProbeOutcome, pick) -> Version | None:
    found = [s.candidate for s in result.steps if s.observation.outcome is outcome]
    return pick(found) if found else None


def _text(versions: Mapping[str, Version]) -> str:
    return ", ".join(f"{n}=={v}" for n, v in sorted(versions.items()))
