"""A sweep's input: the options a command line (or the issue bot) gives, checked
before anything is built (``plan``), and the same options written back as the
command that reruns the sweep (``reproduce_command``).

Everything wrong with the input is a UserError here (exit status 2), so that a bad
``--from`` costs no environment build.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from repromatrix.errors import UserError
from repromatrix.hunts.rerun import as_of_args, rerun_command
from repromatrix.hunts.searched import Searched, SearchedPlan
from repromatrix.matrix.pins import pin_text
from repromatrix.names import canonicalize_name
from repromatrix.probe.candidates import list_releases, searched_index, version_option
from repromatrix.probe.spec import Probe, searched_probe
from repromatrix.redact import portable_path
from repromatrix.search.ranges import Releases, select


@dataclass(kw_only=True)
class SweepOptions(Searched):
    start: str  # --from
    end: str  # --to
    releases: Releases = Releases.ALL
    out: Path = Path("reports/sweep")
    issue: int | None = None  # post sweep.md on this GitHub issue


@dataclass(kw_only=True)
class Plan(SearchedPlan):
    """A checked sweep, ready to run (``candidates``: the selected releases)."""

    low: Version
    high: Version
    options: SweepOptions  # as given


def plan(options: SweepOptions) -> Plan:
    """Everything that can be wrong with the input, found before anything is built."""
    package = canonicalize_name(options.package)
    start, end = version_option("--from", options.start), version_option("--to", options.end)
    if options.jobs < 1:
        raise UserError(f"--jobs {options.jobs}: give 1 or more")
    probe = searched_probe(
        package, options.pins, options.probe, as_of=options.as_of, searched="swept"
    )
    index = searched_index(options.wheelhouse, options.index, options.cell)
    listing = list_releases(package, index)
    low, high = sorted((start, end))
    candidates = select(listing.between(low, high, pre=options.pre), options.releases)
    if not candidates:
        raise UserError(
            f"{package}: no release from {low} to {high} in {'; '.join(listing.sources)}"
        )
    folder = options.out / f"{package}-{options.start}-{options.end}"
    checked = Plan(
        package=package, low=low, high=high, listing=listing, candidates=candidates,
        index=index, probe=probe, folder=folder, options=options,
    )  # fmt: skip
    checked.command = reproduce_command(options, checked)
    return checked


def reproduce_command(options: SweepOptions, checked: Plan) -> str:
    """The command that reruns this sweep, without paths of this machine: the nox
    session where a noxfile is at hand, else repromatrix itself; --as-of kept."""
    args = ["--package", checked.package, "--from", options.start, "--to", options.end]
    if options.releases is not Releases.ALL:
        args += ["--releases", options.releases.value]
    for pin in options.pins:
        args += ["--pin", pin_text(pin)]
    args += probe_args(checked.probe)
    args += as_of_args(options.as_of, checked.package)
    if options.jobs != 1:
        args += ["--jobs", str(options.jobs)]
    if options.pre:
        args.append("--pre")
    if options.wheelhouse is not None:
        args += ["--wheelhouse", portable_path(options.wheelhouse)]
    return rerun_command("sweep", args)


def probe_args(probe: Probe) -> list[str]:
    """The probe as a command line gives it: --case, or --script without this
    machine's path."""
    if probe.case is not None:
        return ["--case", probe.case]
    assert probe.script is not None
    return ["--script", portable_path(probe.script)]
