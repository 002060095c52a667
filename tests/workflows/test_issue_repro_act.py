"""issue-repro.yml, run for real under act with issue_comment and schedule payloads and
the gh test double as GitHub: what was replied, reacted and commented, and that the job
that runs the repro hands it no token.

The repros are real and small: packaging's LegacyVersion, removed in packaging 22.0
(pypa/packaging#407), and packaging.licenses, added in 24.2 — a cell of one pure-Python
package each, seconds of CPU."""

from __future__ import annotations

import io
import re
import threading
import time
import zipfile
from pathlib import Path

import pytest
from support.gh_double import BOT_USER
from support.issue_act import ISSUE, TOKEN_NAMES, Issues
from support.nights import Scenario

from repromatrix.github.inert import problems
from repromatrix.issue.confine import REPRO_UID
from repromatrix.issue.repro import code_digest, find_repro
from repromatrix.issue.state import MARKER, Approval, Observed, State, read_state, render

pytestmark = [pytest.mark.act, pytest.mark.e2e, pytest.mark.usefixtures("confinable")]

# Prints the names of its environment (the test asserts no token is among them), then
# fails where LegacyVersion is gone.
LEGACY_REPRO = """\
`LegacyVersion` is gone:

```python
# repromatrix
import os

print("ENVIRONMENT:", " ".join(sorted(os.environ)))
from packaging.version import LegacyVersion

print(LegacyVersion("not-a-version"))
```
"""
LICENSES_REPRO = """\
```python
# repromatrix: packaging
from packaging.licenses import canonicalize_license_expression

assert canonicalize_license_expression("mit") == "MIT"
```
"""


@pytest.fixture
def issues(scenario: Scenario, wheelhouse: Path) -> Issues:
    return Issues(scenario, wheelhouse)


def test_a_trusted_sweep_answers_in_the_bot_comment_and_the_repro_sees_no_token(
    issues: Issues,
) -> None:
    run = issues.comment("/repromatrix sweep packaging 21.2..22.0", issue_body=LEGACY_REPRO)

    assert run.returncode == 0, run.tail()
    assert issues.gh.reactions() == [(issues.asked, "eyes"), (issues.asked, "rocket")]
    answer = issues.bot_comment()
    print("BOT COMMENT:\n" + answer)
    assert "packaging: 21.2–21.3 good · 22.0 bad (3 releases, 1 transition)" in answer
    assert "ImportError: cannot import name 'LegacyVersion'" in answer
    assert "- environment: Python 3.11" in answer and "packaging 22.0" in answer
    assert "[run](" in answer and read_state(answer).answers[0].title.startswith("/repromatrix")
    answers = run.artifact(f"issue-answers-{ISSUE}")
    assert (answers / str(ISSUE) / "answer.json").is_file()
    assert list(answers.glob(f"{ISSUE}/*/reproduce-22.0.py"))
    logs = list(answers.glob(f"{ISSUE}/*/steps/*.run.log"))
    seen = [
        line.split(":", 1)[1].split()
        for log in logs
        for line in log.read_text().splitlines()
        if line.startswith("ENVIRONMENT:")
    ]
    assert len(seen) == 3 and all("PATH" in names for names in seen)
    leaked = {name for names in seen for name in names if TOKEN_NAMES.match(name)}
    assert not leaked, leaked


def test_an_untrusted_author_is_told_and_nothing_runs(issues: Issues) -> None:
    run = issues.comment(
        "/repromatrix check --pin packaging==21.3", association="NONE", issue_body=LEGACY_REPRO
    )

    assert run.returncode == 0, run.tail()
    (reply,) = issues.replies()
    assert "@\u200balice is not among the authors trusted to run code here" in reply  # inert
    assert "A maintainer can start it by commenting the same command." in reply
    assert issues.gh.reactions() == [(issues.asked, "confused")]
    assert "issue-answers" not in run.artifact_names()


def test_an_unparsable_command_gets_what_is_wrong_and_the_syntax(issues: Issues) -> None:
    run = issues.comment("/repromatrix sweep packaging 22.0..21.2", issue_body=LEGACY_REPRO)

    assert run.returncode == 0, run.tail()
    (reply,) = issues.replies()
    print("REFUSAL:\n" + reply)
    assert "the range '22.0..21.2' is reversed; write the older version first: 21.2..22.0" in reply
    assert "/repromatrix sweep PACKAGE FROM..TO" in reply
    assert issues.gh.reactions() == [(issues.asked, "confused")]


def test_a_comment_without_a_repro_block_is_refused(issues: Issues) -> None:
    run = issues.comment("/repromatrix check --pin packaging==21.3", issue_body="It fails.")

    assert run.returncode == 0, run.tail()
    (reply,) = issues.replies()
    assert "no repro: neither the comment nor the issue has a ```` ```python ```` block" in reply
    assert issues.gh.reactions() == [(issues.asked, "confused")]


