"""A cell: what it is (``CellSpec``, the one road to an environment), and one
combination as JSON, both ways (the cell a nightly hunt rebuilds).

``CellSpec`` holds what makes a cell besides the harness's own settings: its pins,
Python, its own indexes, uv's overrides, its variables, time travel. It comes from a
Combination (``CellSpec.of``: the matrix run, a nightly hunt's ``--cell``) or from a
command line (``CellSpec.from_command``: ``--pin`` over ``--cell``, or over
matrix.yaml's ``defaults:``);
environment.EnvRequest.for_cell turns it into what the store builds.

The nightly runs a combination from matrix.yaml; when it regresses, triage hands a
bisect or a culprit hunt to another workflow. That hunt must build the cell the
nightly built, not a look-alike: the packages the combination keeps out (``null``:
the seed stack's torchvision, xformers and torchao), its ``overrides``, its
``system`` pins, its index settings, device, ``env``. Losing any of them makes the
hunt test another stack (unsloth pulling a torchvision built for another torch:
"operator torchvision::nms does not exist" on both ends).

``cell_json`` writes a combination in matrix.yaml's own grammar (so a person can
read it, and paste it into a matrix), as one line of JSON fit for a workflow input;
``parse_cell`` reads it back through the matrix loader, so every mistake is the
loader's one line naming the key. Credentials never travel: URLs lose their
userinfo (the runner supplies its own through uv's configuration, as the nightly's
did) and variables named like secrets are left out, named in ``dropped``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repromatrix.errors import UserError
from repromatrix.matrix.pins import Pin, PinKind, pin_text
from repromatrix.redact import URL_CREDENTIALS, is_secret_name

if TYPE_CHECKING:  # the models (pydantic) load only where a combination is read
    from repromatrix.matrix.model import Combination

CELL_TIER = "cell"
# Pins a lock cannot carry (culprit's locks pin every other package exactly): a
# folder's own package included (a lock has its version, not its source).
LOCKLESS = (PinKind.ABSENT, PinKind.SYSTEM, PinKind.DIRECT, PinKind.PATH)


@dataclass(frozen=True)
class CellSpec:
    """What a cell is: its pins, the base interpreter, its own indexes (over the
    user's: IndexSettings.for_cell), uv's overrides, the variables its probe runs
    with, and time travel (a date or a pinned package, and the stack it moves).
    Every field but the harness's own settings is part of the environment's
    identity."""

    pins: tuple[Pin, ...] = ()
    python: str | None = None
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    package_indexes: tuple[tuple[str, str], ...] = ()  # (package, its own index URL)
    exclude_newer: str | None = None
    overrides: tuple[str, ...] = ()  # uv --override: replace what any package requires
    env: tuple[tuple[str, str], ...] = ()
    as_of: str | None = None  # environment/as_of.py; None: today's stack
    stack: tuple[str, ...] = ()  # what as_of moves beside the default stack

    # What came from matrix.yaml's defaults (from_command), said on a hunt's first
    # line: words about the cell, not part of it.
    taken: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, combo: Combination) -> CellSpec:
        """A combination's cell, as the matrix run builds it: the fields a CellSpec
        and a Combination share, by name."""
        return cls(**{f.name: getattr(combo, f.name) for f in fields(cls) if f.compare})

    @classmethod
    def from_command(
        cls,
        pins: tuple[Pin, ...],
        *,
        cell: Combination | None = None,
        defaults: Combination | None = None,
        searched: str | None = None,
        held_only: bool = False,
        python: str | None = None,
    ) -> CellSpec:
        """A command's cell: its ``--pin`` over ``--cell``'s combination, or else over
        ``defaults`` (matrix.yaml's ``defaults:`` level): its pins, Python, indexes,
        overrides and variables. ``searched``: the package the command varies (its
        pin there gives way). ``held_only``: only the pins a lock cannot carry (null,
        system, git, a folder), for culprit, whose locks pin every other package
        exactly. Time travel is the command's own (``with_time_travel``). What came
        from ``defaults`` is kept in ``taken``, for the hunt to say."""
        base = cell or defaults
        if base is None:
            return cls(pins=pins, python=python)
        given = {pin.package for pin in pins}
        under = tuple(
            pin
            for pin in base.pins
            if pin.package not in given
            and pin.package != searched
            and (not held_only or pin.kind in LOCKLESS)
        )
        # The base's indexes, overrides and variables; not its time travel.
        spec = replace(
            cls.of(base),
            pins=(*under, *pins),
            python=python or base.python,
            exclude_newer=None,
            as_of=None,
            stack=(),
        )
        if cell is None:
            spec = replace(spec, taken=_taken(spec, under, python))
        return spec

    def took(self) -> str:
        """What came from matrix.yaml's defaults, in words ("": nothing)."""
        if not self.taken:
            return ""
        return f"from matrix.yaml's defaults: {', '.join(self.taken)} (--pin overrides)"

    def with_pins(self, *pins: Pin) -> CellSpec:
        """The cell with ``pins`` added after its own (a candidate's pin on top)."""
        return replace(self, pins=(*self.pins, *pins))

    def with_time_travel(self, as_of: str | None, stack: tuple[str, ...] = ()) -> CellSpec:
        return replace(self, as_of=as_of, stack=stack)


def _taken(spec: CellSpec, under: tuple[Pin, ...], python: str | None) -> tuple[str, ...]:
    """The defaults a command's cell took, as words: each pin as --pin writes it, the
    Python, and whether indexes, overrides or variables came too."""
    words = [pin_text(pin) for pin in under]
    if spec.python and not python:
        words.append(f"Python {spec.python}")
    if spec.index_url or spec.extra_index_urls or spec.find_links:
        words.append("its indexes")
    if spec.overrides:
        words.append("its overrides")
    if spec.env:
        words.append("its env")
    return tuple(words)


def _no_credentials(url: str) -> str:
    return URL_CREDENTIALS.sub("://", url)


def cell_settings(combo: Combination) -> dict[str, Any]:
    """The combination as matrix.yaml would write it: ``{"id", "pins": {package:
    spec or None}, settings...}``, without credentials; ``dropped`` lists the
    variables of ``env`` left out as secrets."""
    pins: dict[str, str | None] = {}
    for pin in combo.pins:
        if pin.kind is PinKind.ABSENT:
            pins[pin.package] = None
        elif pin.kind is PinKind.DIRECT:
            pins[pin.package] = _no_credentials(pin.spec)
        elif pin.kind is PinKind.PATH:
            # parse_cell reads a folder from the working directory (a workflow's checkout)
            relative = os.path.relpath(pin.location)
            pins[pin.package] = relative if relative.startswith(".") else f"./{relative}"
        else:
            pins[pin.package] = pin.spec
    out: dict[str, Any] = {"id": combo.id, "pins": pins, "device": combo.device}
    if combo.python:
        out["python"] = combo.python
    if combo.index_url:
        out["index_url"] = _no_credentials(combo.index_url)
    for key in ("extra_index_urls", "find_links"):  # lists of URLs or folders
        if getattr(combo, key):
            out[key] = [_no_credentials(u) for u in getattr(combo, key)]
    if combo.package_indexes:
        out["package_indexes"] = {p: _no_credentials(u) for p, u in combo.package_indexes}
    if combo.exclude_newer:
        out["exclude_newer"] = combo.exclude_newer
    if combo.as_of:
        out["as_of"] = combo.as_of
        out["stack"] = list(combo.stack)  # the packages as_of dates (matrix's `packages:`)
    if combo.overrides:
        out["overrides"] = [_no_credentials(o) for o in combo.overrides]
    kept = {k: v for k, v in combo.env if not is_secret_name(k)}
    if kept:
        out["env"] = kept
    dropped = sorted(k for k, _ in combo.env if is_secret_name(k))
    if dropped:
        out["dropped"] = dropped
    return out


def cell_json(combo: Combination) -> str:
    return json.dumps(cell_settings(combo), separators=(",", ":"), sort_keys=True)


def parse_cell(text: str, source: str) -> Combination:
    """A combination from ``cell_json``'s text; ``source`` names where it came from in
    errors (``--cell``, a workflow input)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise UserError(f"{source}: not JSON ({err})") from None
    if not isinstance(data, dict):
        raise UserError(f"{source}: must be a JSON object (a combination), got {text[:60]!r}")
    pins = data.pop("pins", {})
    data.pop("dropped", None)  # informational: what cell_json left out
    stack = data.pop("stack", [])
    if not isinstance(stack, list) or not all(isinstance(p, str) for p in stack):
        raise UserError(f"{source}: stack: must be a list of package names")
    if not isinstance(pins, dict) or not all(isinstance(k, str) for k in pins):
        raise UserError(f"{source}: pins: must be an object of package: spec")
    if not isinstance(data.get("id", "cell"), str):
        raise UserError(f"{source}: id: {data['id']!r} is not text")
    from repromatrix.matrix.load import parse_matrix  # the loader (pydantic, YAML) only here

    entry = {"id": data.pop("id", "cell"), **data, **pins}
    packages = list(dict.fromkeys([*stack, *pins])) or ["torch"]
    document = {"schema": 1, "packages": packages, "tiers": {CELL_TIER: [entry]}}
    try:
        matrix = parse_matrix(document, Path(source))
    except UserError as err:
        # The loader names keys as in matrix.yaml (tiers.cell[0].overrides); here the
        # combination is the whole document.
        raise UserError(str(err).replace(f"tiers.{CELL_TIER}[0].", "")) from None
    [combo] = matrix.tier(CELL_TIER)
    return combo
