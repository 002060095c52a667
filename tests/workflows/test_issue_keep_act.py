"""`/repromatrix keep` under act (issue-repro.yml's keep job): a trusted keep of an
issue whose repro was approved opens a pull request with the case file, its header
carrying the approved digest, written and never run; a stranger's keep is refused.
Then the pull request, merged, is a case like any: nightly.yml runs it, known-broken
with the issue's link; closed as fixed, a plain regression case. And a kept case whose
watch flips to passing on a release is marked possibly-fixed, through post's job output.

The repro is packaging's LegacyVersion, removed in packaging 22.0 (pypa/packaging#407)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.gh_double import BOT_USER
from support.issue_act import ISSUE, REPOSITORY, RUN_LINK, Issues, watched
from support.nights import Scenario, packaging_matrix, results_of

from repromatrix.github.inert import problems
from repromatrix.github.markdown import COMMENT_LIMIT
from repromatrix.issue.keep import KEPT_MARK, case_id, registered, render_case
from repromatrix.issue.repro import code_digest, find_repro
from repromatrix.issue.state import MARKER, Kept, Observed, read_state

pytestmark = [pytest.mark.act, pytest.mark.e2e]

BODY = """\
`LegacyVersion` is gone:

```python
# repromatrix: packaging
from packaging.version import LegacyVersion

print(LegacyVersion("not-a-version"))
```
"""
FAILING = Observed(outcome="bad", versions={"packaging": "22.0"}, at="2026-11-20")


def posted_since(issues: Issues, refusal: str) -> list[str]:
    """The bot's comments but the refusal (whose last line, hidden, is the bot's own
    record of whom it refused), each inert and under GitHub's limit."""
    said = [b for b in issues.replies() if b != refusal]
    for body in said:
        assert len(body) <= COMMENT_LIMIT
        shown = (
            body.split("\n", 1)[1].rstrip().rsplit("\n", 1)[0] if body.startswith(MARKER) else body
        )
        assert problems(shown, links=set(RUN_LINK.findall(shown))) == [], body
    return said


def test_a_trusted_keep_opens_a_pull_request_that_the_nightly_then_runs(
    scenario: Scenario, wheelhouse: Path
) -> None:
    issues = Issues(scenario, wheelhouse)
    watched(issues, BODY, FAILING)  # approved, and seen failing with packaging 22.0
    repro = find_repro(BODY, "issue")
    assert repro is not None
    digest = code_digest(repro.code)

    # A stranger's keep: refused, nothing written, no token-holding job opens anything.
    refused = issues.comment("/repromatrix keep", association="NONE", issue_body=BODY)
    assert refused.returncode == 0, refused.tail()
    assert issues.gh.pulls() == [] and issues.gh.reactions() == [(issues.asked, "confused")]
    (refusal,) = issues.replies()[1:]  # after the bot comment; its hidden line: who, when
    assert "is not among the authors trusted" in refusal

    run = issues.comment("/repromatrix keep", issue_body=BODY)
    assert run.returncode == 0, run.tail()
    assert "[issue-repro/keep" in run.log  # the keep job opened it
    assert not [a for a in run.artifact_names() if a.startswith("issue-answers")]  # no run job
    (pull,) = issues.gh.pulls()
    assert pull["base"] == "main" and pull["head"].startswith(f"repromatrix/keep-{ISSUE}-")
    files = issues.gh.files(pull["head"])
    assert set(files) == {f"cases/issues/test_issue_{ISSUE}.py", "cases/known_issues.yaml"}
    case = files[f"cases/issues/test_issue_{ISSUE}.py"]
    header = case.split('"""', 2)[1]
    assert case.startswith(KEPT_MARK)
    assert (
        f"sha256    {digest}" in header
        and "issue     https://github.com/owner/repo/issues/7" in header
    )
    assert f"SHA256 = {digest!r}".replace("'", '"') in case
    assert "case: issues/test_issue_7.py::test_issue_7" in files["cases/known_issues.yaml"]
    assert f"`{digest}`" in pull["body"]
    # Acknowledged on the issue: 👍, a reply, the keep in the bot comment's memory.
    assert (issues.asked, "+1") in issues.gh.reactions()
    said = posted_since(issues, refusal)
    assert any("keep job opens the pull request" in body for body in said)
    state = read_state(issues.bot_comment())
    assert state is not None and state.kept is not None and state.kept.sha256 == digest
    assert not [
        c for c in issues.gh.comments(ISSUE) if c["user"] != BOT_USER and "Traceback" in c["body"]
    ]

    # Merged: the nightly runs it like any case, known-broken with the issue's link.
    scenario.write(
        matrix=packaging_matrix({"pk22.0": "22.0"}),
        cases={f"issues/test_issue_{ISSUE}.py": case},
        known_issues=files["cases/known_issues.yaml"],
        message="merge the keep pull request",
    )
    night = scenario.night(tier="tiny")
    assert night.returncode == 0, night.tail()
    (combination,) = results_of(night)["combinations"]
    (kept,) = [c for c in combination["cases"] if c["id"] == case_id(ISSUE)]
    assert kept["status"] == "known-broken", kept
    assert kept["known_issue"]["link"] == "https://github.com/owner/repo/issues/7"
    assert "LegacyVersion" in kept.get("message", "") + kept.get("traceback", "")

    # Closed as fixed by a maintainer: a pull request makes it a plain regression case.
    issues.gh.set_permission("maint", "maintain")
    payload = {"action": "closed", "sender": {"login": "maint", "type": "User"},
               "issue": {"number": ISSUE, "state_reason": "completed", "body": BODY},
               "repository": REPOSITORY}  # fmt: skip
    settled = issues._run("issues", payload)
    assert settled.returncode == 0, settled.tail()
    (pull,) = [p for p in issues.gh.pulls() if p["head"] == f"repromatrix/fixed-{ISSUE}"]
    files = issues.gh.files(pull["head"])
    assert 'EXPECTED = "passes"' in files[f"cases/issues/test_issue_{ISSUE}.py"]
    assert case_id(ISSUE) not in files["cases/known_issues.yaml"]


