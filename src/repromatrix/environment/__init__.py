"""Stage 2: a pin set -> a uv environment (a cell), reused while its lock is the same.

store.py     EnvStore.build(EnvRequest): resolve -> identity -> reuse or build
uv.py        uv and the base interpreter; InstallError, uv's errors on one line
system.py    ``system`` pins: packages linked in from the base interpreter
indexes.py   the user's PIP_* / UV_* index settings, as uv flags

The names below are loaded when first used (PEP 562): a command that only reads
index settings does not load the builder.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repromatrix.environment.indexes import IndexSettings
    from repromatrix.environment.store import Environment, EnvRequest, EnvStore
    from repromatrix.environment.uv import InstallError

_WHERE = {
    "IndexSettings": "indexes",
    "Environment": "store",
    "EnvRequest": "store",
    "EnvStore": "store",
    "InstallError": "uv",
}

__all__ = [
    "EnvRequest",
    "EnvStore",
    "Environment",
    "IndexSettings",
    "InstallError",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
