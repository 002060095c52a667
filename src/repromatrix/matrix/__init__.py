"""Stage 1: matrix.yaml -> Combinations.

pins.py    the grammar of one package's spec, both ways (parse_pin, pin_text)
model.py   what a matrix is: settings, Combination, Matrix
case_ids.py which case ids a cases folder holds, read statically (no cell)
locate.py  which matrix.yaml a command means (searched upward like .git)
sessions.py which nox sessions the noxfile beside it defines (read with ast): the
           command a report shows, ``nox -s NAME`` only where NAME exists
load.py    reading and checking the file, expanding tiers (every mistake one line)
"""

from repromatrix.matrix.case_ids import CaseIndex
from repromatrix.matrix.load import load_matrix, parse_matrix
from repromatrix.matrix.locate import find_matrix
from repromatrix.matrix.model import DEFAULT_PACKAGES, Combination, Matrix
from repromatrix.matrix.pins import Pin, PinKind, parse_pin, pin_text

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
