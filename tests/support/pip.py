"""pip for tests that fill a wheelhouse: the base interpreter's, since a uv-made venv
(nox's, where CI runs the tests) has no pip of its own."""

from __future__ import annotations

import sys

PIP = [getattr(sys, "_base_executable", None) or sys.executable, "-m", "pip", "-q"]
