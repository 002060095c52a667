"""Sets of the tested dependencies that uv resolves, never runs: the all-floors set
(``uv pip compile --resolution lowest-direct``: each range's lowest release that
installs beside the others' floors) and the set of the target's release day (each
tested dependency as of the target's upload, ``--exclude-newer-package``: what its
maintainers could have tested; environment/as_of.py's upload times).
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from repromatrix import procs
from repromatrix.environment.as_of import upload_time
from repromatrix.environment.lock import LOCK_LINE
from repromatrix.environment.uv import uv_binary, uv_message
from repromatrix.hunts.bounds.answers import Floors
from repromatrix.hunts.bounds.options import Plan
from repromatrix.matrix.pins import PinKind
from repromatrix.names import canonicalize_name

RESOLVE_TIMEOUT = 600.0


def requirements(checked: Plan) -> list[str]:
    """The target (with the extras asked for), each tested range as declared, and the
    held pins: the direct requirements of a resolution. The target's other
    dependencies come through it, so lowest-direct leaves them at their newest."""
    target = checked.target
    extras = f"[{','.join(checked.options.extras)}]" if checked.options.extras else ""
    if target.pin.kind is PinKind.PATH:
        found = [f"{target.name}{extras} @ {target.pin.location.as_uri()}"]
    else:
        found = [f"{target.name}{extras}=={target.version}"]
    found += [r for pin in checked.held if (r := pin.requirement()) is not None]
    found += [f"{d.name}{d.specifier}" for d in checked.dependencies if d.admitted]
    return found


def compile_set(checked: Plan, asked: Sequence[str], *flags: str) -> tuple[dict[str, Version], str]:
    """(the tested dependencies' versions uv resolves ``asked`` to, "") or ({}, uv's reason)."""
    if checked.options.cell.overrides:
        return {}, "the cell has overrides; not resolved apart from it"
    command = [
        uv_binary(), "pip", "compile", "-", "--python", checked.interpreter, "--quiet",
        "--no-header", "--no-annotate", *checked.index.uv_args(), *flags,
    ]  # fmt: skip
    done = procs.run(command, input="\n".join(asked) + "\n", timeout=RESOLVE_TIMEOUT)
    if done.timed_out:
        return {}, "uv pip compile timed out"
    if done.returncode != 0:
        return {}, uv_message(done.stderr)
    tested = {d.name for d in checked.dependencies if d.admitted}
    versions: dict[str, Version] = {}
    for line in done.stdout.splitlines():  # a folder's line (name @ file://) is no version
        match = LOCK_LINE.match(line.strip())
        if match and canonicalize_name(match.group(1)) in tested:
            try:
                versions[canonicalize_name(match.group(1))] = Version(match.group(2))
            except InvalidVersion:
                continue
    return versions, ""


def all_floors(checked: Plan) -> Floors:
    """The all-floors set; the floors uv had to lift above what the ranges admit
    first, and why (the resolver's words for the declared floors pinned exactly)."""
    versions, reason = compile_set(checked, requirements(checked), "--resolution", "lowest-direct")
    if not versions:
        return Floors(None, reason=reason)
    lowest = {d.name: d.admitted[0] for d in checked.dependencies if d.admitted}
    lifted = {n: v for n, v in lowest.items() if n in versions and versions[n] != v}
    if not lifted:
        return Floors(versions)
    pinned = [r for r in requirements(checked) if not _tested(r, lowest)]
    pinned += [f"{n}=={v}" for n, v in lowest.items()]
    _, why = compile_set(checked, pinned)
    return Floors(versions, lifted, why or "uv picks higher floors")


def release_day(checked: Plan) -> list[tuple[str, dict[str, Version]]]:
    """The tested dependencies as of the target's upload (none for a folder, or an
    index without upload times)."""
    target = checked.target
    if target.pin.kind is not PinKind.EXACT:
        return []
    stamp, _, _ = upload_time(target.name, Version(target.version), checked.index)
    if stamp is None:
        return []
    flags: list[str] = []
    for d in checked.dependencies:
        if d.admitted:
            flags += ["--exclude-newer-package", f"{d.name}={stamp}"]
    versions, _ = compile_set(checked, requirements(checked), *flags)
    return (
        [(f"{target.name} {target.version}'s release day, {stamp[:10]}", versions)]
        if versions
        else []
    )


def _tested(requirement: str, lowest: dict[str, Version]) -> bool:
    name = requirement.split(";")[0]
    for stop in "<>=!~[ @":
        name = name.split(stop)[0]
    return canonicalize_name(name) in lowest
