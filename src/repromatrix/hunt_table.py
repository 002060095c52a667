"""The hunts, one row each: what the command line, the noxfile (and the static read
of it, matrix/sessions.py), the issue bot and the nightly's triage read to offer a
hunt (pytest's report_teststatus idea: one table, read by everyone). Adding a hunt is
one folder under hunts/ (its run module declares its hunts.hunt.Hunt) and one row here.

Vocabulary, importing nothing: the parser, ``--help`` and the noxfile read the table
without loading a hunt; a row names its modules, which load when the hunt runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HuntRow:
    name: str  # the command (repromatrix NAME) and the nox session (nox -s NAME)
    issue: bool  # offered as `/repromatrix NAME` on an issue (issue/)
    workflow: str | None  # the workflow the nightly's triage dispatches it to, if any
    words: Words
    # What its nox session puts before the session's arguments (atlas: its run step).
    session: tuple[str, ...] = ()

    # Its run module and the Hunt it declares there (hunts.hunt.Hunt: BISECT, SWEEP, ...),
    # and the command-line module that parses its options (options(args)) and gives
    # its runner (runner(args, prober)), by their names.
    module = property(lambda row: f"repromatrix.hunts.{row.name}.run")
    attribute = property(lambda row: row.name.upper())
    cli = property(lambda row: f"repromatrix.cli.{row.name}")


@dataclass(frozen=True)
class Words:
    """What a hunt says about itself: its line in ``repromatrix --help`` (``help``),
    what ``repromatrix NAME --help`` says it does and writes (``about``) and what its
    exit statuses mean (``exits``), its nox session's description (``usage``: what it
    answers, its arguments after ``--``), and where an interrupted run left what it did
    (``kept``)."""

    help: str
    about: str
    exits: str
    usage: str
    kept: str


HUNTS = (
    HuntRow(
        name="bisect",
        issue=True,
        workflow="bisect.yml",
        words=Words(
            help="find the release of one package where a case or script changed outcome",
            about="Binary search over the released versions of one package between two ends. "
            "Writes reports/bisect/<package>-<good>-<bad>/bisect.json and bisect.md.",
            exits="Exit status: 0 found, 1 could not conclude, 2 bad input.",
            usage="Bisect one package's releases: "
            "-- --package P --good V1 --bad V2 (--case ID | --script F).",
            kept="the steps done are in bisect.json",
        ),
    ),
    HuntRow(
        name="sweep",
        issue=True,
        workflow=None,
        words=Words(
            help="run a case or script on every release of one package between two versions",
            about="Test each selected release of one package between --from and --to, each in "
            "its own environment, and collapse the outcomes into ranges. Writes "
            "reports/sweep/<package>-<from>-<to>/sweep.json, sweep.md and a reproducer script "
            "per bad release.",
            exits="Exit status: 0 done, 1 nothing could be tested (every release untestable), "
            "2 bad input.",
            usage="Every release of one package: "
            "-- --package P --from V1 --to V2 (--case ID | --script F).",
            kept="the releases done are in sweep.json",
        ),
    ),
    HuntRow(
        name="check",
        issue=True,
        workflow=None,
        words=Words(
            help="one environment, one verdict: exit 0 good, 1 bad, 125 untestable "
            "(git bisect run)",
            about="Build (or reuse) the environment of the pins and run a case or script in it.",
            exits="Exit 0 good, 1 bad, 125 untestable (install failure, exit 125, skipped case); "
            "128 for bad input, which stops git bisect run.",
            usage="One verdict: -- (--case ID | --script F) --pin PKG==VER; "
            "exit 0 good, 1 bad, 125 skip.",
            kept="nothing is kept",
        ),
    ),
    HuntRow(
        name="culprit",
        issue=False,
        workflow="culprit.yml",
        words=Words(
            help="which of the packages that moved between a good and a bad lock broke it",
            about="Delta debugging over the packages that differ between two locks (requirements "
            "files of exact pins, as uv pip compile writes them): mixes of the good lock with "
            "some changes applied are built and probed until the smallest set that turns good "
            "into bad is left; a single culprit's releases are then bisected. Writes "
            "reports/culprit/<name>/culprit.json and culprit.md.",
            exits="Exit status: 0 found, 1 could not conclude, 2 bad input.",
            usage="Which moved package broke it: "
            "-- --good-lock A --bad-lock B (--case ID | --script F).",
            kept="the steps done are in culprit.json",
        ),
    ),
    HuntRow(
        name="atlas",
        issue=False,
        workflow=None,
        words=Words(
            help="the compatibility atlas: which versions of the stack work together",
            about="Cover every pair of the atlas: axes' releases in few cells, localise "
            "failures to the pair that causes them, and publish reports/atlas/ (atlas.json, "
            "index.html, answers.csv, summary.md).",
            exits="Exit status: 0 done, 1 (recommend) no set is known to work, 2 bad input.",
            usage="The compatibility atlas (matrix.yaml's atlas:): "
            "-- [--budget N] [--jobs N] [--wheelhouse DIR].",
            kept="the cells done are in atlas.json",
        ),
        session=("run",),
    ),
    HuntRow(
        name="bounds",
        issue=False,
        workflow=None,
        words=Words(
            help="are a package's declared dependency ranges right: each floor and ceiling tested",
            about="Read TARGET's Requires-Dist (a folder, or NAME==VERSION) and test, for each "
            "direct dependency, the lowest and the newest release its range admits beside a "
            "set of the others that works, and the newest release its cap shuts out; short "
            "searches only where an end fails. Writes reports/bounds/<target>-<version>/ "
            "(bounds.json, summary.md, pyproject.diff).",
            exits="Exit status: 0 every declared bound holds, 1 one is wrong (or could not be "
            "judged), 2 bad input.",
            usage="Declared ranges, tested: -- TARGET (--case ID | --script F) "
            "[--only DEP ...] [--wheelhouse DIR] [--json].",
            kept="the cells done are in bounds.json",
        ),
    ),
)
BY_NAME = {row.name: row for row in HUNTS}


def hunt(name: str) -> HuntRow:
    return BY_NAME[name]


HUNT_NAMES = frozenset(BY_NAME)
# The hunts the issue bot offers (`/repromatrix NAME`): its job kinds, with the watch.
OFFERED = tuple(row.name for row in HUNTS if row.issue)
