"""The hunts, one row each: what the command line, the noxfile (and the static read
of it, matrix/sessions.py), the issue bot and the nightly's triage read to offer a
hunt (pytest's report_teststatus idea: one table, read by everyone). Adding a hunt is
one folder under hunts/ (its run module has the shape of hunts.Hunt) and one row here.

Vocabulary, importing nothing: the parser, ``--help`` and the noxfile read the table
without loading a hunt; a row names its modules, which load when the hunt runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HuntRow:
    name: str  # the command (repromatrix NAME) and the nox session (nox -s NAME)
    summary: str  # one line: what it answers
    usage: str  # its arguments, as `nox -s NAME -- USAGE` takes them
    exits: str  # what its exit statuses mean
    kept: str  # where an interrupted run left what it did
    module: str  # its run module: plan(options), run(plan, prober)
    cli: str  # the command-line module that parses its options
    issue: bool = False  # offered as `/repromatrix NAME` on an issue (issue/)
    workflow: str | None = None  # the workflow the nightly's triage dispatches it to

    @property
    def session_doc(self) -> str:
        """The nox session's description (nox -l)."""
        return f"{self.summary}: -- {self.usage}."


HUNTS = (
    HuntRow(
        name="bisect",
        summary="Bisect one package's releases",
        usage="--package P --good V1 --bad V2 (--case ID | --script F)",
        exits="Exit 0 found, 1 could not conclude, 2 bad input.",
        kept="the steps done are in bisect.json",
        module="repromatrix.hunts.bisect.run",
        cli="repromatrix.cli.bisect",
        issue=True,
        workflow="bisect.yml",
    ),
    HuntRow(
        name="sweep",
        summary="Every release of one package",
        usage="--package P --from V1 --to V2 (--case ID | --script F)",
        exits="Exit 0 done, 1 nothing could be tested, 2 bad input.",
        kept="the releases done are in sweep.json",
        module="repromatrix.hunts.sweep.run",
        cli="repromatrix.cli.sweep",
        issue=True,
    ),
    HuntRow(
        name="check",
        summary="One verdict",
        usage="(--case ID | --script F) --pin PKG==VER; exit 0 good, 1 bad, 125 skip",
        exits="Exit 0 good, 1 bad, 125 untestable; 128 for bad input (stops git bisect run).",
        kept="nothing is kept",
        module="repromatrix.hunts.check.run",
        cli="repromatrix.cli.check",
        issue=True,
    ),
    HuntRow(
        name="culprit",
        summary="Which moved package broke it",
        usage="--good-lock A --bad-lock B (--case ID | --script F)",
        exits="Exit 0 found, 1 could not conclude, 2 bad input.",
        kept="the steps done are in culprit.json",
        module="repromatrix.hunts.culprit.run",
        cli="repromatrix.cli.culprit",
        workflow="culprit.yml",
    ),
    # atlas (hunts/atlas/): its row comes with it.
)
BY_NAME = {row.name: row for row in HUNTS}


def hunt(name: str) -> HuntRow:
    return BY_NAME[name]


HUNT_NAMES = frozenset(BY_NAME)
