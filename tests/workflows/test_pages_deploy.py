"""atlas.yml's deploy step, run as written (bash) against stand-ins for GitHub's OIDC
endpoint (curl) and Pages API (gh): it publishes the artifact fold uploaded, by the id
fold emitted, and says when the deployment fails. act cannot run it (the Pages API)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]

CURL = """#!/usr/bin/env bash
echo '{"count":1,"value":"oidc.header.signature"}'
"""
# Logs each call as JSON; a POST answers what --jq makes of a deployment, a GET the next
# status of the statuses file.
GH = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if "POST" in sys.argv:
    print("4242\\thttps://owner.github.io/repo/")
else:
    path = os.environ["GH_STATUSES"]
    statuses = open(path).read().split()
    print(statuses[0])
    open(path, "w").write(" ".join(statuses[1:]))
"""


def _deploy_script() -> str:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "atlas.yml").read_text())
    (step,) = workflow["jobs"]["deploy"]["steps"]
    return step["run"]


def _deploy(tmp_path: Path, artifact_id: str, statuses: str) -> tuple[int, str, list[list[str]]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("curl", CURL), ("gh", GH)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "statuses").write_text(statuses)
    output = tmp_path / "output"
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "ARTIFACT_ID": artifact_id,
        "GITHUB_REPOSITORY": "owner/repo",
        "GITHUB_SHA": "0" * 40,
        "GITHUB_OUTPUT": str(output),
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.example/?x=1",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token",
        "GH_LOG": str(tmp_path / "gh.log"),
        "GH_STATUSES": str(tmp_path / "statuses"),
        "POLL_SECONDS": "0",
    }
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", _deploy_script()],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    log = tmp_path / "gh.log"
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    said = done.stdout + done.stderr + (output.read_text() if output.exists() else "")
    return done.returncode, said, calls


def test_the_page_fold_uploaded_is_deployed_by_its_id(tmp_path: Path) -> None:
    code, said, calls = _deploy(tmp_path, "123", "deployment_queued deployment_in_progress succeed")
    assert code == 0, said
    create, *polls = calls
    assert create[:3] == ["api", "--method", "POST"]
    assert create[3] == "repos/owner/repo/pages/deployments"
    assert "artifact_id=123" in create and "oidc_token=oidc.header.signature" in create
    assert polls == [["api", "repos/owner/repo/pages/deployments/4242", "--jq", ".status"]] * 3
    assert "page_url=https://owner.github.io/repo/" in said
    assert "::add-mask::oidc.header.signature" in said


@pytest.mark.parametrize("status", ["deployment_failed", "deployment_content_failed"])
def test_a_failed_deployment_fails_the_job_with_its_status(tmp_path: Path, status: str) -> None:
    code, said, _ = _deploy(tmp_path, "123", f"deployment_in_progress {status}")
    assert code == 1
    assert f"::error::the Pages deployment of artifact 123 ended: {status}" in said


def test_without_fold_s_artifact_id_nothing_is_asked_of_pages(tmp_path: Path) -> None:
    code, said, calls = _deploy(tmp_path, "", "succeed")
    assert code == 1 and calls == []
    assert "::error::fold emitted no page artifact id" in said
