"""The search of a bounds hunt, pure: handed the dependencies (ranges.py) and the cells
(cellset.Cells over an oracle), it answers, for each dependency, whether the lowest
and the newest release its range admits work, and whether its upper bound shuts out
releases that work.

1. **Both ends of every range at once**: the newest allowed set, and the all-floors
   set (uv's ``--resolution lowest-direct``, resolved by the caller).
2. **A working set** of the others to judge each dependency beside (working.py): the
   newest set when it works. Else a set that works is found (the all-floors set, the
   target's release day, the middle of every range, one dependency moved) and
   culprit's ddmin (search/ddmin.py) finds which dependencies' newest releases break
   it, moved back one group at a time; each of those is then bisected
   (search/bisection.py) to its newest working release: ``ceiling-missing``, with
   the first release that fails.
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

from collections.abc import Callable, Sequence

from packaging.version import Version

from repromatrix.hunts.bounds.answers import Answer, Floors, Judgement, suggested, verdict_of
from repromatrix.hunts.bounds.cellset import Cells, Versions
from repromatrix.hunts.bounds.oracles import (
    BAD,
    GOOD,
    SKIP,
    SKIP_BUDGET,
    Context,
    best,
    said_of,
    shown_by,
    text,
)
from repromatrix.hunts.bounds.ranges import Dependency
from repromatrix.hunts.bounds.working import WorkingSet
from repromatrix.outcomes import BoundVerdict, Evidence
from repromatrix.search import ddmin as dd
from repromatrix.search.bisection import Find, search

# What callers take from here (run.py, the tests, the benchmark).
__all__ = ["Floors", "Judgement", "judge"]


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
    answers = {d.name: Answer(d) for d in dependencies}
    testable = [d for d in dependencies if d.admitted]
    ctx = Context(answers, testable, cells, skip_budget, say)
    return _Bounds(ctx, floors, WorkingSet(ctx, references)).judge()


class _Bounds:
    def __init__(self, ctx: Context, floors: Floors | None, working: WorkingSet) -> None:
        self.ctx = ctx
        self.answers, self.testable, self.cells = ctx.answers, ctx.testable, ctx.cells
        self.say, self.notes = ctx.say, ctx.notes
        self.floors = floors
        self.working_set = working

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
        working, how = self.working_set(newest, said[0], floors)
        if working is None:
            for answer in self.answers.values():
                for end in (answer.floor, answer.ceiling):
                    if end.verdict is BoundVerdict.OK:
                        end.verdict, end.reason = BoundVerdict.UNTESTABLE, how
            return self._judged(None, how)
        self.say(f"working set ({how}): {text(working)}")
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
            end.works, end.evidence = lowest, Evidence.TESTED
            return
        if seen.outcome is SKIP:
            end.verdict, end.evidence = BoundVerdict.UNTESTABLE, "could not be tested"
            end.reason = f"{lowest} could not be tested beside the working set: {seen.detail}"
            return
        walk = [v for v in d.admitted if v <= working[d.name]]
        along = self.ctx.along(working, d.name, f"floor of {d.name}")
        result = search(walk, along, Find.FIRST_GOOD)
        shown_by(end, result)
        end.verdict, end.evidence = BoundVerdict.FLOOR_TOO_LOW, Evidence.TESTED
        end.works = result.first if result.first is not None else result.could_be_first[-1]
        end.fails = result.last if result.last is not None else best(result, BAD, max)
        end.untested = tuple(result.could_be_first[:-1])
        end.reason = f"{lowest} fails ({seen.detail}); {end.works} is the lowest that works"

    def _ceiling(self, d: Dependency, working: dict[str, Version]) -> None:
        end = self.answers[d.name].ceiling
        if end.verdict is not BoundVerdict.OK:
            return  # a culprit of the newest set: judged in _ceiling_culprit
        newest = d.admitted[-1]
        end.tested, end.outcome, end.works, end.evidence = newest, GOOD, newest, Evidence.TESTED
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
        along = self.ctx.along(working, d.name, f"shut out: {d.name}")
        result = search(walk, along, Find.FIRST_BAD)
        shown_by(end, result)
        first = result.first if result.first is not None else result.could_be_first[0]
        works = result.last if result.last is not None else best(result, GOOD, max)
        end.fails, end.untested = first, tuple(result.could_be_first[:-1])
        if works is not None and works > newest:
            end.verdict, end.works = BoundVerdict.CEILING_TOO_TIGHT, works
            end.reason = f"the cap shuts out {d.excluded[0]} to {works}, which work; {first} fails"
        elif said_of(result, d.excluded[0]) is BAD:
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
        found = dd.ddmin(changes, self.ctx.mix(working, working_floors), jobs=self.cells.jobs)
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
                end.verdict, end.evidence = BoundVerdict.FLOORS_CONFLICT, Evidence.TESTED
                end.together = tuple(n for n in found.minimal if n != name)
                end.reason = f"works alone, fails with the floors of {', '.join(end.together)}"
                end.show(together)

    # ------------------------------------------------------------------ helpers

    def _judged(self, working: dict[str, Version] | None, how: str) -> Judgement:
        for answer in self.answers.values():
            answer.verdict = verdict_of(answer)
            answer.suggested = suggested(answer)
        return Judgement(list(self.answers.values()), working, how, self.notes)
