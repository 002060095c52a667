"""Stage 2: a pin set -> a uv environment (a cell), reused while its lock is the same.

store.py     EnvStore.build(EnvRequest): resolve -> identity -> reuse or build
uv.py        uv and the base interpreter; InstallError, uv's errors on one line
system.py    ``system`` pins: packages linked in from the base interpreter
indexes.py   the user's PIP_* / UV_* index settings, as uv flags
"""

from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.store import Environment, EnvRequest, EnvStore
from repromatrix.environment.uv import InstallError

__all__ = ["EnvRequest", "EnvStore", "Environment", "IndexSettings", "InstallError"]
