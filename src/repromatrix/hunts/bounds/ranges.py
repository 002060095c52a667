"""A declared range against the releases an index lists (pure): which releases it
admits, which newer ones its upper bound shuts out, and the PEP 440 specifier that
admits exactly the releases shown to work at both ends (``suggest``).

Pre-releases and yanked releases are never candidates (PEP 440, PEP 592): a range
is judged by what an installer picks by default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.specifiers import Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

LOWER = (">=", ">")
UPPER = ("<", "<=")
BOTH = ("==", "~=", "===")  # an exact version, a compatible release, a wildcard


@dataclass(frozen=True)
class Dependency:
    """One direct dependency of the target, as declared, with the releases it admits.

    ``admitted``: the releases inside the range, oldest first; ``excluded``: the
    releases newer than the newest admitted one that the range shuts out (the cap's
    victims), oldest first; ``reason``: why it cannot be tested (no release inside
    its range, an unknown package), else ""."""

    name: str  # canonical (PEP 503)
    specifier: str  # as declared, normalised by packaging ("" for none)
    lines: tuple[str, ...] = ()  # its Requires-Dist lines, markers included
    admitted: tuple[Version, ...] = ()
    excluded: tuple[Version, ...] = ()
    extra: str | None = None  # the extra it belongs to (None: always installed)
    reason: str = ""

    @property
    def declared(self) -> str:
        return self.specifier or "(any)"

    def admits(self, version: Version) -> bool:
        return SpecifierSet(self.specifier).contains(version, prereleases=True)

    @property
    def has_ceiling(self) -> bool:
        return any(c.operator in (*UPPER, *BOTH) for c in SpecifierSet(self.specifier))


def split_releases(
    specifier: str, versions: Iterable[Version], yanked: Iterable[Version] = ()
) -> tuple[tuple[Version, ...], tuple[Version, ...]]:
    """(admitted, excluded above the newest admitted) of the final, unyanked
    ``versions`` under ``specifier``."""
    gone = set(yanked)
    final = sorted(v for v in versions if not v.is_prerelease and v not in gone)
    spec = SpecifierSet(specifier)
    admitted = tuple(v for v in final if spec.contains(v))
    if not admitted:
        return (), ()
    return admitted, tuple(v for v in final if v > admitted[-1])


def no_release_reason(name: str, specifier: str, versions: Iterable[Version]) -> str:
    """Why a range admits nothing: what it asks and what there is."""
    listed = sorted(v for v in versions if not v.is_prerelease)
    if not listed:
        return f"no final release of {name} is listed"
    return (
        f"no release of {name} satisfies {specifier} "
        f"({len(listed)} listed, {listed[0]} to {listed[-1]})"
    )


def suggest(
    specifier: str, *, lower: Version | None = None, upper: tuple[str, Version] | None = None
) -> str:
    """The declared ``specifier`` with its lower end raised to ``>=lower`` and/or its
    upper end replaced by ``upper`` (``("<", v)`` or ``("<=", v)``); the clauses of
    the end that stays are kept as written, ``!=`` clauses inside the new range too.

    >>> suggest(">=0.21.0", lower=Version("1.1.0"))
    '>=1.1.0'
    >>> suggest(">=4.0,<5", upper=("<=", Version("5.2.0")))
    '>=4.0,<=5.2.0'
    >>> suggest("~=1.2", upper=("<", Version("1.4")))
    '>=1.2,<1.4'
    """
    clauses = list(SpecifierSet(specifier))
    if lower is None and upper is None:
        return ordered(specifier)
    kept: list[str] = []
    for clause in clauses:
        if (
            clause.operator == "!="
            or (clause.operator in LOWER and lower is None)
            or (clause.operator in UPPER and upper is None)
        ):
            kept.append(str(clause))
        elif clause.operator in BOTH:
            low, high = _ends(clause)
            if lower is None and low:
                kept.append(low)
            if upper is None and high:
                kept.append(high)
    if lower is not None:
        kept.append(f">={lower}")
    if upper is not None:
        kept.append(f"{upper[0]}{upper[1]}")
    suggested = SpecifierSet(",".join(kept))
    # A `!=` outside the new range says nothing any more.
    inside = [c for c in suggested if c.operator != "!=" or _within(suggested, c)]
    return ",".join(str(c) for c in _sorted(inside))


def _ends(clause: Specifier) -> tuple[str, str]:
    """A two-ended clause as its lower and upper clauses: ``==1.2.3`` is ``>=1.2.3``
    and ``<=1.2.3``; ``~=1.2`` is ``>=1.2`` and ``<2``; ``==1.*`` is ``>=1`` and ``<2``."""
    version = clause.version
    if clause.operator == "~=":
        release = Version(version).release
        head = list(release[:-1])
        head[-1] += 1
        return f">={version}", f"<{'.'.join(map(str, head))}"
    if version.endswith(".*"):
        parts = [int(p) for p in version[:-2].split(".")]
        bumped = [*parts[:-1], parts[-1] + 1]
        return f">={'.'.join(map(str, parts))}", f"<{'.'.join(map(str, bumped))}"
    return f">={version}", f"<={version}"


def _within(spec: SpecifierSet, excluded: Specifier) -> bool:
    others = SpecifierSet(",".join(str(c) for c in spec if c is not excluded))
    return others.contains(Version(excluded.version), prereleases=True)


def ordered(specifier: str) -> str:
    """A specifier as people write it: lower ends first, then upper ends, then
    exclusions (packaging sorts them as text: ``<2.3,>=2.0``).

    >>> ordered("<2.3,>=2.0,!=2.1")
    '>=2.0,<2.3,!=2.1'
    """
    return ",".join(str(c) for c in _sorted(list(SpecifierSet(specifier))))


def _sorted(clauses: list[Specifier]) -> list[Specifier]:
    rank = {">=": 0, ">": 0, "==": 1, "~=": 1, "===": 1, "<": 2, "<=": 2, "!=": 3}

    def place(clause: Specifier) -> tuple[int, Version | str]:
        try:
            return rank.get(clause.operator, 4), Version(clause.version.rstrip(".*"))
        except InvalidVersion:
            return rank.get(clause.operator, 4), Version("0")

    return sorted(clauses, key=place)
