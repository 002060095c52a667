"""Which pairs of releases cannot be installed together: asked of uv, never run.

Each pair is resolved with the held pins (``uv pip compile``, the cells' indexes and
interpreter); "No solution found" makes it a ``conflict`` with uv's reason, and the
covering array leaves it out. Each pair is asked once: the answers are kept in
atlas.json (``resolutions``). A pair with an optional axis's ``ABSENT`` asks for the
other release alone.

Planning never runs a build backend (``--no-build``: wheels only). A pair that needs
a source distribution built is not called a conflict: its cell decides, where a
build is the cell's own business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor

from repromatrix import procs
from repromatrix.environment import IndexSettings
from repromatrix.environment.uv import find_interpreter, uv_binary, uv_message
from repromatrix.errors import UserError
from repromatrix.hunts.atlas.state import Resolution
from repromatrix.hunts.atlas.universe import ABSENT, Pair, Universe
from repromatrix.matrix.pins import Pin

# requirements -> "" when they resolve together, else uv's reason on one line
Resolve = Callable[[list[str]], str]

RESOLVE_TIMEOUT = 300.0
# What uv says when --no-build stopped it (not a conflict of the pair's metadata).
NEEDS_A_BUILD = ("building from source is disabled", "--no-build", "no usable wheels")


def uv_resolver(index: IndexSettings, python: str | None = None) -> Resolve:
    """``uv pip compile`` of the requirements against ``index``."""
    uv = uv_binary()
    interpreter = find_interpreter(python).executable

    def resolve(requirements: list[str]) -> str:
        args = [uv, "pip", "compile", "-", "--python", interpreter, "--quiet", "--no-header"]
        args.append("--no-build")  # metadata from wheels only: no sdist's backend runs
        done = procs.run(
            [*args, *index.uv_args()],
            input="\n".join(requirements) + "\n",
            timeout=RESOLVE_TIMEOUT,
        )
        if done.timed_out:
            raise UserError(f"uv pip compile {' '.join(requirements)}: timed out")
        if done.returncode == 0:
            return ""
        if any(word in done.stderr for word in NEEDS_A_BUILD):
            return ""  # only a build would tell: the cell will
        if "No solution found" in done.stderr:
            return uv_message(done.stderr)
        raise UserError(f"uv pip compile {' '.join(requirements)}: {uv_message(done.stderr)}")

    return resolve


def held_requirements(pins: Iterable[Pin]) -> list[str]:
    """The held pins a resolver can take (a ``system`` copy or ``null`` it cannot)."""
    return [r for pin in pins if (r := pin.requirement()) is not None]


def resolve_pairs(
    universe: Universe,
    known: Iterable[Resolution],
    resolve: Resolve,
    *,
    held: list[str],
    jobs: int = 1,
    say: Callable[[str], None] = lambda _line: None,
) -> list[Resolution]:
    """The pairs not resolved before, resolved now (``jobs`` at once)."""
    done = {_key(r.pins) for r in known}
    todo = [pair for pair in universe.pairs() if _key(dict(pair)) not in done]
    if not todo:
        return []
    say(f"resolving {len(todo)} pairs with uv (conflicts are never run)")

    def one(pair: Pair) -> Resolution:
        requirements = [*held, *(f"{p}=={v}" for p, v in pair if v != ABSENT)]
        return Resolution(pins=dict(pair), conflict=resolve(requirements))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        found = list(pool.map(one, todo))
    clashes = sum(1 for r in found if r.conflict)
    say(f"  {clashes} of {len(found)} pairs cannot be installed together")
    return found


def _key(pins: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(pins.items()))
