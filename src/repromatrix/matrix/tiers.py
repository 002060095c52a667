"""A tier's entries -> Combinations: explicit entries as written, ``axes`` entries
as the product of their axes less their ``exclude`` rules, ids from the entry's id
template; each combination's settings the merge of every level above it.

Explicit combinations come first, then the generated ones, each in the order
written: that is matrix order.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from repromatrix.errors import UserError, key_path
from repromatrix.matrix.levels import Partial, read_level, read_pin
from repromatrix.matrix.model import (
    DEFAULT_CASE_TIMEOUT,
    DEFAULT_INSTALL_TIMEOUT,
    ID_PATTERN,
    RESERVED_IDS,
    Combination,
)
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.names import canonicalize_name

DEFAULTS = "defaults"  # the id and tier of the defaults level as a combination


def expand_tier(
    tier: str,
    entries: list[dict[str, Any]],
    base: Partial,
    name: str,
    packages: tuple[str, ...],
) -> list[tuple[Combination, str]]:
    """The tier's combinations, each with the key path of the entry it came from
    (for the duplicate-id error); an exclude rule that removes an explicit
    combination is an error, not a silent drop."""
    explicit: list[tuple[Combination, str]] = []
    generated: list[tuple[Combination, str]] = []
    excludes: list[tuple[dict[str, Pin], str]] = []
    for index, entry in enumerate(entries):
        where: tuple[str | int, ...] = ("tiers", tier, index)
        if "axes" in entry:
            combos, entry_excludes = _expand_axes(tier, entry, where, base, name, packages)
            generated.extend(combos)
            excludes.extend(entry_excludes)
        else:
            part = read_level(entry, where, name, packages, extra_keys=frozenset({"id"}))
            if "id" not in part.settings:
                raise UserError(
                    f"{name}: {key_path(where)}.id: an explicit combination needs an id"
                )
            combo = _combination(
                tier, part.settings["id"], base.merged(part), where, name, packages
            )
            explicit.append((combo, key_path(where)))
    for combo, combo_path in explicit:
        for exclude, exclude_path in excludes:
            if _matches(combo.pins, exclude):
                raise UserError(
                    f"{name}: {combo_path}: explicit combination {combo.id!r} "
                    f"is removed by {exclude_path}"
                )
    return explicit + generated


def _expand_axes(
    tier: str,
    entry: dict[str, Any],
    where: tuple[str | int, ...],
    base: Partial,
    name: str,
    packages: tuple[str, ...],
) -> tuple[list[tuple[Combination, str]], list[tuple[dict[str, Pin], str]]]:
    axes_raw = entry["axes"]
    if not isinstance(axes_raw, Mapping) or not axes_raw:
        raise UserError(
            f"{name}: {key_path((*where, 'axes'))}: must map packages to lists of specs"
        )
    axes: dict[str, list[Pin]] = {}
    for package, values in axes_raw.items():
        axis_where = (*where, "axes", package)
        if not isinstance(package, str) or canonicalize_name(package) not in packages:
            raise UserError(
                f"{name}: {key_path(axis_where)}: unknown package (not listed under 'packages')"
            )
        if not isinstance(values, list) or not values:
            raise UserError(f"{name}: {key_path(axis_where)}: must be a non-empty list of specs")
        axes[canonicalize_name(package)] = [
            read_pin(package, value, (*axis_where, i), name) for i, value in enumerate(values)
        ]

    exclude_raw = entry.get("exclude", [])
    if not isinstance(exclude_raw, list):
        raise UserError(f"{name}: {key_path((*where, 'exclude'))}: must be a list of mappings")
    excludes: list[tuple[dict[str, Pin], str]] = []
    for i, rule in enumerate(exclude_raw):
        rule_where = (*where, "exclude", i)
        if not isinstance(rule, Mapping) or not rule:
            raise UserError(f"{name}: {key_path(rule_where)}: must map axis packages to specs")
        parsed: dict[str, Pin] = {}
        for package, value in rule.items():
            if not isinstance(package, str) or canonicalize_name(package) not in axes:
                raise UserError(
                    f"{name}: {key_path((*rule_where, str(package)))}: not one of this entry's axes"
                )
            parsed[canonicalize_name(package)] = read_pin(
                package, value, (*rule_where, package), name
            )
        excludes.append((parsed, key_path(rule_where)))

    rest = {k: v for k, v in entry.items() if k not in ("axes", "exclude")}
    part = read_level(rest, where, name, packages, extra_keys=frozenset({"id"}))
    template = part.settings.get("id") or "-".join(f"{p}{{{p}}}" for p in axes)
    if not isinstance(template, str):
        raise UserError(f"{name}: {key_path((*where, 'id'))}: {template!r} is not an id template")
    try:
        parsed = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(template)]
    except ValueError as err:
        raise UserError(
            f"{name}: {key_path((*where, 'id'))}: {template!r} is not a valid id template ({err})"
        ) from None
    for field_name, spec, conversion in parsed:
        if field_name is None:
            continue
        if field_name == "" or spec or conversion:
            raise UserError(
                f"{name}: {key_path((*where, 'id'))}: {template!r} is not a valid id template "
                "(only {package} fields, without a format spec or conversion)"
            )
    fields = {f for f, _, _ in parsed if f}
    unknown = fields - set(axes)
    if unknown:
        raise UserError(
            f"{name}: {key_path((*where, 'id'))}: {template!r} names {sorted(unknown)[0]!r}, "
            "which is not one of this entry's axes"
        )
    if len(fields) < len(axes):
        raise UserError(
            f"{name}: {key_path((*where, 'id'))}: {template!r} must name every axis "
            f"({', '.join(axes)}) or ids would repeat"
        )

    for rule, rule_path in excludes:
        if not any(_matches(values, rule) for values in itertools.product(*axes.values())):
            raise UserError(
                f"{name}: {rule_path}: matches no combination of the axes "
                f"({', '.join(f'{p}: {pin}' for p, pin in rule.items())}; a typo?)"
            )
    combos: list[tuple[Combination, str]] = []
    for values in itertools.product(*axes.values()):
        chosen = dict(zip(axes, values, strict=False))
        if any(_matches(tuple(chosen.values()), rule) for rule, _ in excludes):
            continue
        combo_id = template.format(**{p: _id_part(pin) for p, pin in chosen.items()})
        merged = base.merged(part).merged(Partial({}, chosen))
        combo = _combination(tier, combo_id, merged, where, name, packages)
        combos.append((combo, key_path(where)))
    if not combos:
        raise UserError(f"{name}: {key_path(where)}: every combination of the axes is excluded")
    return combos, excludes


def _matches(pins: Iterable[Pin], rule: Mapping[str, Pin]) -> bool:
    by_name = {p.package: p for p in pins}
    return all(
        package in by_name
        and (by_name[package].kind, by_name[package].spec) == (pin.kind, pin.spec)
        for package, pin in rule.items()
    )


def _id_part(pin: Pin) -> str:
    text = str(pin)
    if pin.kind is PinKind.DIRECT:
        text = text.rsplit("@", 1)[-1] if "@" in text else "direct"
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("_") or "x"


def _combination(
    tier: str,
    combo_id: Any,
    part: Partial,
    where: tuple[str | int, ...],
    name: str,
    packages: tuple[str, ...],
) -> Combination:
    if not isinstance(combo_id, str) or not ID_PATTERN.match(combo_id):
        raise UserError(
            f"{name}: {key_path((*where, 'id'))}: {combo_id!r} is not a valid id "
            "(letters, digits, '.', '_', '+', '-'; starting with a letter or digit)"
        )
    if combo_id in RESERVED_IDS:
        raise UserError(
            f"{name}: {key_path((*where, 'id'))}: {combo_id!r} is reserved for a nox session"
        )
    if not any(p.kind is not PinKind.ABSENT for p in part.pins.values()):
        raise UserError(f"{name}: {key_path(where)}: combination {combo_id!r} pins no package")
    as_of = part.settings.get("as_of")
    if as_of is not None and not as_of[:1].isdigit():
        pinned = part.pins.get(as_of)
        if pinned is None or pinned.kind is not PinKind.EXACT:
            raise UserError(
                f"{name}: {key_path((*where, 'as_of'))}: {as_of!r} needs an exact pin of "
                f"{as_of} in combination {combo_id!r} (its release date is the date used)"
            )
    return _made(tier, combo_id, part, packages)


def defaults_combination(part: Partial, packages: tuple[str, ...]) -> Combination:
    """The ``defaults:`` level alone, as a combination (id and tier ``defaults``):
    the cell a hunt's command line starts from when it names none
    (cell.CellSpec.from_command)."""
    return _made(DEFAULTS, DEFAULTS, part, packages)


def _made(tier: str, combo_id: str, part: Partial, packages: tuple[str, ...]) -> Combination:
    s = part.settings
    pins = tuple(sorted(part.pins.values(), key=lambda p: packages.index(p.package)))
    as_of = s.get("as_of")
    return Combination(
        id=combo_id,
        tier=tier,
        pins=pins,
        python=s.get("python"),
        device=s.get("device") or "cpu",
        index_url=s.get("index_url"),
        extra_index_urls=tuple(s.get("extra_index_urls") or ()),
        find_links=tuple(s.get("find_links") or ()),
        package_indexes=tuple(sorted((s.get("package_indexes") or {}).items())),
        exclude_newer=s.get("exclude_newer"),
        overrides=tuple(s.get("overrides") or ()),
        env=tuple(sorted((s.get("env") or {}).items())),
        as_of=as_of,
        stack=packages if as_of is not None else (),
        tags=tuple(s.get("tags") or ()),
        cases=tuple(s.get("cases") or ()),
        case_timeout=s.get("case_timeout") or DEFAULT_CASE_TIMEOUT,
        install_timeout=s.get("install_timeout") or DEFAULT_INSTALL_TIMEOUT,
        runner=s.get("runner"),
    )
