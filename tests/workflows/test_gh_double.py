"""The gh test double (tests/support/gh_double.py) behaves as the gh commands the
workflows and github.client.GitHub use, records every call, and refuses what it does not know."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.gh_double import NOT_AUTHENTICATED, GhDouble


@pytest.fixture
def gh(tmp_path: Path):
    double = GhDouble(tmp_path / "state")
    bin_dir = double.install(tmp_path / "bin")

    def call(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(bin_dir / "gh"), *argv],
            capture_output=True,
            text=True,
            input=stdin,
            env={**double.env(), "PATH": "/usr/bin:/bin"},
            cwd=tmp_path,
        )

    call.double = double  # type: ignore[attr-defined]
    return call


def test_an_issue_is_opened_listed_edited_commented_closed_and_reopened(gh, tmp_path) -> None:
    (tmp_path / "body.md").write_text("first body")
    assert (
        gh("label", "create", "nightly-regression", "--force", "--color", "B60205").returncode == 0
    )
    created = gh("issue", "create", "--title", "Nightly: regressions", "--label",
                 "nightly-regression", "--body-file", "body.md")  # fmt: skip
    assert created.stdout.strip() == "https://github.com/owner/repo/issues/1"
    listed = gh("issue", "list", "--state", "open", "--label", "nightly-regression",
                "--json", "number,title")  # fmt: skip
    assert json.loads(listed.stdout) == [{"number": 1, "title": "Nightly: regressions"}]
    (tmp_path / "body.md").write_text("second body")
    assert gh("issue", "edit", "1", "--body-file", "body.md").returncode == 0
    assert gh("issue", "comment", "1", "--body-file", "-", stdin="a comment").returncode == 0
    assert gh("issue", "close", "1", "--comment", "fixed").returncode == 0
    assert json.loads(gh("issue", "list", "--json", "number").stdout) == []
    assert json.loads(gh("issue", "list", "--state", "closed", "--json", "number").stdout) == [
        {"number": 1}
    ]
    assert gh("issue", "reopen", "1").returncode == 0
    viewed = json.loads(gh("issue", "view", "1", "--json", "body,state,comments").stdout)
    assert viewed == {
        "body": "second body",
        "state": "OPEN",
        "comments": [{"body": "a comment"}, {"body": "fixed"}],
    }
    bodies = [c.get("body") for c in gh.double.calls()]
    assert bodies[1:5] == ["first body", None, "second body", "a comment"]


def test_runs_are_listed_newest_first_and_their_artifacts_downloaded(gh, tmp_path) -> None:
    results = tmp_path / "night1"
    results.mkdir()
    (results / "results.json").write_text("{}")
    gh.double.seed_run(1001, {"nightly-results": results})
    gh.double.seed_run(1002, {"nightly-results": results}, branch="other")
    gh.double.seed_run(1003, {"nightly-results": results})
    listed = gh("run", "list", "--workflow", "nightly.yml", "--branch", "main",
                "--status", "completed", "--limit", "5",
                "--json", "databaseId", "--jq", ".[].databaseId")  # fmt: skip
    assert listed.stdout.split() == ["1003", "1001"]
    assert gh("run", "download", "1001", "--name", "nightly-results", "--dir", "b").returncode == 0
    assert (tmp_path / "b" / "results.json").read_text() == "{}"
    missing = gh("run", "download", "1001", "--name", "other", "--dir", "c")
    assert missing.returncode == 1
    assert "no artifact matches" in missing.stderr


def test_a_dispatch_is_recorded_with_its_inputs(gh) -> None:
    done = gh("workflow", "run", "bisect.yml", "--ref", "main", "-f", "package=packaging",
              "-f", "good=21.3", "-f", "pins=torch=null")  # fmt: skip
    assert done.returncode == 0
    assert gh.double.dispatches() == [
        {
            "workflow": "bisect.yml",
            "ref": "main",
            "inputs": {"package": "packaging", "good": "21.3", "pins": "torch=null"},
        }
    ]


def test_faults_the_state_sets(gh) -> None:
    gh.double.set_fault(unauthenticated=True)
    refused = gh("issue", "list")
    assert (refused.returncode, refused.stderr.strip()) == (4, NOT_AUTHENTICATED)
    gh.double.set_fault(rate_limited=True)
    limited = gh("issue", "list")
    assert limited.returncode == 1
    assert "API rate limit exceeded" in limited.stderr
    gh.double.set_fault(label_forbidden=True)
    assert gh("label", "create", "x", "--force").returncode == 1
    assert gh("auth", "status").returncode == 0


def test_gh_api_answers_from_the_canned_map_else_empty(gh) -> None:
    gh.double.set_api_response("repos/owner/repo", {"default_branch": "main"})
    assert json.loads(gh("api", "repos/owner/repo").stdout) == {"default_branch": "main"}
    assert json.loads(gh("api", "user").stdout) == {}


def test_an_unknown_command_is_recorded_and_refused(gh) -> None:
    done = gh("pr", "create", "--fill")
    assert done.returncode == 1
    assert "does not know" in done.stderr
    assert gh("issue", "list", "--jq", ".[0] | .x").returncode == 1
    assert [c["argv"][0] for c in gh.double.calls()] == ["pr", "issue"]
    assert all(c["exit"] == 1 for c in gh.double.calls())
