"""Stage 1: matrix.yaml -> Combinations.

defaults.py what a command assumes when not told (file names, tier, the stack's packages)
pins.py    the grammar of one package's spec, both ways (parse_pin, pin_text)
model.py   what a matrix is: settings, Combination, Matrix
case_ids.py which case ids a cases folder holds, read statically (no cell)
locate.py  which matrix.yaml a command means (searched upward like .git)
sessions.py which nox sessions the noxfile beside it defines (read with ast): the
           command a report shows, ``nox -s NAME`` only where NAME exists
read.py    the file to plain data: safe YAML, duplicate keys refused, size and depth bounded
validation.py pydantic's errors as one line (file, key path, what is wrong)
levels.py  one level (defaults, tier_defaults, an entry) as settings and pins; levels merge
tiers.py   a tier's entries expanded into Combinations (axes, excludes, id templates)
load.py    load_matrix / parse_matrix: the steps in order, ids unique, cases: found
           (every mistake one line)

The names below are loaded when first used (PEP 562): a command that only parses a
pin does not pay for the models (pydantic) and the YAML reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repromatrix.lazy import lazy_names

if TYPE_CHECKING:
    from repromatrix.matrix.case_ids import CaseIndex
    from repromatrix.matrix.defaults import DEFAULT_PACKAGES
    from repromatrix.matrix.load import load_matrix, parse_matrix
    from repromatrix.matrix.locate import find_matrix
    from repromatrix.matrix.model import Combination, Matrix
    from repromatrix.matrix.pins import Pin, PinKind, parse_pin, pin_text

_WHERE = {
    "CaseIndex": "case_ids",
    "DEFAULT_PACKAGES": "defaults",
    "load_matrix": "load",
    "parse_matrix": "load",
    "find_matrix": "locate",
    "Combination": "model",
    "Matrix": "model",
    "Pin": "pins",
    "PinKind": "pins",
    "parse_pin": "pins",
    "pin_text": "pins",
}

__all__ = [
    "DEFAULT_PACKAGES",
    "CaseIndex",
    "Combination",
    "Matrix",
    "Pin",
    "PinKind",
    "find_matrix",
    "load_matrix",
    "parse_matrix",
    "parse_pin",
    "pin_text",
]


__getattr__, __dir__ = lazy_names(__name__, _WHERE)
