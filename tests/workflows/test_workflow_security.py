"""What the workflows promise a repository that runs them, read from the YAML (the act
scenarios run them): a job that runs third-party code (an issue's repro, the packages of
a combination, a bisect's releases) holds no write token and keeps no credential on
disk; a job that holds one installs only what it built or verified by a digest a trusted
job emitted; every action is pinned by commit; no job touches the Actions cache, keeps a
checkout's token on disk or runs without a timeout; plans come by artifact id into a
folder of their own, the page Pages publishes too; no concurrency group can cancel a
trusted command. docs/issue-repro.md's tables name these tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from repromatrix.cli.init import FILES, scaffold

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
ACTION = REPO / ".github" / "actions" / "install-repromatrix"
# The jobs that run code repromatrix did not write.
THIRD_PARTY = {
    "issue-repro.yml": {"run"},
    "nightly-combination.yml": {"combinations"},
    "bisect.yml": {"bisect"},
    "culprit.yml": {"culprit"},
    "bounds.yml": {"bounds"},
}
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40})\s+#\s+v\S+")


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))
    return data


def _permissions(workflow: dict[str, Any], job: dict[str, Any]) -> dict[str, str]:
    chosen = job.get("permissions", workflow.get("permissions", "write-all"))
    if isinstance(chosen, str):
        return {"*": chosen}
    return dict(chosen or {})


def _jobs() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    found = []
    for path in WORKFLOWS:
        workflow = _load(path)
        for name, job in workflow["jobs"].items():
            found.append((path.name, name, workflow, job))
    return found


def _writes(workflow: dict[str, Any], job: dict[str, Any]) -> bool:
    return any("write" in str(v) for v in _permissions(workflow, job).values())


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_action_is_pinned_by_commit_with_its_tag(path: Path) -> None:
    for line in path.read_text().splitlines():
        if re.match(r"^\s*(-\s+)?uses:", line) and "uses: ./" not in line:
            assert PINNED.match(line), f"{path.name}: {line.strip()}"


def test_jobs_that_run_third_party_code_hold_no_write_token_and_keep_no_credential() -> None:
    for workflow_name, names in THIRD_PARTY.items():
        workflow = _load(REPO / ".github" / "workflows" / workflow_name)
        for name in names:
            job = workflow["jobs"][name]
            where = f"{workflow_name}:{name}"
            assert not _writes(workflow, job), f"{where} {_permissions(workflow, job)}"
            assert "secrets" not in str(job.get("env", {})), f"{workflow_name}:{name}"
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step.get("with", {}).get("persist-credentials") is False, name
    run = _load(REPO / ".github" / "workflows" / "issue-repro.yml")["jobs"]["run"]
    assert run["permissions"] == {}  # no token at all, so no checkout either
    assert not any("checkout" in str(s.get("uses", "")) for s in run["steps"])


def test_a_job_with_a_write_token_installs_only_through_the_checked_action() -> None:
    for workflow_name, name, workflow, job in _jobs():
        if not _writes(workflow, job) or "steps" not in job:
            continue
        where = f"{workflow_name}:{name}"
        for step in job["steps"]:
            assert not re.search(r"\bpip (install|wheel)\b", str(step.get("run", ""))), where
        installs = [s for s in job["steps"] if "install-repromatrix" in str(s.get("uses", ""))]
        for step in installs:
            assert step["uses"] == "./.github/actions/install-repromatrix", where
            given = step.get("with", {})
            if "plan" in given:
                # The plan's digest and artifact come from the job that wrote it.
                assert given["plan-sha256"] == "${{ needs.parse.outputs.plan_sha256 }}", where
                downloads = [
                    s
                    for s in job["steps"]
                    if "download-artifact" in str(s.get("uses", ""))
                    and s.get("with", {}).get("path") == given["plan"]
                ]
                assert downloads, where
                for download in downloads:
                    assert download["with"]["artifact-ids"] == (
                        "${{ needs.parse.outputs.plan_artifact }}"
                    ), where
                    assert "name" not in download["with"], where


def _uses_the_actions_cache(path: Path) -> bool:
    text = path.read_text()
    if "actions/cache" in text or "setup-uv" in text:
        return True
    return any(
        "setup-python" in str(step.get("uses", "")) and "cache" in step.get("with", {})
        for job in _load(path)["jobs"].values()
        for step in job.get("steps", [])
    )


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_no_job_reads_or_writes_the_actions_cache(path: Path) -> None:
    """Every workflow here runs third-party code somewhere (released packages, a repro,
    PyPI's repromatrix): a cache it saved, a later run of the branch would restore,
    perhaps in a job with a token. None touches the Actions cache."""
    assert not _uses_the_actions_cache(path), path.name


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_checkout_keeps_no_credential_on_disk(path: Path) -> None:
    """No job pushes: none keeps the checkout's token in .git/config, where the code a
    job runs or the artifact it reads could find it (gather read artifacts with it)."""
    for name, job in _load(path)["jobs"].items():
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, (
                    f"{path.name}:{name}"
                )


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_job_has_a_timeout(path: Path) -> None:
    for name, job in _load(path)["jobs"].items():
        if "uses" in job:
            continue  # a called workflow: its own jobs have theirs
        assert isinstance(job.get("timeout-minutes"), int), f"{path.name}:{name}"


def test_plans_are_downloaded_by_id_into_a_folder_of_their_own() -> None:
    """A plan (what a job acts on: issue-plan, atlas-plan) comes by the id the job that
    wrote it emitted, never by a name another job of the run could take; and no
    artifact is unpacked over the workspace (the job's own code)."""
    plans = 0
    for path in WORKFLOWS:
        for name, job in _load(path)["jobs"].items():
            for step in job.get("steps", []):
                if "download-artifact" not in str(step.get("uses", "")):
                    continue
                given = step.get("with", {})
                where = f"{path.name}:{name}"
                assert given.get("path") not in (None, ".", "./", "${{ github.workspace }}"), where
                if "plan" in str(given.get("path", "")) or "plan" in str(given.get("name", "")):
                    plans += 1
                    assert "name" not in given and given["artifact-ids"].startswith("${{"), where
    assert plans == 6  # ack, run, post, keep; atlas's fold; a combination job's planned tier
    combination = _load(REPO / ".github" / "workflows" / "nightly-combination.yml")
    (step,) = [s for s in combination["jobs"]["combinations"]["steps"]
               if "download-artifact" in str(s.get("uses", ""))]  # fmt: skip
    assert step["with"] == {
        "artifact-ids": "${{ inputs.plan_artifact }}",
        "merge-multiple": True,
        "path": "${{ runner.temp }}/plan",
    }
    cells = _load(REPO / ".github" / "workflows" / "atlas.yml")["jobs"]["cells"]["with"]
    assert cells["plan_artifact"] == "${{ needs.plan.outputs.plan_artifact }}"
    assert cells["plan_sha256"] == "${{ needs.plan.outputs.plan_sha256 }}"


def test_hunt_inputs_reach_the_command_line_as_values_never_as_options() -> None:
    for workflow in ("bisect.yml", "culprit.yml"):
        jobs = _load(REPO / ".github" / "workflows" / workflow)["jobs"]
        (hunt,) = [s["run"] for s in jobs[workflow[:-4]]["steps"] if "args=(" in s.get("run", "")]
        assert not re.search(r'--[a-z-]+ "\$', hunt), workflow  # --opt "$VALUE": an option
        assert '"--pin=$pin"' in hunt and '"--case=$CASE"' in hunt
        check = [s for s in jobs["inputs"]["steps"] if "hunt-inputs" in s.get("run", "")]
        assert check and jobs[workflow[:-4]]["needs"] == "inputs"


def test_issue_repro_has_no_concurrency_group_to_cancel_a_pending_command() -> None:
    workflow = _load(REPO / ".github" / "workflows" / "issue-repro.yml")
    assert "concurrency" not in workflow
    assert all("concurrency" not in job for job in workflow["jobs"].values())


def test_issue_repro_approves_on_a_label_and_verifies_the_plan_in_every_job() -> None:
    workflow = _load(REPO / ".github" / "workflows" / "issue-repro.yml")
    assert workflow["on"]["issues"] == {"types": ["labeled", "closed"]}
    outputs = workflow["jobs"]["parse"]["outputs"]
    assert {"plan_sha256", "plan_artifact", "issues", "jobs", "ack"} <= set(outputs)
    run_steps = workflow["jobs"]["run"]["steps"]
    (install,) = [s for s in run_steps if str(s.get("uses", "")).startswith("./")]
    assert install["uses"] == "./plan/action"  # the action's copy in the plan, checked too
    assert install["with"]["plan-sha256"] == "${{ needs.parse.outputs.plan_sha256 }}"


def test_the_atlas_page_is_made_from_data_and_deployed_by_a_job_that_runs_no_code() -> None:
    """atlas.yml: its cells are nightly-combination jobs (third-party code, no write
    token); fold holds no write token and installs repromatrix from its source only,
    the plan by the id and digest the plan job emitted; deploy (the one job with
    pages: write) checks out nothing and publishes the artifact fold uploaded by the id
    fold emitted (test_pages_deploy.py runs its step), never under act."""
    jobs = _load(REPO / ".github" / "workflows" / "atlas.yml")["jobs"]
    assert jobs["cells"]["uses"] == "./.github/workflows/nightly-combination.yml"
    assert jobs["plan"]["permissions"] == {"contents": "read", "actions": "read"}
    fold = jobs["fold"]
    assert fold["permissions"] == {"contents": "read"}
    (install,) = [s for s in fold["steps"] if "install-repromatrix" in str(s.get("uses", ""))]
    assert set(install["with"]) == {"source"}
    (plan,) = [s for s in fold["steps"] if s.get("name") == "Download the plan"]
    assert plan["with"]["artifact-ids"] == "${{ needs.plan.outputs.plan_artifact }}"
    assert "${{ needs.plan.outputs.plan_sha256 }}" in str(fold["steps"])
    (pages,) = [s for s in fold["steps"] if "upload-pages-artifact" in str(s.get("uses", ""))]
    assert pages["with"]["path"] == "page"
    assert pages["id"] == "page"
    assert fold["outputs"]["page_artifact"] == "${{ steps.page.outputs.artifact_id }}"
    deploy = jobs["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    (step,) = deploy["steps"]  # no checkout, no action: the Pages API, by the artifact's id
    assert "uses" not in step
    assert step["env"]["ARTIFACT_ID"] == "${{ needs.fold.outputs.page_artifact }}"
    assert "!github.event.act" in deploy["if"]


def test_init_scaffolds_the_action_the_workflows_use(tmp_path: Path) -> None:
    scaffold(tmp_path)
    for path in sorted(p for p in ACTION.iterdir() if p.is_file()):
        source = f"actions/install-repromatrix/{path.name}"
        assert FILES[source] == f".github/actions/install-repromatrix/{path.name}"
        assert (tmp_path / FILES[source]).read_bytes() == path.read_bytes()


def test_the_keep_job_alone_writes_contents_and_runs_nothing_an_issue_wrote() -> None:
    """issue-repro.yml's keep job: the one job of the workflow that may write contents
    and open pull requests. It checks out without keeping the token, installs
    repromatrix from the plan checked against parse's digest, and runs one command,
    which writes the repro as literals (issue/keep.py): nothing installs, imports or
    runs what an issue wrote. Its marks come from post's job outputs."""
    jobs = _load(REPO / ".github" / "workflows" / "issue-repro.yml")["jobs"]
    writers = {name for name, job in jobs.items()
               if "write" in (job.get("permissions") or {}).get("contents", "")}  # fmt: skip
    assert writers == {"keep"}
    keep = jobs["keep"]
    assert keep["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert keep["needs"] == ["parse", "post"] and keep["timeout-minutes"] <= 15
    (checkout,) = [s for s in keep["steps"] if "actions/checkout" in str(s.get("uses", ""))]
    assert checkout["with"]["persist-credentials"] is False
    (install,) = [s for s in keep["steps"] if "install-repromatrix" in str(s.get("uses", ""))]
    assert install["with"]["plan-sha256"] == "${{ needs.parse.outputs.plan_sha256 }}"
    runs = [s["run"] for s in keep["steps"] if "run" in s]
    assert runs == [
        'repromatrix issue keep --plan plan --base "$BASE" --marks "$MARKS" --run-url "$RUN_URL"'
    ]
    (step,) = [s for s in keep["steps"] if "run" in s]
    assert step["env"]["MARKS"].startswith("${{ needs.post.result == 'success' && needs.post.")
    assert jobs["post"]["outputs"]["marks"] == "${{ steps.post.outputs.marks }}"
