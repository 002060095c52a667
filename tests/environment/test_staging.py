"""Staging slots: a new cell is built in a fixed folder per base interpreter (uv's
cached interpreter query then holds for it), one build per slot at a time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repromatrix.environment import store
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.staging import staging_slot
from repromatrix.environment.store import EnvStore
from repromatrix.matrix.pins import parse_pin


def test_a_slot_is_the_same_folder_build_after_build(tmp_path: Path) -> None:
    with staging_slot(tmp_path, "/usr/bin/python3.11") as first:
        (first / "venv").mkdir()
    assert not first.exists(), "emptied on the way out"
    with staging_slot(tmp_path, "/usr/bin/python3.11") as again:
        assert again == first and list(again.iterdir()) == []


def test_parallel_builds_and_other_interpreters_get_other_slots(tmp_path: Path) -> None:
    with (
        staging_slot(tmp_path, "/usr/bin/python3.11") as one,
        staging_slot(tmp_path, "/usr/bin/python3.11") as two,
        staging_slot(tmp_path, "/usr/bin/python3.10") as other,
    ):
        assert len({one, two, other}) == 3
        # The slot of another interpreter never shares a name stem with this one's:
        # uv's cached answer for <slot>/venv/bin/python is always one interpreter's.
        assert other.name.split("-")[0] != one.name.split("-")[0] == two.name.split("-")[0]


def test_a_slot_held_by_another_process_is_not_taken(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys
                from pathlib import Path
                from repromatrix.environment.staging import staging_slot
                with staging_slot(Path({str(tmp_path)!r}), "/usr/bin/python3.11") as slot:
                    print(slot, flush=True)
                    sys.stdin.readline()
            """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": ":".join(p for p in sys.path if p)},
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        held = Path(holder.stdout.readline().strip())
        with staging_slot(tmp_path, "/usr/bin/python3.11") as mine:
            assert mine != held and held.is_dir()
    finally:
        holder.communicate("\n", timeout=30)
    with staging_slot(tmp_path, "/usr/bin/python3.11") as freed:
        assert freed == held, "a slot is free again once its build ends"


def test_what_a_killed_build_left_in_a_slot_is_cleared(tmp_path: Path) -> None:
    with staging_slot(tmp_path, "/usr/bin/python3.11") as slot:
        pass
    (slot / "venv" / "bin").mkdir(parents=True)  # a build killed mid-install
    with staging_slot(tmp_path, "/usr/bin/python3.11") as again:
        assert again == slot and list(again.iterdir()) == []


def test_two_new_cells_are_installed_through_the_same_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pythons: list[str] = []

    class Done:
        returncode, stdout, stderr, timed_out = 0, "", "", False

    def fake_run(args, **kwargs):
        if args[1:2] == ["venv"]:
            Path(args[-1], "bin").mkdir(parents=True)
        if args[1:3] == ["pip", "install"]:
            python = args[args.index("--python") + 1]
            pythons.append(python)
            name, version = kwargs["input"].strip().split("==")
            site = Path(python).parent.parent / "lib/python3.11/site-packages"
            (site / f"{name}-{version}.dist-info").mkdir(parents=True)
        return Done()

    monkeypatch.setattr(store.procs, "run", fake_run)
    env_store = EnvStore(tmp_path)
    built = [
        env_store.build(EnvRequest(pins=(parse_pin("six", version),), tooling=()))
        for version in ("1.16.0", "1.17.0")
    ]
    assert [cell.resolved for cell in built] == [{"six": "1.16.0"}, {"six": "1.17.0"}]
    assert len(pythons) == 2 and pythons[0] == pythons[1]
    # Each moved on to its own identity's folder, the slot left empty for the next.
    assert built[0].root != built[1].root
    assert all((cell.root / "venv" / "bin").is_dir() for cell in built)
    assert not Path(pythons[0]).parent.exists()