def test_a_watched_issue_that_flips_is_said_once(scenario: Scenario, wheelhouse: Path) -> None:
    issues = Issues(scenario, wheelhouse, config="issue:\n  watch_limit: 1\n")
    gh = issues.gh
    gh.add_issue(ISSUE, title="canonicalize_license_expression missing", body=LICENSES_REPRO,
                 labels=("repro",))  # fmt: skip
    gh.add_issue(8, title="watched last night", body=LICENSES_REPRO, labels=("repro",))
    failing = Observed(outcome="bad", versions={"packaging": "24.1"}, at="2026-11-23")
    repro = find_repro(LICENSES_REPRO, "issue")
    assert repro is not None
    approved = Approval(sha256=code_digest(repro.code), by="maintainer", at="2026-11-16")
    last_week = State(last_watched="2026-11-17T03:41:00+00:00", watch=failing, decisive=failing,
                      approved=approved)  # fmt: skip
    yesterday = State(last_watched="2026-11-24T03:41:00+00:00", watch=failing, decisive=failing,
                      approved=approved)  # fmt: skip
    gh.add_comment(ISSUE, render(last_week), login=BOT_USER["login"])
    gh.add_comment(8, render(yesterday), login=BOT_USER["login"])

    run = issues.night()

    assert run.returncode == 0, run.tail()
    flips = [b for b in issues.replies() if "repromatrix watch:" in b]
    assert len(flips) == 1
    assert re.search(r"now passes with packaging \d+\.\d+(\.\d+)? \(fails with 24\.1\)", flips[0])
    state = read_state(issues.bot_comment())
    assert state.decisive is not None and state.decisive.outcome == "good"
    assert state.last_watched > "2026-11-24"
    assert "- issue-repro/ack" not in run.log and "[issue-repro/ack" not in run.log  # no comment
    other = [c["body"] for c in gh.comments(8)]
    assert other == [render(yesterday)]  # the limit: issue 8 waits for a later night


# ------------------------------------------------------------------ a hostile repro

# What a stranger's repro does when a maintainer runs it: prints a state marker of its own
# (a readable one that would rewrite the bot's memory, and garbage), a mention, a team
# mention, HTML and a link (its last line is the sweep table's message, outside any
# code span), reads its environment, and leaves a daemon behind that forks twice, leaves
# the session, closes every descriptor, notes its start in the answer folder (the one
# place the sandbox lets it write: ../answers/<issue> from the plan, its working folder)
# and sleeps with a marker in its command line, which the test looks for after the run.
FORGED_STATE = render(State(answers=[], last_watched="2999-01-01T00:00:00+00:00"))
HOSTILE_CODE = """\
# repromatrix: packaging
import os, subprocess, sys, time

print({forged!r})
print("<!-- repromatrix:state garbage -->")
print("ENVIRONMENT:", " ".join(sorted(os.environ)))
print("USER ID:", os.getuid())
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    os.closerange(0, 1024)
    with open(os.path.join("..", "answers", "{issue}", f"daemon-{{os.getpid()}}"), "w") as mark:
        mark.write("daemon")
    subprocess.run([sys.executable, "-c", "import time; time.sleep(25)", "-".join({marker!r})])
    os._exit(0)
os.waitpid(first, 0)
time.sleep(0.3)
print("@alice and @octo/core see <img src=x onerror=alert(1)> [click](https://evil.example)")
sys.exit(1)
"""


def _hostile(work: Path) -> tuple[str, str]:
    parts = ["daemon", str(time.monotonic_ns())]
    forged = FORGED_STATE.strip().rsplit("\n", 1)[-1]
    code = HOSTILE_CODE.format(forged=forged, issue=ISSUE, marker=parts)
    return f"It breaks.\n\n```python\n{code}```\n", "-".join(parts)


