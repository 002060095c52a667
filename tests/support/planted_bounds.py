"""A planted universe for ``repromatrix bounds``: tiny wheels (support.wheels) of a
target whose declared ranges have every shape, and a script probe that knows which
releases break it.

    bf-a >=1.0        1.0-1.4    1.0 and 1.1 break it             floor-too-low, >=1.2
    bf-b >=2.0,<2.3   2.0-2.5    2.5 breaks; 2.3 and 2.4 work     ceiling-too-tight, <2.5
    bf-c >=3.0        3.0-3.4    3.4 breaks (the newest set too)  ceiling-missing, <3.4
    bf-d >=4.0,<4.3   4.0-4.3    4.3 breaks                       ok
    bf-e (python_version < "3")  a marker false here: left out
    bf-f >=1.1 (extra "more")    1.0, 1.1                        ok with --extra more
    bf-g >=9   (extra "gee")     1.0 only                        untestable with --extra gee

The newest allowed set (bf-c 3.4) is broken, so every floor must be judged beside a
set that works. ``bf-ok`` declares right ranges only.
"""

from __future__ import annotations

from pathlib import Path

from support.wheels import version_wheel

TARGET = "bf-app"
RELEASES = {
    "bf-a": ["1.0", "1.1", "1.2", "1.3", "1.4"],
    "bf-b": ["2.0", "2.1", "2.2", "2.3", "2.4", "2.5"],
    "bf-c": ["3.0", "3.1", "3.2", "3.3", "3.4"],
    "bf-d": ["4.0", "4.1", "4.2", "4.3"],
    "bf-e": ["1.0"],
    "bf-f": ["1.0", "1.1"],
    "bf-g": ["1.0"],
}
REQUIRES = (
    "bf-a>=1.0",
    "bf-b>=2.0,<2.3",
    "bf-c>=3.0",
    "bf-d>=4.0,<4.3",
    'bf-e>=1; python_version < "3"',
    'bf-f>=1.1; extra == "more"',
    'bf-g>=9; extra == "gee"',
)
# bf-ok 1.0's ranges: every one holds
RIGHT = ("bf-a>=1.2", "bf-b>=2.0,<2.5", "bf-c>=3.0,<3.4", "bf-d>=4.0,<4.3")
EXPECTED = {
    "bf-a": ("floor-too-low", ">=1.2"),
    "bf-b": ("ceiling-too-tight", ">=2.0,<2.5"),
    "bf-c": ("ceiling-missing", ">=3.0,<3.4"),
    "bf-d": ("ok", ">=4.0,<4.3"),
    "bf-f": ("ok", ">=1.1"),
    "bf-g": ("untestable", ">=9"),
}
PROBE = """\
import bf_a, bf_b, bf_c, bf_d

def v(module):
    return tuple(int(part) for part in module.VERSION.split("."))

problems = []
if v(bf_a) < (1, 2):
    problems.append("bf_a " + bf_a.VERSION + " lacks total()")
if v(bf_b) >= (2, 5):
    problems.append("bf_b 2.5 removed mean()")
if v(bf_c) >= (3, 4):
    problems.append("bf_c 3.4 renamed run()")
if v(bf_d) >= (4, 3):
    problems.append("bf_d 4.3 changed the default")
if problems:
    raise SystemExit("; ".join(problems))
print("ok")
"""


def wheelhouse(folder: Path) -> Path:
    """Every release of the universe, bf-app 1.0 and bf-ok 1.0 as wheels in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, versions in RELEASES.items():
        for version in versions:
            version_wheel(folder, name, version)
    version_wheel(folder, TARGET, "1.0", REQUIRES)
    version_wheel(folder, "bf-ok", "1.0", RIGHT)
    return folder


def probe(path: Path) -> Path:
    path.write_text(PROBE)
    return path
