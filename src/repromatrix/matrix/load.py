"""matrix.yaml read and checked: YAML (safe, duplicate keys refused) -> the model
(model.py) -> tiers expanded into Combinations (axes, excludes, ids).

Every mistake becomes one UserError line naming the file, the key path and the
value; nothing here prints a traceback.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from repromatrix import redact
from repromatrix.errors import UserError, key_path
from repromatrix.matrix.case_ids import CaseIndex
from repromatrix.matrix.defaults import DEFAULT_PACKAGES
from repromatrix.matrix.model import (
    DEFAULT_CASE_TIMEOUT,
    DEFAULT_INSTALL_TIMEOUT,
    ID_PATTERN,
    RESERVED_IDS,
    SETTING_KEYS,
    TIER_PATTERN,
    Combination,
    Document,
    Matrix,
    Settings,
)
from repromatrix.matrix.pins import Pin, PinKind, parse_pin
from repromatrix.names import canonicalize_name

# --------------------------------------------------------------------------- loading


# A matrix of hundreds of combinations is a few thousand values, a few KB; these
# bounds are far above any real one and far below what hangs or floods a terminal.
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_VALUES = 100_000  # after YAML aliases are expanded
MAX_DEPTH = 32


class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load, except that a key given twice in one mapping is an error
    (YAML silently keeps the last one, which hides copy-paste mistakes). Merge keys
    (``<<: *base``) work as in safe_load: a key given beside them overrides theirs."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
            except TypeError:  # a list or a mapping as a key
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be text, not a list or mapping", key_node.start_mark
                ) from None
            if repeated:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class WrittenFloat(float):
    """A YAML float that keeps the text it was written as: ``4.50`` is the number 4.5,
    and the error asking to quote it must say '4.50' (pins.number_hint)."""

    written: str


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    value = WrittenFloat(loader.construct_yaml_float(node))
    value.written = str(node.value)
    return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def _construct_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """An unquoted date YAML reads as one (``as_of: 2024-13-01``): a calendar mistake
    is a syntax error at its line, not a ValueError from inside the YAML library."""
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError as err:
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r} is not a date ({err})", node.start_mark
        ) from None


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


def _read_matrix_text(path: Path) -> str:
    """The file's text; only a regular file of a sensible size (a FIFO would block
    the read forever)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such matrix file") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read matrix file ({err.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{path}: not a regular file (a folder, a pipe or a device)")
    if info.st_size > MAX_FILE_BYTES:
        raise UserError(
            f"{path}: {info.st_size} bytes; a matrix file is at most {MAX_FILE_BYTES} bytes"
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read matrix file ({err.strerror})") from None


def _check_structure(data: Any, name: str) -> None:
    """Every mapping key is text, nothing is nested deeper than MAX_DEPTH and there
    are at most MAX_VALUES values once aliases are expanded (a few lines of YAML
    aliases can stand for billions). Iterative: no RecursionError, and it stops at
    the first excess rather than walking all of it."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    count = 0
    while stack:
        value, where = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise UserError(
                f"{name}: more than {MAX_VALUES} values once YAML aliases are expanded "
                "(an alias bomb?)"
            )
        if len(where) > MAX_DEPTH:
            raise UserError(f"{name}: {key_path(where[:4])}...: nested more than {MAX_DEPTH} deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    shown = repr(key)[:40]
                    raise UserError(f"{name}: {key_path((*where, shown))}: key {shown} is not text")
                stack.append((item, (*where, key)))
        elif isinstance(value, list):
            stack.extend((item, (*where, i)) for i, item in enumerate(value))


def load_matrix(path: str | Path, *, cases: Path | None = None) -> Matrix:
    """Read and validate a matrix file. ``cases`` is the cases folder that the
    ``cases:`` selections must exist in (default: ``cases/`` beside the file, when
    there is one)."""
    path = Path(path)
    name = path.name
    text = _read_matrix_text(path)
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f":{mark.line + 1}" if mark else ""
        problem = err.problem or err.context or "invalid YAML"
        raise UserError(f"{name}{where}: YAML syntax error: {problem}") from None
    except yaml.YAMLError as err:
        raise UserError(f"{name}: YAML syntax error: {err}") from None
    except RecursionError:
        raise UserError(f"{name}: nested more than {MAX_DEPTH} deep") from None
    _check_structure(data, name)
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
    name = path.name
    if not isinstance(data, dict):
        raise UserError(f"{name}: the top level must be a mapping with a 'tiers' key")
    doc = _validate(Document, data, name, ())
    packages = _packages(doc.packages, name)
    defaults = _settings(doc.defaults, ("defaults",), name, packages)
    for tier in doc.tier_defaults:
        if tier not in doc.tiers:
            raise UserError(f"{name}: tier_defaults.{tier}: unknown tier (not under 'tiers')")
    if not doc.tiers:
        raise UserError(f"{name}: tiers: no tiers declared")

    tiers: dict[str, tuple[Combination, ...]] = {}
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
        base = defaults.merged(
            _settings(doc.tier_defaults.get(tier, {}), ("tier_defaults", tier), name, packages)
        )
        combos = _expand_tier(tier, entries, base, name, packages)
        for combo, combo_path in combos:
            if combo.id in seen_ids:
                raise UserError(
                    f"{name}: {combo_path}.id: duplicate id {combo.id!r} "
                    f"(also at {seen_ids[combo.id]})"
                )
            seen_ids[combo.id] = combo_path
        tiers[tier] = tuple(c for c, _ in combos)
    return Matrix(path=path, packages=packages, tiers=tiers)


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


@dataclass(frozen=True)
class _Partial:
    """Settings and pins as read from one level (defaults, tier defaults, entry)."""

    settings: dict[str, Any]
    pins: dict[str, Pin]

    def merged(self, over: _Partial) -> _Partial:
        settings = dict(self.settings)
        for key, value in over.settings.items():
            if key == "env" and "env" in settings:
                value = {**settings["env"], **value}  # env merges by variable
            settings[key] = value
        return _Partial(settings, {**self.pins, **over.pins})


def _settings(
    raw: Mapping[str, Any],
    where: tuple[str | int, ...],
    name: str,
    packages: tuple[str, ...],
    extra_keys: frozenset[str] = frozenset(),
) -> _Partial:
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
            pins[canonicalize_name(key)] = _pin(key, value, (*where, key), name)
        else:
            raise UserError(
                f"{name}: {key_path((*where, key))}: unknown key "
                "(neither a setting nor a package listed under 'packages')"
            )
    checked = _validate(
        Settings, {k: v for k, v in settings.items() if k in SETTING_KEYS}, name, where
    )
    kept = {k: getattr(checked, k) for k in checked.model_fields_set}
    kept.update({k: v for k, v in settings.items() if k in extra_keys})
    return _Partial(kept, pins)


def _pin(package: str, raw: Any, where: tuple[str | int, ...], name: str) -> Pin:
    try:
        return parse_pin(package, raw)
    except ValueError as err:
        raise UserError(f"{name}: {key_path(where)}: {err}") from None


def _expand_tier(
    tier: str,
    entries: list[dict[str, Any]],
    base: _Partial,
    name: str,
    packages: tuple[str, ...],
) -> list[tuple[Combination, str]]:
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
            part = _settings(entry, where, name, packages, extra_keys=frozenset({"id"}))
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
    base: _Partial,
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
            _pin(package, value, (*axis_where, i), name) for i, value in enumerate(values)
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
            parsed[canonicalize_name(package)] = _pin(package, value, (*rule_where, package), name)
        excludes.append((parsed, key_path(rule_where)))

    rest = {k: v for k, v in entry.items() if k not in ("axes", "exclude")}
    part = _settings(rest, where, name, packages, extra_keys=frozenset({"id"}))
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
        merged = base.merged(part).merged(_Partial({}, chosen))
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
    part: _Partial,
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
    s = part.settings
    pins = tuple(sorted(part.pins.values(), key=lambda p: packages.index(p.package)))
    if not any(p.kind is not PinKind.ABSENT for p in pins):
        raise UserError(f"{name}: {key_path(where)}: combination {combo_id!r} pins no package")
    as_of = s.get("as_of")
    if as_of is not None and not as_of[:1].isdigit():
        pinned = part.pins.get(as_of)
        if pinned is None or pinned.kind is not PinKind.EXACT:
            raise UserError(
                f"{name}: {key_path((*where, 'as_of'))}: {as_of!r} needs an exact pin of "
                f"{as_of} in combination {combo_id!r} (its release date is the date used)"
            )
    return Combination(
        id=combo_id,
        tier=tier,
        pins=pins,
        python=s.get("python"),
        device=s.get("device") or "cpu",
        index_url=s.get("index_url"),
        extra_index_urls=tuple(s.get("extra_index_urls") or ()),
        find_links=tuple(s.get("find_links") or ()),
        exclude_newer=s.get("exclude_newer"),
        overrides=tuple(s.get("overrides") or ()),
        env=tuple(sorted((s.get("env") or {}).items())),
        as_of=as_of,
        stack=packages if as_of is not None else (),
        tags=tuple(s.get("tags") or ()),
        cases=tuple(s.get("cases") or ()),
        case_timeout=s.get("case_timeout") or DEFAULT_CASE_TIMEOUT,
        install_timeout=s.get("install_timeout") or DEFAULT_INSTALL_TIMEOUT,
    )


def _validate(model: type[BaseModel], data: Any, name: str, where: tuple[str | int, ...]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        errors = err.errors()
        # A misspelt key also leaves the real one missing: name the misspelling.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = (*where, *first["loc"])
        raise UserError(f"{name}: {key_path(loc)}: {_describe(first)}") from None


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "value_error":
        return str(error["ctx"]["error"])
    return f"{error['msg'].rstrip('.')} (got {value!r})"
