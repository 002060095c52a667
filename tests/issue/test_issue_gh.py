"""github.client.IssueComments through the gh test double (tests/support/gh_double.py): the REST
calls issue commands make, and what the fake GitHub keeps of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gh_double import GhDouble

from repromatrix.errors import UserError
from repromatrix.github.client import IssueComments


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[GhDouble, IssueComments]:
    double = GhDouble(tmp_path / "state")
    bin_dir = double.install(tmp_path / "bin")
    for key, value in double.env().items():
        monkeypatch.setenv(key, value)
    return double, IssueComments("owner/repo", gh=str(bin_dir / "gh"))


def test_comments_are_listed_created_edited_and_reacted_to(github) -> None:
    double, client = github
    double.add_issue(3, title="LoRA dies", body="repro here", labels=("repro",))
    double.add_issue(4, title="other")
    asked = double.add_comment(3, "/repromatrix check", login="alice")
    made = client.create(3, "answer 1")
    assert made is not None and made != asked
    client.edit(made, "answer 2")
    client.react(asked, "eyes")
    client.react(asked, "rocket")
    listed = client.comments(3)
    assert [c["body"] for c in listed] == ["/repromatrix check", "answer 2"]
    assert listed[1]["user"]["type"] == "Bot"
    assert double.reactions() == [(asked, "eyes"), (asked, "rocket")]
    assert [i["number"] for i in client.labelled("repro")] == [3]
    posted = [c for c in double.calls_to("api") if c.get("body") == "answer 1"]
    assert posted and posted[0]["argv"][1] == "repos/owner/repo/issues/3/comments"


def test_a_refused_call_is_one_line(github) -> None:
    double, client = github
    double.add_issue(3)
    theirs = double.add_comment(3, "mine")
    with pytest.raises(UserError) as raised:
        client.edit(theirs, "overwritten")
    assert "gh api issues/comments/" in str(raised.value)
    assert "Resource not accessible by integration" in str(raised.value)
    assert double.comments(3)[0]["body"] == "mine"
