"""A set of the other dependencies that works, to judge each end beside (step 2 of
engine.py): the newest allowed set when it works. Else the first that works of the
all-floors set, the target's release-day set, the middle of every range, then one
dependency moved at a time; culprit's ddmin then names the newest releases that break
the set, a group at a time, and each is bisected to its newest working release
(``ceiling-missing``, with the first release that fails). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import Version

from repromatrix.hunts.bounds.cellset import Seen, Versions
from repromatrix.hunts.bounds.oracles import BAD, GOOD, Context, best, said_of, shown_by
from repromatrix.outcomes import BoundVerdict, Evidence
from repromatrix.search import ddmin as dd
from repromatrix.search.bisection import Find, search


class WorkingSet:
    def __init__(self, ctx: Context, references: Sequence[tuple[str, Versions]] = ()) -> None:
        self.ctx = ctx
        self.references = references

    def __call__(
        self, newest: dict[str, Version], said: Seen, floors: dict[str, Version] | None
    ) -> tuple[dict[str, Version] | None, str]:
        """(the working set, how it was found), or (None, the sets tried and what they
        said); ``said``: what the newest set did, ``floors``: the all-floors set."""
        if said.outcome is GOOD:
            return dict(newest), "the newest allowed set works"
        reference, how = self._reference(newest, floors, said)
        if reference is None:
            return None, how
        self.ctx.say(f"the newest allowed set fails ({said.detail}); a working set {how}")
        target = dict(newest)
        groups: list[tuple[str, ...]] = []
        for _ in self.ctx.testable:
            changes = [n for n in target if target[n] != reference[n]]
            if not changes:
                break
            found = dd.ddmin(changes, self.ctx.mix(reference, target), jobs=self.ctx.cells.jobs)
            if found.status is not dd.Status.FOUND:
                why = f"which newest releases break the set is unknown: {found.reason}"
                self.ctx.notes.append(why)
                return dict(reference), how + "; ddmin could not conclude"
            groups.append(found.minimal)
            target = {**target, **{m: reference[m] for m in found.minimal}}
            if self.ctx.cells(target, "newest set, culprits moved back").outcome is GOOD:
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
        middle = {d.name: d.admitted[(len(d.admitted) - 1) // 2] for d in self.ctx.testable}
        tried = [f"newest: {said.outcome.value} ({said.detail})"]
        named = [("all floors", floors), *self.references, ("middle", middle)]
        for label, versions in named:
            if versions is None:
                continue
            whole = {**newest, **{n: v for n, v in versions.items() if n in newest}}
            seen = self.ctx.cells(whole, f"reference set: {label}")
            if seen.outcome is GOOD:
                return whole, f"found from {label}"
            tried.append(f"{label}: {seen.outcome.value} ({seen.detail})")
        lowest = {d.name: d.admitted[0] for d in self.ctx.testable}
        base = {**lowest, **(floors or {})}
        moved = [({**base, n: newest[n]}, f"all floors, {n} newest") for n in newest]
        moved += [({**newest, n: lowest[n]}, f"newest, {n} at its floor") for n in newest]
        for start in range(0, len(moved), self.ctx.cells.jobs):
            chunk = moved[start : start + self.ctx.cells.jobs]
            for (versions, label), seen in zip(chunk, self.ctx.cells.batch(chunk), strict=True):
                if seen.outcome is GOOD:
                    return versions, f"found from {label}"
        tried.append("no single dependency moved to its floor or newest made one work")
        return None, "no set of the declared ranges was found to work: " + "; ".join(tried)

    def _ceiling_culprit(
        self, name: str, works: Version, beside: dict[str, Version], group: tuple[str, ...]
    ) -> Version:
        """A dependency whose newest release broke the set: bisected between the
        release that works beside ``beside`` and its newest; its newest working one."""
        dependency = self.ctx.answers[name].dependency
        end = self.ctx.answers[name].ceiling
        walk = [v for v in dependency.admitted if v >= works]
        end.tested = dependency.admitted[-1]
        if len(walk) < 2:
            return works
        result = search(walk, self.ctx.along(beside, name, f"ceiling of {name}"), Find.FIRST_BAD)
        shown_by(end, result)
        said = said_of(result, walk[-1])
        if said is GOOD:  # its newest works here: what broke the set was another's
            end.outcome, end.works = GOOD, walk[-1]
            self.ctx.notes.append(f"{name}'s newest works once {', '.join(group)} moved back")
            return walk[-1]
        if said is not BAD:
            end.verdict, end.outcome = BoundVerdict.UNTESTABLE, said
            end.reason = f"{end.tested} could not be tested beside the working set"
            return works
        end.verdict, end.outcome = BoundVerdict.CEILING_MISSING, BAD
        end.together = tuple(n for n in group if n != name)
        end.works = result.last if result.last is not None else best(result, GOOD, max)
        end.fails = result.first if result.first is not None else result.could_be_first[-1]
        end.untested = tuple(result.could_be_first[:-1])
        end.evidence = Evidence.TESTED
        end.reason = f"{end.tested} fails beside a working set; {end.works} works"
        return end.works or works
