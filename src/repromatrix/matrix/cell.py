"""A cell: what it is (``CellSpec``, the one road to an environment), and one
combination as JSON, both ways (the cell a nightly hunt rebuilds).

``CellSpec`` holds what makes a cell besides the harness's own settings: its pins,
Python, its own indexes, uv's overrides, its variables, time travel. It comes from a
Combination (``CellSpec.of``: the matrix run, a nightly hunt's ``--cell``) or from a
command line (``CellSpec.from_command``: ``--pin`` over ``--cell`` over the defaults);
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
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repromatrix.errors import UserError
from repromatrix.matrix.pins import Pin, PinKind
from repromatrix.redact import URL_CREDENTIALS, is_secret_name

if TYPE_CHECKING:  # the models (pydantic) load only where a combination is read
    from repromatrix.matrix.model import Combination

CELL_TIER = "cell"
# Pins a lock cannot carry (culprit's locks pin every other package exactly).
LOCKLESS = (PinKind.ABSENT, PinKind.SYSTEM, PinKind.DIRECT)


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

    @classmethod
    def of(cls, combo: Combination) -> CellSpec:
        """A combination's cell, as the matrix run builds it: the fields a CellSpec
        and a Combination share, by name."""
        return cls(**{f.name: getattr(combo, f.name) for f in fields(cls)})

    @classmethod
    def from_command(
        cls,
        pins: tuple[Pin, ...],
        *,
        cell: Combination | None = None,
        searched: str | None = None,
        held_only: bool = False,
        python: str | None = None,
    ) -> CellSpec:
        """A command's cell: its ``--pin`` over ``--cell``'s combination (its pins,
        Python, indexes, overrides and variables). ``searched``: the package the
        command varies (its pin in the combination gives way). ``held_only``: only
        the combination's pins a lock cannot carry (null, system, git), for culprit,
        whose locks pin every other package exactly. Time travel is the command's own
        (``with_time_travel``)."""
        if cell is None:
            return cls(pins=pins, python=python)
        given = {pin.package for pin in pins}
        under = tuple(
            pin
            for pin in cell.pins
            if pin.package not in given
            and pin.package != searched
            and (not held_only or pin.kind in LOCKLESS)
        )
        # The combination's indexes, overrides and variables; not its time travel.
        return replace(
            cls.of(cell),
            pins=(*under, *pins),
            python=python or cell.python,
            exclude_newer=None,
            as_of=None,
            stack=(),
        )

    def with_pins(self, *pins: Pin) -> CellSpec:
        """The cell with ``pins`` added after its own (a candidate's pin on top)."""
        return replace(self, pins=(*self.pins, *pins))

    def with_time_travel(self, as_of: str | None, stack: tuple[str, ...] = ()) -> CellSpec:
        return replace(self, as_of=as_of, stack=stack)


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
