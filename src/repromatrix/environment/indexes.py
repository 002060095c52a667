"""Where packages come from: the user's pip/uv index configuration, handed to uv.

uv does not read pip's configuration, so a machine that finds its CPU torch wheel
through PIP_FIND_LINKS (or a private mirror through PIP_INDEX_URL) would silently
resolve against PyPI instead, and torch==2.13.0 would become a CUDA download of
several GB. The user's PIP_* variables are therefore translated into uv flags,
unless the matching UV_* variable is set (uv reads those itself, and they win).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repromatrix.errors import UserError
from repromatrix.redact import redact_text

if TYPE_CHECKING:
    from repromatrix.matrix.cell import CellSpec

# pip variable -> the uv variables that, when set, already say the same thing.
_PIP_TO_UV = {
    "PIP_INDEX_URL": ("UV_INDEX_URL", "UV_DEFAULT_INDEX"),
    "PIP_EXTRA_INDEX_URL": ("UV_EXTRA_INDEX_URL", "UV_INDEX"),
    "PIP_FIND_LINKS": ("UV_FIND_LINKS",),
}
# uv variables that change what a resolution can see; part of an environment's identity.
UV_INDEX_VARIABLES = (
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_FIND_LINKS",
    "UV_INDEX_STRATEGY",
    "UV_NO_INDEX",
    "UV_PRERELEASE",
    "UV_EXCLUDE_NEWER",
)


@dataclass(frozen=True)
class IndexSettings:
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    # (package, index URL): an index that serves that package alone (project_input.py)
    package_indexes: tuple[tuple[str, str], ...] = ()
    # Passed through untouched (uv reads them from the environment); kept for identity.
    uv_variables: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> IndexSettings:
        environ = os.environ if environ is None else environ

        def pip_value(name: str) -> str:
            if any(environ.get(uv) for uv in _PIP_TO_UV[name]):
                return ""
            return environ.get(name, "")

        return cls(
            index_url=pip_value("PIP_INDEX_URL") or None,
            extra_index_urls=tuple(pip_value("PIP_EXTRA_INDEX_URL").split()),
            find_links=tuple(pip_value("PIP_FIND_LINKS").split()),
            no_index=environ.get("PIP_NO_INDEX", "").lower() in ("1", "true", "yes", "on"),
            uv_variables=tuple((k, environ[k]) for k in UV_INDEX_VARIABLES if environ.get(k)),
        )

    def overlaid(
        self,
        *,
        index_url: str | None = None,
        extra_index_urls: tuple[str, ...] = (),
        find_links: tuple[str, ...] = (),
        package_indexes: tuple[tuple[str, str], ...] = (),
    ) -> IndexSettings:
        """A combination's own indexes on top of the user's: its index_url replaces
        the default index, its extra indexes and find-links come first (uv prefers
        earlier ones), its package's own indexes replace those of the same package."""
        return IndexSettings(
            index_url=index_url or self.index_url,
            extra_index_urls=_unique(extra_index_urls + self.extra_index_urls),
            find_links=_unique(find_links + self.find_links),
            no_index=self.no_index,
            package_indexes=tuple(
                sorted({**dict(self.package_indexes), **dict(package_indexes)}.items())
            ),
            uv_variables=self.uv_variables,
        )

    def for_cell(self, cell: CellSpec) -> IndexSettings:
        """A cell's own indexes (matrix.cell.CellSpec) over these."""
        return self.overlaid(
            index_url=cell.index_url,
            extra_index_urls=cell.extra_index_urls,
            find_links=cell.find_links,
            package_indexes=cell.package_indexes,
        )

    @classmethod
    def offline(cls, wheelhouse: str) -> IndexSettings:
        """Only a folder of wheels: for air-gapped runners."""
        return cls(find_links=(wheelhouse,), no_index=True)

    @classmethod
    def wheelhouse(cls, folder: Path) -> IndexSettings:
        """``--wheelhouse FOLDER`` (bisect, check, sweep, culprit): only that folder's
        wheels; UserError when it is not a folder."""
        if not folder.is_dir():
            raise UserError(f"--wheelhouse {folder}: no such folder")
        return cls.offline(str(folder.resolve()))

    def uv_args(self) -> list[str]:
        args: list[str] = []
        if self.no_index:
            args.append("--no-index")
        elif self.index_url:
            args += ["--index-url", self.index_url]
        if not self.no_index:
            for url in self.extra_index_urls:
                args += ["--extra-index-url", url]
        for link in self.find_links:
            args += ["--find-links", link]
        return args

    def identity(self) -> dict[str, object]:
        return {
            "index_url": self.index_url,
            "extra_index_urls": list(self.extra_index_urls),
            "find_links": list(self.find_links),
            "no_index": self.no_index,
            "uv": dict(self.uv_variables),
            # Only when set, so that the identity of every other environment stays.
            **({"package_indexes": dict(self.package_indexes)} if self.package_indexes else {}),
        }

    def describe(self) -> dict[str, object]:
        """For logs and reports: credentials masked, local paths reduced to their
        last component (a path of one machine means nothing on another)."""

        def show(location: str) -> str:
            location = redact_text(location)
            if "://" in location and not location.startswith("file://"):
                return location
            return "<local>/" + location.rstrip("/").rsplit("/", 1)[-1]

        out: dict[str, object] = {}
        if self.no_index:
            out["no_index"] = True
        if self.index_url:
            out["index_url"] = show(self.index_url)
        if self.extra_index_urls:
            out["extra_index_urls"] = [show(u) for u in self.extra_index_urls]
        if self.find_links:
            out["find_links"] = [show(u) for u in self.find_links]
        if self.package_indexes:
            out["package_indexes"] = {p: show(u) for p, u in self.package_indexes}
        return out

    def index_of(self, package: str) -> str | None:
        """The index that alone serves ``package`` (package_indexes), if one does."""
        return dict(self.package_indexes).get(package)


def _unique(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
