"""A package's name as an index compares it (PEP 503): runs of ``-``, ``_`` and ``.``
are one ``-``, and case does not count.

packaging.utils.canonicalize_name is the same rule, and tests/test_names.py holds the
two equal on generated names. It is not imported here because importing
packaging.utils loads packaging.tags (platform, sysconfig, logging): about 14 ms of
CPU on every start, a tenth of ``check`` in a reused cell (benchmarks/bench_startup.py),
for a rule that is one regular expression.
"""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """``Typing_Extensions`` -> ``typing-extensions``."""
    return _SEPARATORS.sub("-", name).lower()
