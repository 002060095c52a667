"""Stage 2: a pin set -> a uv environment (a cell), reused while its lock is the same.

store.py     EnvStore.build(EnvRequest): resolve -> identity -> reuse or build
request.py   EnvRequest (what is asked) and Environment (a built cell)
identity.py  what names a cell: the fast-reuse key and the identity, sha256 of JSON
lock.py      a cell's lock, read from a new venv and back as versions
uv.py        uv and the base interpreter; InstallError, uv's errors on one line
system.py    ``system`` pins: packages linked in from the base interpreter
indexes.py   the user's PIP_* / UV_* index settings, as uv flags
project_input.py  a package with an index of its own: the requirements as a project file
source_tree.py    a folder pin's source: its digest, commit, dirty flag; its staged copy
gc.py        a cell in use (its lock), and `repromatrix gc`: the least recently used pruned

The names below are loaded when first used (PEP 562): a command that only reads
index settings does not load the builder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repromatrix.lazy import lazy_names

if TYPE_CHECKING:
    from repromatrix.environment.indexes import IndexSettings
    from repromatrix.environment.request import Environment, EnvRequest
    from repromatrix.environment.store import EnvStore
    from repromatrix.environment.uv import InstallError

_WHERE = {
    "IndexSettings": "indexes",
    "Environment": "request",
    "EnvRequest": "request",
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


__getattr__, __dir__ = lazy_names(__name__, _WHERE)
