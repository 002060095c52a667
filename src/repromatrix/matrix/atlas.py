"""matrix.yaml's ``atlas:`` block: which versions of which packages the compatibility
atlas covers, and how much a run may test (hunts/atlas/ reads it)::

    atlas:
      axes:
        transformers: ">=4.52,<5.3"
        peft: ">=0.15"
        trl: {versions: ">=0.19", optional: true}   # cells without trl too
      releases: latest-patch     # or all
      pins: {torch: "2.13.0"}    # held in every cell
      cases: [test_whisper_full_finetune.py]
      strength: 2                # every pair (3: every triple)
      budget: 300                # the most cells one run tests
      audit: 0.1                 # the share of the budget that re-tests inferred answers

It lives here, beside the matrix's other models, because loading matrix.yaml checks
it (a mistake is one line naming key and value, exit 2) and the matrix stage may not
import the hunts above it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repromatrix.errors import UserError, key_path
from repromatrix.matrix.pins import Pin, PinKind, number_hint, parse_pin
from repromatrix.matrix.validation import validate
from repromatrix.names import canonicalize_name

DEFAULT_BUDGET = 300
DEFAULT_AUDIT = 0.1


class _Block(BaseModel):
    """The block as written (pins and specifiers are read afterwards, each naming its key)."""

    model_config = ConfigDict(extra="forbid")

    axes: dict[str, Any]
    releases: Literal["latest-patch", "all"] = "latest-patch"
    pins: dict[str, Any] = {}
    cases: list[str] = []
    strength: Literal[2, 3] = 2
    budget: int = Field(default=DEFAULT_BUDGET, ge=1, le=100_000)
    audit: float = Field(default=DEFAULT_AUDIT, ge=0.0, le=0.5, allow_inf_nan=False)

    @field_validator("budget", "strength", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML's true would be read as 1
            raise ValueError(f"{value!r} is a boolean, not a number")
        return value


class AtlasSettings(BaseModel):
    """The checked block: canonical package names, specifiers as text, pins parsed."""

    model_config = ConfigDict(frozen=True)

    axes: dict[str, str]  # package -> PEP 440 specifier ("" for every release)
    optional: tuple[str, ...] = ()  # axes whose package may be absent from a cell
    releases: Literal["latest-patch", "all"] = "latest-patch"
    pins: tuple[Pin, ...] = ()
    cases: tuple[str, ...] = ()
    strength: Literal[2, 3] = 2
    budget: int = DEFAULT_BUDGET
    audit: float = DEFAULT_AUDIT

    def held(self) -> dict[str, str]:
        """The held pins as pin text per package (``torch: 2.13.0``, ``unsloth: null``)."""
        return {pin.package: str(pin) for pin in self.pins}


def read_atlas(data: Any, name: str, packages: tuple[str, ...]) -> AtlasSettings:
    """The ``atlas:`` block of file ``name`` checked; UserError naming key and value."""
    where: tuple[str | int, ...] = ("atlas",)
    if not isinstance(data, dict):
        raise UserError(f"{name}: atlas: must be a mapping with an 'axes' key (got {data!r})")
    block = validate(_Block, data, name, where)
    if len(block.axes) < 2:
        raise UserError(f"{name}: atlas.axes: {block.axes!r}: name at least two packages (a pair)")
    axes: dict[str, str] = {}
    optional: list[str] = []
    for package, spec in block.axes.items():
        at = key_path((*where, "axes", package))
        canonical = _listed(package, packages, f"{name}: {at}")
        if isinstance(spec, dict):
            spec, absent = _axis(spec, f"{name}: {at}")
            if absent:
                optional.append(canonical)
        axes[canonical] = _specifier(spec, f"{name}: {at}")
    pins: list[Pin] = []
    for package, raw in block.pins.items():
        at = key_path((*where, "pins", package))
        canonical = _listed(package, packages, f"{name}: {at}")
        if canonical in axes:
            raise UserError(f"{name}: {at}: {raw!r}: {package} is an axis; it cannot be held")
        try:
            pins.append(parse_pin(canonical, raw))
        except ValueError as err:
            raise UserError(f"{name}: {at}: {err}") from None
    for i, case in enumerate(block.cases):
        if not case.strip() or case.startswith(("/", "~")) or ".." in case.split("/"):
            at = key_path((*where, "cases", i))
            raise UserError(f"{name}: {at}: {case!r} is not a case in the cases folder")
    return AtlasSettings(
        axes=axes,
        optional=tuple(optional),
        releases=block.releases,
        pins=tuple(sorted(pins, key=lambda p: packages.index(p.package))),
        cases=tuple(block.cases),
        strength=block.strength,
        budget=block.budget,
        audit=block.audit,
    )


def _axis(spec: dict[str, Any], where: str) -> tuple[Any, bool]:
    """``{versions: ">=0.22", optional: true}``: the specifier, and whether cells
    without the package are part of the atlas."""
    unknown = sorted(set(spec) - {"versions", "optional"})
    if unknown:
        raise UserError(f"{where}.{unknown[0]}: unknown key (an axis takes versions, optional)")
    absent = spec.get("optional", False)
    if not isinstance(absent, bool):
        raise UserError(f"{where}.optional: {absent!r} is not true or false")
    return spec.get("versions", ""), absent


def _specifier(spec: Any, where: str) -> str:
    """An axis's range: a PEP 440 specifier (``">=4.52,<5.3"``), or ``all``."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        raise UserError(f"{where}: {number_hint(spec)}")
    if not isinstance(spec, str):
        raise UserError(f"{where}: {spec!r} is not a version specifier such as '>=4.50'")
    if spec.strip() in ("", "all", "*"):
        return ""
    try:
        pin = parse_pin("x", spec)
    except ValueError:
        pin = None
    if pin is None or pin.kind is not PinKind.RANGE:
        raise UserError(f"{where}: {spec!r} is not a version specifier such as '>=4.50'")
    return pin.spec


def _listed(package: str, packages: Collection[str], where: str) -> str:
    """The package's canonical name, which matrix.yaml's ``packages:`` must list."""
    canonical = canonicalize_name(package)
    if canonical not in packages:
        raise UserError(f"{where}: unknown package (not listed under 'packages')")
    return canonical
