"""matrix.yaml -> combinations.

The file declares tiers of version combinations::

    schema: 1
    packages: [torch, transformers, peft]        # the columns, in report order
    defaults: {python: "3.11", torch: "2.13.0"}  # every combination starts here
    tier_defaults:
      nightly: {device: cuda, torch: system}     # then its tier's defaults
    tiers:
      smoke:
        - id: tf4.52                             # an explicit combination
          transformers: "4.52.4"
          peft: "0.15.2"
        - axes:                                  # a product of axes
            transformers: ["4.56.2", "5.23.0"]
            peft: ["0.17.1", "0.21.2"]
          exclude: [{transformers: "5.23.0", peft: "0.17.1"}]
          id: "tf{transformers}-peft{peft}"

Every mistake becomes one UserError line naming the file, the key path and the
value (``matrix.yaml: tiers.smoke[2].transformers: '4.5x' is not a version or
specifier``); nothing here prints a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, ConfigDict, Field, field_validator

from repromatrix.errors import UserError
from repromatrix.hunt_table import HUNT_NAMES
from repromatrix.matrix.pins import Pin, number_hint
from repromatrix.names import canonicalize_name

if TYPE_CHECKING:
    from repromatrix.matrix.atlas import AtlasSettings

SCHEMA_VERSION = 1


# Session names the noxfile defines itself; a combination may not shadow them.
RESERVED_IDS = frozenset(
    {
        "matrix",
        "tests",
        "tests-fast",
        "tests-unit",
        "lint",
        "report",
        "clean",
        *HUNT_NAMES,  # bisect, sweep, check, culprit, atlas: one session per hunt
        "nightly-dry-run",
        "lock",
    }
)
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
TIER_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

DEFAULT_CASE_TIMEOUT = 300.0
DEFAULT_INSTALL_TIMEOUT = 1800.0


def _label(text: Any, what: str) -> str:
    if not isinstance(text, str) or not text.strip() or text != text.strip():
        raise ValueError(f"{text!r} is not a runner {what} (non-empty text, no spaces around)")
    return text


def runs_on(value: Any) -> str | list[str] | dict[str, Any]:
    """A ``runner:`` setting checked, in the shape GitHub's ``runs-on`` takes and as it
    was written: one name (an ARC scale set takes exactly one, no extra labels), a list
    of labels, or ``{group: NAME, labels: [...]}``."""
    if isinstance(value, str):
        return _label(value, "name")
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError("an empty list of runner labels")
        return [_label(v, "label") for v in value]
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in ("group", "labels")]
        if unknown:
            raise ValueError(f"{unknown[0]!r}: a runner group has only 'group' and 'labels'")
        if not value:
            raise ValueError("a runner group needs 'group', 'labels' or both")
        shape: dict[str, Any] = {}
        if "group" in value:
            shape["group"] = _label(value["group"], "group name")
        if "labels" in value:
            labels = value["labels"]
            shape["labels"] = (
                runs_on(labels) if isinstance(labels, (list, tuple)) else _label(labels, "label")
            )
        return shape
    raise ValueError(
        f"{value!r} is not a runner: a name (an ARC scale set), a list of labels, "
        "or {group: NAME, labels: [...]}"
    )


class Settings(BaseModel):
    """The keys a combination, the defaults and a tier's defaults share
    (package pins aside: those are every other key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    python: str | None = None
    device: Literal["cpu", "cuda"] | None = None
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] | None = None
    find_links: tuple[str, ...] | None = None
    # An index for some packages alone (uv's explicit index, the package's source):
    # {torch: "https://download.pytorch.org/whl/cpu"} takes torch from PyTorch's CPU
    # index and nothing else; every other package from the indexes above.
    package_indexes: dict[str, str] | None = None
    exclude_newer: str | None = None
    # Time travel: the stack's other packages as of this date, or as of the upload
    # of this package's pinned release (environment/as_of.py).
    as_of: str | None = None
    # Requirements that replace what any package asks for (uv's --override), for a
    # release whose metadata cannot be met as published (unsloth 2026.10.9 requires a
    # certifi that no index has).
    overrides: tuple[str, ...] | None = None
    env: dict[str, str] | None = None
    tags: tuple[str, ...] | None = None
    cases: tuple[str, ...] | None = None
    case_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    install_timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # Where its CI job runs (nightly.yml's runs-on), as JSON text: see runs_on.
    runner: str | None = None

    @field_validator("runner", mode="before")
    @classmethod
    def _runner_shape(cls, value: Any) -> Any:
        if value is None:
            return None
        return json.dumps(runs_on(value), separators=(",", ":"))

    @field_validator("case_timeout", "install_timeout", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        # YAML's true would be read as 1 second.
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is a boolean, not a number of seconds")
        return value

    @field_validator("env")
    @classmethod
    def _environment_variables(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for name, text in (value or {}).items():
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"{name!r} is not an environment variable name")
            if "\0" in text:
                # the value is not shown: it may be a secret
                raise ValueError(f"the value of {name} holds a NUL character")
        return value

    @field_validator("package_indexes")
    @classmethod
    def _index_per_package(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        checked = {}
        for package, url in value.items():
            if not re.match(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$", package):
                raise ValueError(f"{package!r} is not a package name")
            if not url.strip() or any(c.isspace() for c in url.strip()):
                raise ValueError(f"{package}: {url!r} is not an index URL")
            checked[canonicalize_name(package)] = url.strip()
        return checked

    @field_validator("cases")
    @classmethod
    def _inside_cases(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for text in value or ():
            target = text.split("::", 1)[0]
            if not target.strip():
                raise ValueError(f"{text!r} is not a case selection (empty)")
            if target.startswith(("/", "\\", "~")) or ".." in re.split(r"[/\\]", target):
                raise ValueError(f"{text!r} is outside the cases folder")
        return value

    @field_validator("exclude_newer")
    @classmethod
    def _is_date(cls, value: str | None) -> str | None:
        return _checked_date(value)

    @field_validator("as_of", mode="before")
    @classmethod
    def _yaml_date_is_text(cls, value: Any) -> Any:
        # An unquoted 2024-11-22 reaches here as a date.
        return value.isoformat() if isinstance(value, date) else value

    @field_validator("as_of")
    @classmethod
    def _is_date_or_package(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() == "none":
            return None
        if value[:1].isdigit():
            return _checked_date(value)
        if not re.match(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$", value):
            raise ValueError(f"{value!r} is neither a date (2024-11-22) nor a package name")
        return canonicalize_name(value)

    @field_validator("overrides")
    @classmethod
    def _are_requirements(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for text in value or ():
            try:
                Requirement(text)
            except InvalidRequirement:
                raise ValueError(f"{text!r} is not a requirement, e.g. 'certifi>=2026.1'") from None
        return value

    @field_validator("python", mode="before")
    @classmethod
    def _python_is_text(cls, value: Any) -> Any:
        if isinstance(value, float):
            raise ValueError(number_hint(value))
        return value


def _checked_date(value: str | None) -> str | None:
    if value is None:
        return value
    try:
        (datetime if "T" in value else date).fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO date (2025-11-15) or datetime") from None
    return value


SETTING_KEYS = frozenset(Settings.model_fields)


class TierSettings(BaseModel):
    """How a tier is cut into CI jobs (``ci-matrix``): settings of a tier, not of a
    combination, so they sit in ``tier_defaults.<tier>`` (or ``defaults``, for every
    tier)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Combinations one job runs at most (absent: as many as the workflow's slices need).
    cells_per_job: int | None = Field(default=None, gt=0)
    # Jobs of the tier that run at once (strategy.max-parallel of each slice's matrix).
    max_parallel: int | None = Field(default=None, gt=0)

    @field_validator("cells_per_job", "max_parallel", mode="before")
    @classmethod
    def _a_count(cls, value: Any) -> Any:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"{value!r} is not a whole number")
        return value


TIER_KEYS = frozenset(TierSettings.model_fields)


# How the issue bot runs a repro: confined (refused where it cannot be), or unconfined
# where the machine cannot confine it. One spelling for matrix.yaml, the bot's settings
# and its plan.
Confinement = Literal["required", "optional"]


class IssueBlock(BaseModel):
    """matrix.yaml's ``issue:`` block: what the maintainer says of the issue bot's repro
    runs in the project's own file (the rest of the bot's settings sit in
    .github/repromatrix.yml: issue/config.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # required: the run job refuses where it cannot confine the repro (bubblewrap);
    # optional: it runs the repro unconfined there, and says so.
    confinement: Confinement = "required"


class Document(BaseModel):
    """The top level of matrix.yaml; entries are validated one by one later so
    that each error can name its own path."""

    model_config = ConfigDict(extra="forbid")

    schema_: Literal[1] = Field(default=SCHEMA_VERSION, alias="schema")
    packages: list[str] | None = None
    defaults: dict[str, Any] = {}
    tier_defaults: dict[str, dict[str, Any]] = {}
    tiers: dict[str, list[dict[str, Any]]]
    atlas: Any = None  # the compatibility atlas's block, checked by atlas.read_atlas
    issue: IssueBlock | None = None  # the issue bot's opt-outs (issue/config.py reads it)


@dataclass(frozen=True)
class Combination:
    """One cell of the matrix: everything needed to build and run it."""

    id: str
    tier: str
    pins: tuple[Pin, ...]
    python: str | None = None
    device: str = "cpu"
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    package_indexes: tuple[tuple[str, str], ...] = ()  # (package, index URL), sorted
    exclude_newer: str | None = None
    overrides: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    as_of: str | None = None
    stack: tuple[str, ...] = ()  # the matrix's packages: as_of moves them, and the default stack
    tags: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    install_timeout: float = DEFAULT_INSTALL_TIMEOUT
    runner: str | None = None  # runs-on as JSON text (Settings.runner); None: the default

    def requested(self) -> dict[str, str]:
        """package -> spec as written; what reports show as the request."""
        return {pin.package: str(pin) for pin in self.pins}

    def pin(self, package: str) -> Pin | None:
        name = canonicalize_name(package)
        return next((p for p in self.pins if p.package == name), None)


@dataclass(frozen=True)
class Matrix:
    path: Path
    packages: tuple[str, ...]
    tiers: Mapping[str, tuple[Combination, ...]] = field(default_factory=dict)
    tier_settings: Mapping[str, TierSettings] = field(default_factory=dict)
    atlas: AtlasSettings | None = None  # matrix.yaml's `atlas:` block (atlas.py)
    # The `defaults:` level alone (id and tier "defaults"): a hunt's cell where its
    # command line names none (cell.CellSpec.from_command); None: a matrix made in code.
    defaults: Combination | None = None

    def settings_of(self, tier: str) -> TierSettings:
        return self.tier_settings.get(tier) or TierSettings()

    def tier(self, name: str) -> tuple[Combination, ...]:
        if name not in self.tiers:
            known = ", ".join(self.tiers) or "none"
            raise UserError(f"{self.path.name}: tiers.{name}: unknown tier (known: {known})")
        return self.tiers[name]

    def combinations(self) -> list[Combination]:
        return [c for combos in self.tiers.values() for c in combos]

    def find(self, combination_id: str) -> Combination:
        for combo in self.combinations():
            if combo.id == combination_id:
                return combo
        raise UserError(f"{self.path.name}: no combination with id {combination_id!r}")
