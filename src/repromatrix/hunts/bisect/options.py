"""A bisect's input: the options a command line (or the issue bot, or culprit) gives,
checked before anything is built (``plan``), and the same options written back as the
command that reruns the bisect (``reproduce_command``, ``commit_command``; the plan
holds it).

Everything wrong with the input is a UserError here (exit status 2), so that a bad
``--good`` costs no environment build.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from repromatrix.errors import UserError
from repromatrix.hunts.rerun import as_of_args, rerun_command, shown_path
from repromatrix.hunts.searched import Searched, SearchedPlan
from repromatrix.matrix.pins import is_version, pin_text
from repromatrix.names import canonicalize_name
from repromatrix.probe.candidates import Listing, list_releases, searched_index, version_option
from repromatrix.probe.spec import Probe, searched_probe
from repromatrix.search.bisection import Find, walk_between


@dataclass(kw_only=True)
class BisectOptions(Searched):
    """``jobs``: candidates tested at once (k-section)."""

    good: str
    bad: str
    find: Find = Find.FIRST_BAD
    out: Path = Path("reports/bisect")
    git: str | None = None  # the package's repository: bisect its commits too
    env_dir: Path | None = None  # where the repository's mirror is kept (beside the cells)


@dataclass(kw_only=True)
class Plan(SearchedPlan):
    """A checked bisect, ready to run."""

    good: Version
    bad: Version
    walk: list[Version]  # from the old-outcome end to the new-outcome end
    options: BisectOptions  # as given


def plan(options: BisectOptions) -> Plan:
    """Everything that can be wrong with the input, found before anything is built."""
    package = canonicalize_name(options.package)
    good, bad = version_option("--good", options.good), version_option("--bad", options.bad)
    if good == bad:
        raise UserError(
            f"--good and --bad are the same version ({options.good}): nothing to bisect"
        )
    probe = searched_probe(
        package, options.pins, options.probe, as_of=options.as_of, searched="bisected"
    )
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: must be at least 1")
    index = searched_index(options.wheelhouse, options.index, options.cell)
    listing = list_releases(package, index)
    missing = [v for v in (good, bad) if listing.find(v) is None]
    if missing:
        raise UserError(
            f"{package} {' and '.join(map(str, missing))}: not a release in "
            f"{'; '.join(listing.sources)} ({_nearest(listing, missing[0])})"
        )
    candidates = listing.between(good, bad, pre=options.pre)
    walk = walk_between(candidates, good, bad, options.find)
    folder = options.out / f"{package}-{good}-{bad}"
    checked = Plan(
        package=package, good=good, bad=bad, listing=listing, candidates=candidates,
        walk=walk, index=index, probe=probe, folder=folder, options=options,
    )  # fmt: skip
    checked.command = reproduce_command(options, checked)
    return checked


def releases_given(options: BisectOptions) -> bool:
    """Whether --good and --bad are written as versions (1.2.3, not v1.2.3 or a sha)."""
    return all(
        text[:1].isdigit() and is_version(text) and not _looks_like_sha(text)
        for text in (options.good, options.bad)
    )


def _looks_like_sha(text: str) -> bool:
    return (
        len(text) >= 7 and all(c in "0123456789abcdef" for c in text.lower()) and not text.isdigit()
    )


def _nearest(listing: Listing, version: Version) -> str:
    """'nearest releases: 4.57.6, 5.0.0' around a version that is not one."""
    versions = listing.versions()
    below = [v for v in versions if v < version][-1:]
    above = [v for v in versions if v > version][:1]
    return "nearest releases: " + ", ".join(str(v) for v in [*below, *above])


def reproduce_command(options: BisectOptions, checked: Plan) -> str:
    """The command that reruns this bisect, without paths of this machine: the nox
    session where the working folder's noxfile has one, else repromatrix itself (a
    project that only installed the tool)."""
    args = ["--package", checked.package, "--good", options.good, "--bad", options.bad]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    if checked.probe.case is not None:
        args += ["--case", checked.probe.case]
    else:
        assert checked.probe.script is not None
        args += ["--script", shown_path(checked.probe.script)]
    if options.find is not Find.FIRST_BAD:
        args += ["--find", options.find.value]
    if options.pre:
        args.append("--pre")
    args += as_of_args(options.as_of, checked.package)
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    if options.wheelhouse is not None:
        args += ["--wheelhouse", shown_path(options.wheelhouse)]
    return rerun_command("bisect", args)


def commit_command(options: BisectOptions, probe: Probe) -> str:
    """The command that reruns a commit bisect (``--git``): the refs as given, and
    none of the options that only choose releases (--pre, --wheelhouse)."""
    args = ["--package", canonicalize_name(options.package), "--git", options.git or ""]
    args += ["--good", options.good, "--bad", options.bad]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    if probe.case is not None:
        args += ["--case", probe.case]
    elif probe.script is not None:
        args += ["--script", shown_path(probe.script)]
    if options.find is not Find.FIRST_BAD:
        args += ["--find", options.find.value]
    args += as_of_args(options.as_of, options.package)
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    return rerun_command("bisect", args)
