"""The offline dry run says why act failed, in one line with the fix: act's own log
lines (act 0.2.89, host mode), read by nightly/dry_run.act_cause."""

from __future__ import annotations

from pathlib import Path

from repromatrix.nightly.dry_run import act_cause

NO_GITHUB = """\
time="2026-11-27T11:19:50Z" level=warning msg="Couldn't get a valid docker connection"
[nightly/setup] ⭐ Run Set up job
[nightly/setup]   ✅  Success - Set up job
[nightly/setup]   ☁  git clone 'https://github.com/actions/setup-python' # ref=ece7cb06caef
[nightly/setup] Unable to clone https://github.com/actions/setup-python refs/heads/ece7cb06caef: \
Get "https://github.com/actions/setup-python/info/refs?service=git-upload-pack": dial tcp: \
lookup github.com on 10.255.255.53:53: no such host
[nightly/setup] 🏁  Job failed
Error: Get "https://github.com/actions/setup-python/info/refs?service=git-upload-pack": dial tcp
"""

A_STEP_FAILED = """\
[nightly/setup] ⭐ Run Main Install repromatrix
[nightly/setup]   | some output
[nightly/setup]   ❗  ::error::install-repromatrix: nothing to install: .github/repromatrix/ \
is not here
[nightly/setup]   ❌  Failure - Main Install repromatrix [25.161544ms]
[nightly/setup] exit status 1
[nightly/setup] 🏁  Job failed
Error: Job 'setup' failed
"""


def test_an_action_act_could_not_clone_names_it_and_the_fix() -> None:
    said = act_cause(NO_GITHUB)
    assert said == (
        "act could not clone actions/setup-python (no network); run offline with --actions "
        "DIR, a folder holding a copy of each action the workflows use (setup-python: "
        "DIR/setup-python/action.yml), or set REPROMATRIX_ACT_ACTIONS=DIR"
    )
    given = act_cause(NO_GITHUB, Path("/copies"))
    assert given is not None and given.endswith(
        "--actions /copies has no copy of it: add one as /copies/setup-python"
    )


def test_a_failed_step_is_named_with_its_error() -> None:
    assert act_cause(A_STEP_FAILED) == (
        "job setup failed at step 'Install repromatrix': install-repromatrix: nothing to "
        "install: .github/repromatrix/ is not here"
    )


def test_otherwise_act_s_last_word_or_nothing() -> None:
    assert act_cause("Error: workflow is not valid\n") == "act: workflow is not valid"
    assert act_cause("[nightly/setup] 🏁  Job succeeded\n") is None
