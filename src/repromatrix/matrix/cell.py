"""One combination as JSON, both ways: the cell a culprit hunt rebuilds.

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
from pathlib import Path
from typing import Any

from repromatrix.errors import UserError
from repromatrix.matrix.load import parse_matrix
from repromatrix.matrix.model import Combination
from repromatrix.matrix.pins import PinKind
from repromatrix.redact import URL_CREDENTIALS, is_secret_name

CELL_TIER = "cell"


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
    if combo.extra_index_urls:
        out["extra_index_urls"] = [_no_credentials(u) for u in combo.extra_index_urls]
    if combo.find_links:
        out["find_links"] = [_no_credentials(u) for u in combo.find_links]
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
