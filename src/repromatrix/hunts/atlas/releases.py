"""Each axis's releases, as the user's indexes (or only ``--wheelhouse``) list them:
probe's candidates.py reads the indexes, search.ranges's ``latest-patch`` / ``all``
selection picks among them; an optional axis gets ``ABSENT`` first."""

from __future__ import annotations

from collections.abc import Callable

from packaging.specifiers import SpecifierSet

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.hunts.atlas.universe import ABSENT, Universe
from repromatrix.matrix.atlas import AtlasSettings
from repromatrix.probe.candidates import Listing, list_releases
from repromatrix.search.ranges import Releases, select

Lister = Callable[[str, IndexSettings], Listing]


def list_universe(
    settings: AtlasSettings, index: IndexSettings, *, lister: Lister = list_releases
) -> Universe:
    """Each axis's releases inside its specifier (no yanked release, no pre-release),
    then ``latest-patch`` or ``all``; UserError for an axis left empty."""
    axes: dict[str, tuple[str, ...]] = {}
    for package, spec in settings.axes.items():
        listing = lister(package, index)
        wanted = SpecifierSet(spec)
        versions = [
            v
            for v in listing.versions()
            if not listing.releases[v].yanked and not v.is_prerelease and v in wanted
        ]
        chosen = select(versions, Releases(settings.releases))
        if not chosen:
            shown = spec or "any version"
            raise UserError(f"atlas.axes.{package}: {shown!r}: no release of {package} matches")
        found = tuple(str(v) for v in chosen)
        axes[package] = (ABSENT, *found) if package in settings.optional else found
    return Universe(axes=axes, held=settings.held())
