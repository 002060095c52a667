"""What the confinement tests share (tests/conftest.py's ``confinable`` fixture makes
them fail in CI where this machine cannot confine): one sandbox run, and the processes
seen from outside."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from repromatrix.issue import confine


def sandboxed(
    code: str,
    tmp_path: Path,
    *,
    args: Sequence[str] = (),
    read: Sequence[Path] = (),
    limits: confine.Limits | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    user: tuple[int, int] = (confine.REPRO_UID, confine.REPRO_GID),
    repositories: Sequence[str] = (),
) -> tuple[int | None, list[str], Path]:
    """``code`` run by this interpreter in a sandbox as the run job makes it: its exit
    status, the lines it said, its answer folder (writable); ``repositories``: local git
    repositories shown and trusted, as a job's ``repositories:`` are."""
    answers = tmp_path / "answers" / "7"
    confine.make_writable(answers, *user)
    said: list[str] = []
    with confine.private_tmp(*user) as private:
        confine.trust_repositories(private, repositories)
        view = confine.View(
            private,
            read=(*confine.harness_places(), *map(str, read), *repositories),
            write=(answers,),
            user=user,
        )
        argv = confine.command(
            [sys.executable, "-c", code, *args],
            view,
            env if env is not None else {"PATH": os.environ["PATH"]},
            limits or confine.Limits.for_job(timeout),
            bwrap=confine.bwrap(),
        )
        status = confine.supervise(argv, timeout=timeout, say=said.append)
    return status, said[1:-1], answers  # the stop-commands lines aside


def processes_with(marker: str) -> list[int]:
    """The live processes whose command line holds ``marker``, seen from outside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