# packaging.licenses came in packaging 24.2: the watch saw it fail with 24.1.
LICENSES = """\
```python
# repromatrix: packaging
from packaging.licenses import canonicalize_license_expression

assert canonicalize_license_expression("mit") == "MIT"
```
"""


@pytest.mark.usefixtures("confinable")  # the watch runs the repro
def test_a_kept_case_whose_watch_flips_to_passing_is_marked_possibly_fixed(
    scenario: Scenario, wheelhouse: Path
) -> None:
    issues = Issues(scenario, wheelhouse, config="issue:\n  confirm: 1\n")
    repro = find_repro(LICENSES, "issue")
    assert repro is not None
    digest = code_digest(repro.code)
    url = "https://github.com/owner/repo/issues/7"
    case = render_case(issue=ISSUE, url=url, code=repro.code, sha256=digest, pins=[],
                       packages=["packaging"], expected="fails", by="maint", day="2026-11-20",
                       timeout=600)  # fmt: skip
    failing = Observed(outcome="bad", versions={"packaging": "24.1"}, at="2026-11-20")
    known = registered("[]\n", issue=ISSUE, url=url, failing={"packaging": "24.1"},
                       source="cases/known_issues.yaml")  # fmt: skip
    scenario.write(cases={f"issues/test_issue_{ISSUE}.py": case}, known_issues=known,
                   message="the kept case, merged")  # fmt: skip
    watched(issues, LICENSES, failing, kept=Kept(case=case_id(ISSUE), sha256=digest, by="maint"))

    night = issues.night()

    assert night.returncode == 0, night.tail()
    (flip,) = [b for b in issues.replies() if "repromatrix watch:" in b]
    assert "now passes" in flip and "a maintainer can close it" in flip
    assert issues.gh.issues()[0]["state"] == "open"  # nothing closed: the config says not to
    (pull,) = issues.gh.pulls()
    assert re.fullmatch(r"Issue #7: possibly fixed in packaging \d+\.\d+(\.\d+)?", pull["title"])
    registry = issues.gh.files(pull["head"])["cases/known_issues.yaml"]
    assert re.search(r'possibly_fixed: "packaging \d+\.\d+', registry), registry
    assert "[issue-repro/keep" in night.log