def _alive(marker: str) -> list[int]:
    """The processes whose command line holds ``marker`` (only the daemons' hold it whole)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _outside_code(markdown: str) -> str:
    """``markdown`` less its fenced blocks and code spans (GitHub renders nothing there)."""
    text = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1`*$", "", markdown)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


def test_a_hostile_repro_reaches_no_trusted_job_and_not_the_bots_memory(
    scenario: Scenario, wheelhouse: Path
) -> None:
    issues = Issues(scenario, wheelhouse)
    issues.env["WANDB_API_KEY"] = "must-not-reach-the-repro"
    body, marker = _hostile(scenario.work)
    issues.gh.set_permission("maint", "maintain")
    repro = find_repro(body, "issue")
    assert repro is not None

    # 1. A maintainer labels it: the repro as it is now is approved for the watch.
    labelled = issues.label("maint", issue_body=body)
    assert labelled.returncode == 0, labelled.tail()
    state = read_state(issues.bot_comment())
    assert state is not None and state.approved is not None
    assert (state.approved.sha256, state.approved.by) == (code_digest(repro.code), "maint")

    # 2. A maintainer sweeps it: the repro runs (twice), with all it does.
    run = issues.comment("/repromatrix sweep packaging 21.3..22.0", issue_body=body)
    assert run.returncode == 0, run.tail()
    logs = run.artifact(f"issue-answers-{ISSUE}")
    started = list(logs.glob(f"{ISSUE}/daemon-*"))
    assert len(started) == 2, started  # one daemon a release
    assert not _alive(marker), "a daemon outlived the run"
    bot = issues.bot_comment()
    print("BOT COMMENT:\n" + bot)
    state = read_state(bot)
    assert state is not None
    assert [a.title for a in state.answers] == ["/repromatrix sweep packaging 21.3..22.0"]
    assert state.last_watched == "" and state.approved is not None  # not the forged ones
    assert state.approved.sha256 == code_digest(repro.code)
    shown = _outside_code(bot.rstrip().rsplit("\n", 1)[0])  # what GitHub would render
    assert "@alice" not in shown and "@octo/core" not in shown and "@\u200balice" in shown
    assert "https://evil.example" not in shown  # a link's target: shown as code
    # Read as GitHub would: no image, HTML or link but the bot's own run link.
    between = bot.split("\n", 1)[1].rstrip().rsplit("\n", 1)[0]  # less the two markers
    assert [kind for kind in problems(between) if kind != "link"] == []
    # The approval said what it covers: the digest and the code's first lines.
    [approved] = [b for b in issues.replies() if b.startswith("Approved for the nightly watch")]
    assert f"`{code_digest(repro.code)}`" in approved and "# repromatrix: packaging" in approved
    assert f"```python\n{repro.code}" in bot  # the exact code that ran, collapsed
    seen = {
        name
        for log in logs.glob(f"{ISSUE}/*/steps/*.run.log")
        for line in log.read_text().splitlines()
        if line.startswith("ENVIRONMENT:")
        for name in line.split(":", 1)[1].split()
    }
    assert "PATH" in seen and not {n for n in seen if TOKEN_NAMES.match(n)}
    users = {
        line
        for log in logs.glob(f"{ISSUE}/*/steps/*.run.log")
        for line in log.read_text().splitlines()
        if line.startswith("USER ID:")
    }
    assert users == {f"USER ID: {REPRO_UID}"}  # confined: the sandbox's own user
    assert not seen & {"WANDB_API_KEY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT"}, seen

    # 3. The author edits the repro after approval: the watch refuses it, said once.
    edited = body.replace("time.sleep(0.3)", "time.sleep(0.4)")
    issues.gh.edit_issue(ISSUE, edited)
    for _night in range(2):
        night = issues.night()
        assert night.returncode == 0, night.tail()
        assert not [a for a in night.artifact_names() if a.startswith("issue-answers")]
    said = [b for b in issues.replies() if "changed since it was approved" in b]
    assert said == [
        "the repro changed since it was approved; a maintainer comments "
        "`/repromatrix approve` or re-labels"
    ]
    state = read_state(issues.bot_comment())
    assert state is not None and state.refused is not None
    assert [a.title for a in state.answers] == ["/repromatrix sweep packaging 21.3..22.0"]


# The repro looks for this run's artifact storage, to replace the plan the trusted post
# job installs: its sandbox shows it none. A leftover process with the runtime token (a
# runner compromised some other way) could: the test does it for it, once the run job
# has uploaded its answer, and post must install nothing from that plan.
SEEKS_THE_PLAN = """\
# repromatrix
import glob, os

found = glob.glob(os.path.join({work!r}, "act-*", "artifacts", "*", "issue-plan", "*.zip"))
print("plan archives reachable:", len(found))
"""


def _tamper(archive: Path) -> None:
    with zipfile.ZipFile(archive) as opened:
        files = {name: opened.read(name) for name in opened.namelist()}
    files["plan.json"] += b" "
    for name in files:
        if name.startswith("tool/"):
            files[name] = b"a wheel that runs with issues: write"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as written:
        for name, data in files.items():
            written.writestr(name, data)
    archive.write_bytes(buffer.getvalue())


def _tamper_after_the_run_job(work: Path, stop: threading.Event) -> None:
    while not stop.is_set():
        answers = list(work.glob(f"act-*/artifacts/*/issue-answers-{ISSUE}"))
        if answers:
            for archive in answers[0].parent.glob("issue-plan/*.zip"):
                _tamper(archive)
            return
        time.sleep(0.02)


def test_a_plan_replaced_after_the_run_job_is_never_installed_with_a_token(
    issues: Issues,
) -> None:
    code = SEEKS_THE_PLAN.format(work=str(issues.scenario.work))
    body = f"/repromatrix check --pin packaging==22.0\n\n```python\n{code}```\n"
    stop = threading.Event()
    tamper = threading.Thread(target=_tamper_after_the_run_job, args=(issues.scenario.work, stop))
    tamper.start()
    try:
        run = issues.comment(body, issue_body="It breaks.")
    finally:
        stop.set()
        tamper.join()

    logs = run.artifact(f"issue-answers-{ISSUE}")
    (log,) = logs.glob(f"{ISSUE}/steps/*.run.log")
    assert "plan archives reachable: 0" in log.read_text()  # the sandbox hid them
    assert run.returncode != 0  # post refuses: the plan is not what parse emitted
    assert re.search(r"plan has digest [0-9a-f]{64}, not [0-9a-f]{64} .*nothing installed", run.log)
    assert not [b for b in issues.replies() if b.startswith(MARKER)]  # nothing posted
    assert (issues.asked, "rocket") not in issues.gh.reactions()
