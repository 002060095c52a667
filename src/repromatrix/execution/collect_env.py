"""What ``python -m torch.utils.collect_env`` says, from inside a cell.

torch lives only in the cells, so the harness cannot import it: during a run the
first cell that builds runs torch's own collector once (``HostProbe``), and its output
(redacted, this machine's folders shortened) is stored beside the results, for
reports/environment.py to put into results.json as ``run.host.collect_env``. Nothing
here re-gathers what collect_env gathers.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repromatrix import procs
from repromatrix.environment import Environment
from repromatrix.redact import machine_places, redact_text, shorten_paths

COLLECT_TIMEOUT = 180.0
PROBE_FILE = Path("host") / "collect_env.json"
_LINE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 _()/.-]*?):\s?(?P<value>.*)$")


def collect(env: Environment, combination_id: str) -> dict[str, Any]:
    """Run torch.utils.collect_env with the cell's interpreter."""
    done = procs.run(
        [str(env.python), "-m", "torch.utils.collect_env"],
        env=env.subprocess_env(),
        timeout=COLLECT_TIMEOUT,
        cwd=env.root,
    )
    places = machine_places(env=env.root)
    clean = lambda text: shorten_paths(redact_text(text), places)  # noqa: E731
    if done.timed_out or done.returncode != 0 or not done.stdout.strip():
        why = "timed out" if done.timed_out else f"exit status {done.returncode}"
        tail = " | ".join(done.stderr.strip().splitlines()[-2:])
        return {"combination": combination_id, "error": clean(f"{why}: {tail}")[:1000]}
    text = clean(done.stdout.strip())
    return {"combination": combination_id, "text": text, "fields": parse(text)}


def parse(text: str) -> dict[str, str]:
    """'Key: value' lines of collect_env's header (up to its CPU section); a key whose
    value starts on the next lines (GPU models on a multi-GPU host) gets those lines."""
    fields: dict[str, str] = {}
    pending: str | None = None
    for line in text.splitlines():
        if line.strip() in ("CPU:", "Versions of relevant libraries:"):
            break
        if not line.strip():
            pending = None
            continue
        if pending is not None and line.startswith("GPU "):
            fields[pending] = "; ".join(filter(None, [fields[pending], line.strip()]))
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        key, value = match.group("key").strip(), match.group("value").strip()
        fields[key] = value
        pending = key if not value else None
    return fields


class HostProbe:
    """Collects the environment once per run, with the first cell that built.

    Safe to call from several threads (a parallel scheduler): one collects, the
    others go on. A failure (no torch in that cell) leaves the next cell to try.
    ``save(path, found)`` stores what it found (results.write_json_atomic: the run's
    files are the results stage's).
    """

    def __init__(self, results_dir: Path, save: Callable[[Path, dict[str, Any]], None]) -> None:
        self.path = Path(results_dir) / PROBE_FILE
        self._save = save
        self._lock = threading.Lock()
        self._done = False

    def collect(self, env: Environment, combination_id: str) -> None:
        if self._done or not self._lock.acquire(blocking=False):
            return
        try:
            if self._done:
                return
            found = collect(env, combination_id)
            self._save(self.path, found)
            self._done = "text" in found
        finally:
            self._lock.release()
