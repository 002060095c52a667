"""One cell, built and used: what the matrix run and a probe share (asv's one road from
a spec to an environment).

``run_in_cell`` asks the store for the cell of a request (EnvRequest.for_cell), writes
its install log (redacted, uv's own log behind a failure included), and runs the work
it is handed in the built cell: a combination's cases (pipeline.py) or one probe
(probe/check.py). A cell that cannot be built comes back as the InstallError, its log
written: install errors are handled here, once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from repromatrix.environment import Environment, EnvRequest, EnvStore, InstallError
from repromatrix.redact import redact_text

T = TypeVar("T")


def run_in_cell(
    store: EnvStore,
    request: EnvRequest,
    work: Callable[[Environment], T],
    *,
    timeout: float,
    install_log: Path,
) -> T | InstallError:
    """``work(cell)`` in the cell of ``request``, or the InstallError that kept it
    from being built; ``install_log`` gets what the build said either way."""
    lines: list[str] = []
    install_log.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as held:
        try:
            if hasattr(store, "use"):  # held in use while the work runs: gc leaves it alone
                env = held.enter_context(store.use(request, timeout=timeout, log=lines.append))
            else:  # a store that keeps no record of use (a test's stand-in)
                env = store.build(request, timeout=timeout, log=lines.append)
        except InstallError as err:
            install_log.write_text(redact_text("\n".join([*lines, err.log])))
            return err
        install_log.write_text(redact_text("\n".join(lines)))
        return work(env)
