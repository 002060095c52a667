"""The ``gc`` command of the command line (cli/app.py adds it).

    repromatrix gc [--keep-days N] [--max-size SIZE] [--env-dir DIR]

Prunes the environment store (environment/gc.py): cells unused for N days, then the
least recently used until the store fits SIZE; never a cell in use. Also
``nox -s clean``. Exit status: 0, 2 bad input (one line).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from repromatrix.errors import UserError

# What add_commands adds (cli/app.py builds only the group a command line names).
COMMANDS = ("gc",)
DEFAULT_KEEP_DAYS = 14.0


def add_commands(commands: argparse._SubParsersAction) -> None:
    gc = commands.add_parser(
        "gc",
        help="prune the environment store: least recently used first, never one in use",
        description="Removes the environments (cells) of the store that were not used for "
        "--keep-days, then, while the store is larger than --max-size, the least recently "
        "used of the rest. A cell a run or a probe is using is kept. Exit 0; 2 bad input.",
    )
    gc.add_argument(
        "--keep-days",
        default=str(DEFAULT_KEEP_DAYS),
        metavar="N",
        help="remove cells unused for more than N days (default: %(default)s; 0: all unused)",
    )
    gc.add_argument(
        "--max-size",
        metavar="SIZE",
        help="then remove the least recently used until the store is at most SIZE (500M, 5G, ...)",
    )
    gc.add_argument(
        "--env-dir",
        type=Path,
        help="the store (default: $REPROMATRIX_ENV_DIR or ~/.cache/repromatrix/envs)",
    )


def run_command(args: argparse.Namespace) -> int | None:
    if args.command != "gc":
        return None
    from repromatrix.environment.gc import collect, parse_size
    from repromatrix.environment.store import default_store_root

    try:
        keep_days = float(args.keep_days)
    except ValueError:
        keep_days = math.nan
    if not math.isfinite(keep_days) or keep_days < 0:
        raise UserError(f"--keep-days {args.keep_days!r}: expected a number of days, 0 or more")
    max_size = parse_size(args.max_size) if args.max_size is not None else None
    root = args.env_dir or default_store_root()
    if args.env_dir is not None and not root.is_dir():
        raise UserError(f"--env-dir {root}: no such folder")
    pruned = collect(root, keep_days=keep_days, max_size=max_size, say=print)
    print(pruned.line())
    return 0
