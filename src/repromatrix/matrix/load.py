"""load_matrix: matrix.yaml read and checked, step by step, into a Matrix.

The steps: the file to plain data (read.py), its secrets remembered for redaction,
the document checked (model.py through validation.py), each tier's levels read
(levels.py) and expanded into Combinations (tiers.py), ids unique across tiers, and
every ``cases:`` selection found in the cases folder (case_ids.py).

Every mistake becomes one UserError line naming the file, the key path and the
value; nothing here prints a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from repromatrix import redact
from repromatrix.errors import UserError, key_path
from repromatrix.matrix.atlas import read_atlas
from repromatrix.matrix.case_ids import CaseIndex
from repromatrix.matrix.defaults import DEFAULT_PACKAGES
from repromatrix.matrix.levels import read_level, tier_level
from repromatrix.matrix.model import TIER_PATTERN, Combination, Document, Matrix, TierSettings
from repromatrix.matrix.read import check_structure, read_text, yaml_data
from repromatrix.matrix.tiers import defaults_combination, expand_tier
from repromatrix.matrix.validation import validate
from repromatrix.names import canonicalize_name


def load_matrix(path: str | Path, *, cases: Path | None = None) -> Matrix:
    """Read and validate a matrix file. ``cases`` is the cases folder that the
    ``cases:`` selections must exist in (default: ``cases/`` beside the file, when
    there is one)."""
    path = Path(path)
    name = path.name
    data = yaml_data(read_text(path), name)
    check_structure(data, name)
    _remember_secrets(data)
    matrix = parse_matrix(data, path)
    cases_root = cases if cases is not None else path.parent / "cases"
    if cases_root.is_dir():
        _check_case_files(data, name, cases_root)
    return matrix


def _remember_secrets(data: Any) -> None:
    """The values of secret-named variables under any ``env:`` and the credentials
    in any URL of the file are masked in everything written or printed from now on,
    error messages about this very file included (redact.py)."""
    stack = [data]
    texts: list[str] = []
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            env = value.get("env")
            if isinstance(env, dict):
                # a number too: an error message would quote it
                scalars = (str, int, float)
                redact.remember({str(k): str(v) for k, v in env.items() if isinstance(v, scalars)})
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and "@" in value:
            texts.append(value)
    redact.remember(texts=texts)


def _check_case_files(data: dict[str, Any], name: str, cases_root: Path) -> None:
    """Every ``cases:`` selection names a case that exists (a typo would otherwise
    surface only as a failing case inside each cell): its file, its test function and
    its parameter id, as far as case_ids can read them without running anything.
    ``data`` has passed parse_matrix: every ``cases`` value is a list of text."""
    index = CaseIndex(cases_root)
    places: list[tuple[tuple[str | int, ...], Any]] = [(("defaults",), data.get("defaults"))]
    places.append((("atlas",), data.get("atlas")))
    places += [(("tier_defaults", t), v) for t, v in (data.get("tier_defaults") or {}).items()]
    for tier, entries in data["tiers"].items():
        places += [(("tiers", tier, i), entry) for i, entry in enumerate(entries)]
    for where, block in places:
        if not isinstance(block, Mapping):
            continue
        for i, selection in enumerate(block.get("cases") or ()):
            target = str(selection).split("::", 1)[0]
            found = cases_root / target
            if found.exists() and not found.resolve().is_relative_to(cases_root.resolve()):
                raise UserError(
                    f"{name}: {key_path((*where, 'cases', i))}: {selection!r}: "
                    f"outside {cases_root.name}/ (a link out of it)"
                )
            problem = index.problem(str(selection))
            if problem:
                where_text = key_path((*where, "cases", i))
                raise UserError(f"{name}: {where_text}: {selection!r}: {problem}")


def parse_matrix(data: Any, path: Path) -> Matrix:
    """Plain data (as read.py gives it) -> a Matrix; ``path`` names it in errors.
    Also how cell.py reads back a combination sent as JSON: the same checks."""
    name = path.name
    if not isinstance(data, dict):
        raise UserError(f"{name}: the top level must be a mapping with a 'tiers' key")
    doc = validate(Document, data, name, ())
    packages = _packages(doc.packages, name)
    inherited, for_every_tier = tier_level(doc.defaults, ("defaults",), name)
    defaults = read_level(inherited, ("defaults",), name, packages)
    for tier in doc.tier_defaults:
        if tier not in doc.tiers:
            raise UserError(f"{name}: tier_defaults.{tier}: unknown tier (not under 'tiers')")
    if not doc.tiers:
        raise UserError(f"{name}: tiers: no tiers declared")

    tiers: dict[str, tuple[Combination, ...]] = {}
    tier_settings: dict[str, TierSettings] = {}
    seen_ids: dict[str, str] = {}
    for tier, entries in doc.tiers.items():
        where = ("tiers", tier)
        if not TIER_PATTERN.match(tier):
            raise UserError(
                f"{name}: {key_path(where)}: {tier!r} is not a tier name "
                "(letters, digits, '.', '_', '-'; starting with a letter or digit)"
            )
        if not entries:
            raise UserError(f"{name}: {key_path(where)}: tier is empty")
        where_defaults = ("tier_defaults", tier)
        inherited, own = tier_level(doc.tier_defaults.get(tier, {}), where_defaults, name)
        tier_settings[tier] = TierSettings(**{**for_every_tier, **own})
        base = defaults.merged(read_level(inherited, where_defaults, name, packages))
        combos = expand_tier(tier, entries, base, name, packages)
        for combo, combo_path in combos:
            if combo.id in seen_ids:
                raise UserError(
                    f"{name}: {combo_path}.id: duplicate id {combo.id!r} "
                    f"(also at {seen_ids[combo.id]})"
                )
            seen_ids[combo.id] = combo_path
        # A folder pin ("." or "./pkgs/mylib") is relative to the matrix file.
        tiers[tier] = tuple(
            replace(c, pins=tuple(p.anchored(path.parent) for p in c.pins)) for c, _ in combos
        )
        for combo, (_, combo_path) in zip(tiers[tier], combos, strict=True):
            for pin in combo.pins:
                problem = pin.folder_problem()
                if problem is not None:
                    raise UserError(
                        f"{name}: {combo_path}.{pin.package}: {problem}, relative to {name}"
                    )
    atlas = None if doc.atlas is None else read_atlas(doc.atlas, name, packages)
    if atlas is not None:  # a held folder pin, like a tier's, is relative to the matrix file
        atlas = atlas.model_copy(
            update={"pins": tuple(p.anchored(path.parent) for p in atlas.pins)}
        )
        for pin in atlas.pins:
            if (problem := pin.folder_problem()) is not None:
                raise UserError(f"{name}: atlas.pins.{pin.package}: {problem}, relative to {name}")
    base = defaults_combination(defaults, packages)
    return Matrix(
        path=path,
        packages=packages,
        tiers=tiers,
        tier_settings=tier_settings,
        atlas=atlas,
        defaults=replace(base, pins=tuple(p.anchored(path.parent) for p in base.pins)),
    )


def _packages(declared: list[str] | None, name: str) -> tuple[str, ...]:
    if declared is None:
        return tuple(canonicalize_name(p) for p in DEFAULT_PACKAGES)
    out: list[str] = []
    for i, package in enumerate(declared):
        canonical = canonicalize_name(package)
        if not re.fullmatch(r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?", canonical):
            raise UserError(f"{name}: packages[{i}]: {package!r} is not a package name")
        if canonical in out:
            raise UserError(f"{name}: packages[{i}]: {package!r} is listed twice")
        out.append(canonical)
    if not out:
        raise UserError(f"{name}: packages: the list is empty")
    return tuple(out)
