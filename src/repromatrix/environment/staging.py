"""Staging slots: the folder a new cell is built in before it moves to its
identity's folder.

uv runs an interpreter to learn its markers and paths (a child Python, some 30 ms)
and caches the answer under the interpreter's path, checked against the
modification time of the file that path resolves to. A staging folder with a new
name for every build made every new cell pay that query again; a slot is a fixed
folder reused build after build, so uv asks once per slot.

A slot is named after its base interpreter: the cached answer for a slot's
``venv/bin/python`` is then always that interpreter's. (Checked by modification time
alone, two interpreters could pass for one where every file has the same time, as
in a Nix store.) A build holds its slot under an exclusive lock; a parallel build
(``--jobs``, another run) takes the next free one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STAGING = "_staging"


@contextmanager
def staging_slot(root: Path, interpreter: str) -> Iterator[Path]:
    """An empty folder under ``root/_staging`` held by this build alone, for
    ``interpreter`` (the base interpreter's path); emptied again on the way out."""
    base = root / STAGING
    base.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(interpreter.encode()).hexdigest()[:12]
    number = 0
    while True:
        handle = os.open(base / f"{key}-{number}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            os.close(handle)
            number += 1
    slot = base / f"{key}-{number}"
    try:
        shutil.rmtree(slot, ignore_errors=True)  # what a killed build left
        slot.mkdir()
        yield slot
    finally:
        shutil.rmtree(slot, ignore_errors=True)
        os.close(handle)  # and with it the lock
