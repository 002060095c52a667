"""One level of a matrix read: ``defaults``, a tier's ``tier_defaults`` or one tier
entry, as the settings and pins it gives (a ``Partial``), checked key by key.

Levels stack: an entry's values override its tier's, which override the defaults
(``Partial.merged``); ``env`` merges variable by variable, ``package_indexes``
package by package. What a combination ends
up with is the merge of every level above it (tiers.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from repromatrix.errors import UserError, key_path
from repromatrix.matrix.model import SETTING_KEYS, TIER_KEYS, Settings, TierSettings
from repromatrix.matrix.pins import Pin, parse_pin
from repromatrix.matrix.validation import validate
from repromatrix.names import canonicalize_name


@dataclass(frozen=True)
class Partial:
    """Settings and pins as read from one level (defaults, tier defaults, entry)."""

    settings: dict[str, Any]
    pins: dict[str, Pin]

    def merged(self, over: Partial) -> Partial:
        settings = dict(self.settings)
        for key, value in over.settings.items():
            if key in ("env", "package_indexes") and key in settings:
                value = {**settings[key], **value}  # merges by variable, by package
            settings[key] = value
        return Partial(settings, {**self.pins, **over.pins})


def read_level(
    raw: Mapping[str, Any],
    where: tuple[str | int, ...],
    name: str,
    packages: tuple[str, ...],
    extra_keys: frozenset[str] = frozenset(),
) -> Partial:
    """``raw``'s keys sorted into settings (checked by the Settings model) and pins
    (each package's spec parsed); ``extra_keys`` pass unchecked, for the caller to
    check (an entry's ``id``)."""
    if not isinstance(raw, Mapping):
        raise UserError(f"{name}: {key_path(where)}: must be a mapping, got {raw!r}")
    settings: dict[str, Any] = {}
    pins: dict[str, Pin] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise UserError(f"{name}: {key_path(where)}: key {key!r} is not text")
        if key in SETTING_KEYS or key in extra_keys:
            settings[key] = value
        elif canonicalize_name(key) in packages:
            pins[canonicalize_name(key)] = read_pin(key, value, (*where, key), name)
        elif key in TIER_KEYS and where[:1] == ("tiers",):
            raise UserError(
                f"{name}: {key_path((*where, key))}: a tier setting (how the tier is cut into "
                f"CI jobs), not a combination's: set it under tier_defaults.{where[1]}"
            )
        else:
            raise UserError(
                f"{name}: {key_path((*where, key))}: unknown key "
                "(neither a setting nor a package listed under 'packages')"
            )
    checked = validate(
        Settings, {k: v for k, v in settings.items() if k in SETTING_KEYS}, name, where
    )
    kept = {k: getattr(checked, k) for k in checked.model_fields_set}
    kept.update({k: v for k, v in settings.items() if k in extra_keys})
    return Partial(kept, pins)


def tier_level(
    raw: Mapping[str, Any], where: tuple[str | int, ...], name: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``defaults`` or a tier's ``tier_defaults`` split into what its combinations
    inherit and the tier's own settings (TierSettings' keys: cells_per_job,
    max_parallel), the latter checked here."""
    if not isinstance(raw, Mapping):
        return dict(raw), {}  # read_level names the mistake
    inherited = {k: v for k, v in raw.items() if k not in TIER_KEYS}
    own = {k: v for k, v in raw.items() if k in TIER_KEYS}
    checked = validate(TierSettings, own, name, where)
    return inherited, {k: getattr(checked, k) for k in checked.model_fields_set}


def read_pin(package: str, raw: Any, where: tuple[str | int, ...], name: str) -> Pin:
    """parse_pin's ValueError as the one line naming where the spec is written."""
    try:
        return parse_pin(package, raw)
    except ValueError as err:
        raise UserError(f"{name}: {key_path(where)}: {err}") from None
