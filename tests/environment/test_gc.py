"""``repromatrix gc``: the store's cells pruned least recently used first, never one in
use; what they leave behind (fast-reuse entries, staged sources) goes with them."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from repromatrix import cli
from repromatrix.environment.gc import USED, cells, collect, in_use, parse_size, used_cell
from repromatrix.environment.known_requests import REQUESTS
from repromatrix.errors import UserError

DAY = 86400.0
NOW = 1_800_000_000.0


def cell(root: Path, name: str, *, days_ago: float, size: int = 4096, done: bool = True) -> Path:
    """A stored cell, last used ``days_ago`` before NOW, of about ``size`` bytes."""
    home = root / (name * 16)[:16]
    (home / "venv").mkdir(parents=True)
    (home / "venv" / "blob").write_bytes(os.urandom(size))
    (home / "lock.txt").write_text(f"mylib @ file:///store/_sources/mylib-{name * 24}\n")
    if done:
        (home / "complete").write_text("x")
    (home / USED).touch()
    when = NOW - days_ago * DAY
    for path in (home / USED, home / "complete", home):
        if path.exists():
            os.utime(path, (when, when))
    return home


def test_unused_for_keep_days_goes_the_recent_stay(tmp_path: Path) -> None:
    old, recent = cell(tmp_path, "a", days_ago=30), cell(tmp_path, "b", days_ago=1)
    pruned = collect(tmp_path, keep_days=14, now=NOW)
    assert [c.home for c in pruned.removed] == [old] and not old.exists()
    assert [c.home for c in pruned.kept] == [recent] and recent.exists()
    assert pruned.line().startswith("gc: removed 1 environment (")
    assert not (tmp_path / "_trash").exists()


def test_over_max_size_the_least_recently_used_go_first(tmp_path: Path) -> None:
    homes = [
        cell(tmp_path, n, days_ago=d, size=64 * 1024) for n, d in zip("abc", (3, 1, 2), strict=True)
    ]
    one = cells(tmp_path)[-1].size
    pruned = collect(tmp_path, keep_days=None, max_size=one + 10, now=NOW)
    assert [c.home for c in pruned.removed] == [homes[0], homes[2]]  # 3 days, then 2
    assert [p.exists() for p in homes] == [False, True, False]


def test_a_cell_in_use_is_never_removed(tmp_path: Path) -> None:
    busy = cell(tmp_path, "a", days_ago=60)
    with in_use(tmp_path, busy.name):  # a run holds it, however old its stamp
        pruned = collect(tmp_path, keep_days=0, now=NOW)
    assert busy.exists() and [c.home for c in pruned.busy] == [busy]
    assert "1 in use kept" in pruned.line()
    assert [c.home for c in collect(tmp_path, keep_days=0, now=NOW).removed] == [busy]


def test_an_interrupted_build_goes_and_what_named_removed_cells_too(tmp_path: Path) -> None:
    half = cell(tmp_path, "a", days_ago=0, done=False)
    kept = cell(tmp_path, "b", days_ago=0)
    gone = cell(tmp_path, "c", days_ago=40)
    (tmp_path / REQUESTS).mkdir()
    for home in (kept, gone):
        entry = tmp_path / REQUESTS / f"{home.name}.json"
        entry.write_text(json.dumps({"identity": home.name + "0" * 48}))
    staged = tmp_path / "_sources"
    for name in ("b", "c"):  # the copies the cells' locks name
        (staged / f"mylib-{name * 24}").mkdir(parents=True)
        os.utime(staged / f"mylib-{name * 24}", (NOW - 2 * DAY, NOW - 2 * DAY))
    (staged / "mylib-new").mkdir()  # staged a moment ago: a build may be about to use it
    os.utime(staged / "mylib-new", (NOW, NOW))
    collect(tmp_path, keep_days=14, now=NOW)
    assert not half.exists() and not gone.exists() and kept.exists()
    assert sorted(p.name for p in (tmp_path / REQUESTS).iterdir()) == [f"{kept.name}.json"]
    assert sorted(p.name for p in staged.iterdir()) == [f"mylib-{'b' * 24}", "mylib-new"]


def test_using_a_cell_stamps_it_and_waits_out_a_removal(tmp_path: Path) -> None:
    """used_cell takes the cell's lock after the store hands it over; a cell gc
    removed in between is built again, never handed out gone."""
    home = cell(tmp_path, "a", days_ago=30)
    built: list[int] = []

    def build():
        built.append(1)
        if len(built) == 1:  # gc takes this one before the caller's lock
            collect(tmp_path, keep_days=0, now=NOW)
        else:
            cell(tmp_path, "a", days_ago=0)
        fields = {"root": home, "identity": home.name, "python": home / "venv"}
        return type("Env", (), fields)()

    with used_cell(tmp_path, build) as env:
        assert env.root.exists() and len(built) == 2
        assert time.time() - (home / USED).stat().st_mtime < 60  # stamped now
        removed = threading.Thread(target=collect, args=(tmp_path,), kwargs={"keep_days": 0})
        removed.start()
        removed.join()
        assert home.exists()  # in use while the block runs


@pytest.mark.parametrize(
    ("text", "size"),
    [("1024", 1024), ("500M", 500 * 2**20), ("1.5GB", int(1.5 * 2**30)), ("2GiB", 2 * 2**30)],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--max-size", "lots"], "--max-size 'lots': expected a size such as 500M"),
        (["--keep-days", "-1"], "--keep-days '-1': expected a number of days"),
        (["--keep-days", "nan"], "--keep-days 'nan': expected a number of days"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, args: list[str], said: str):
    assert cli.main(["gc", "--env-dir", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]


def test_the_command_prunes_the_store_it_is_given(tmp_path: Path, capsys) -> None:
    home = cell(tmp_path, "a", days_ago=0)
    os.utime(home / USED, (time.time() - 30 * DAY,) * 2)
    os.utime(home / "complete", (time.time() - 30 * DAY,) * 2)
    assert cli.main(["gc", "--env-dir", str(tmp_path), "--keep-days", "7"]) == 0
    out = capsys.readouterr().out
    assert f"removed {home.name}: last used " in out
    assert out.strip().splitlines()[-1].startswith("gc: removed 1 environment (")
    assert not home.exists()
    with pytest.raises(UserError):
        parse_size("")
