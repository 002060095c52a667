"""A hunt workflow's inputs, checked before a runner is taken: each mistake is one
line naming the input (nightly/hunt_inputs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repromatrix.errors import UserError
from repromatrix.nightly.hunt_inputs import check_inputs


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    (tmp_path / "test_a.py").write_text("def test_x():\n    pass\n")
    return tmp_path


CULPRIT = {
    "good": "packaging==21.3 six==1.16.0",
    "bad": "packaging==22.0 six==1.17.0",
    "case": "test_a.py::test_x",
    "pins": "torch=null",
    "name": "pk",
    "cell": '{"id": "pk", "pins": {"torch": null, "packaging": "21.3"}}',
}
BISECT = {"package": "packaging", "good": "21.3", "bad": "22.0", "case": "test_a.py::test_x"}


def check(workflow: str, cases: Path, runner: str = '["gpu"]', **changed: str) -> str:
    base = CULPRIT if workflow == "culprit" else BISECT
    return check_inputs(
        workflow, {**base, **changed}, runner=runner, runner_source="input runner", cases=cases
    )


def test_good_inputs_give_the_runner_labels(cases: Path) -> None:
    assert json.loads(check("culprit", cases, runner='["self-hosted", "gpu"]')) == [
        "self-hosted",
        "gpu",
    ]
    assert check("bisect", cases) == '["gpu"]'


@pytest.mark.parametrize(
    ("workflow", "changed", "line"),
    [
        (
            "culprit",
            {"good": "packaging==21.3 six"},
            "input good: 'six' is not a name==version pin",
        ),
        ("culprit", {"bad": "torch>=2"}, "input bad: 'torch>=2' is not a name==version pin"),
        ("culprit", {"name": "../../x"}, "input name: '../../x' is not a folder name"),
        ("culprit", {"name": "a/b"}, "input name: 'a/b' is not a folder name"),
        (
            "culprit",
            {"case": "test_a.py::test_y"},
            "input case: 'test_a.py::test_y': test_a.py defines no 'test_y'",
        ),
        ("culprit", {"case": "test_b.py::test_x"}, "input case: 'test_b.py::test_x': no such file"),
        ("culprit", {"pins": "torch=>2"}, "input pins: --pin 'torch=>2'"),
        ("culprit", {"cell": "{not json"}, "input cell: not JSON"),
        (
            "culprit",
            {"cell": '{"pins": {"peft": "4.5x"}}'},
            "input cell: peft: '4.5x' is not a version",
        ),
        ("bisect", {"good": "latest"}, "input good: 'latest' is not a version"),
        # An option inside a list of pins, a lock line or alone: uv would read it as one.
        (
            "bisect",
            {"pins": "torch==2.13.0 --index-url=https://evil.example/simple"},
            "input pins: '--index-url=https://evil.example/simple' looks like an option",
        ),
        (
            "culprit",
            {"bad": "packaging==22.0 --extra-index-url=https://evil.example"},
            "input bad: '--extra-index-url=https://evil.example' looks like an option",
        ),
        ("bisect", {"package": "--index-url=x"}, "input package: '--index-url=x' looks like an"),
        ("culprit", {"good": "-e==1.0"}, "input good: '-e==1.0' looks like an option"),
        ("culprit", {"good": "a/b==1.0"}, "input good: 'a/b==1.0' is not a name==version pin"),
        ("bisect", {"issue": "7; rm"}, "input issue: '7; rm' is not an issue number"),
        ("bisect", {"package": "pack aging"}, "input package: 'pack aging' is not a package"),
        ("bisect", {"case": ""}, "inputs case, script: give exactly one of them"),
    ],
)
def test_each_mistake_is_one_line_naming_the_input(
    cases: Path, workflow: str, changed: dict[str, str], line: str
) -> None:
    with pytest.raises(UserError) as raised:
        check(workflow, cases, **changed)
    assert str(raised.value).startswith(line)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("runner", ["self-hosted", "[]", '["gpu", 3]', '{"a": 1}', '""'])
def test_a_runner_list_that_is_not_a_json_list_of_labels(cases: Path, runner: str) -> None:
    with pytest.raises(UserError, match=r"^input runner: .* is not a runner as JSON: a list of"):
        check("bisect", cases, runner=runner)


@pytest.mark.parametrize(
    "runner",
    ['["self-hosted", "gpu"]', '"arc-gpu-2x"', '{"group": "aws-g5-12xlarge", "labels": ["gpu"]}'],
)
def test_a_hunt_runs_on_any_runner_shape_the_nightly_does(cases: Path, runner: str) -> None:
    # An ARC scale set is one name; a runner group an object: as matrix.yaml's runner:.
    assert json.loads(check("bisect", cases, runner=runner)) == json.loads(runner)


def test_a_hunt_installs_by_name_only_the_packages_of_matrix_yaml(cases: Path) -> None:
    packages = ["torch", "Packaging", "peft"]

    def checked(**changed: str) -> str:
        return check_inputs(
            "bisect", {**BISECT, **changed}, runner='["gpu"]', runner_source="input runner",
            cases=cases, packages=packages,
        )  # fmt: skip

    assert checked(pins="torch==2.13.0 peft==0.17.1") == '["gpu"]'
    with pytest.raises(UserError) as typo:
        checked(package="packagin")
    assert str(typo.value) == (
        "input package: 'packagin' is not one of matrix.yaml's packages (packaging, peft, torch)"
    )
    with pytest.raises(UserError, match=r"^input pins: 'evil-helper' is not one of matrix.yaml"):
        checked(pins="evil-helper==1.0")
