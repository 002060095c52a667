from __future__ import annotations

import pytest

from repromatrix.errors import UserError
from repromatrix.matrix import load_matrix
from repromatrix.matrix.model import DEFAULT_CASE_TIMEOUT
from repromatrix.matrix.pins import PinKind

BASE = """\
schema: 1
packages: [torch, transformers, peft]
defaults:
  torch: "2.13.0"
  env: {A: "1"}
tier_defaults:
  nightly: {device: cuda, torch: system, env: {B: "2"}}
tiers:
  smoke:
    - id: tf4.52
      transformers: "4.52.4"
      peft: "0.15.2"
      tags: [seed]
    - axes:
        transformers: ["4.56.2", "5.23.0"]
        peft: ["0.17.1", "0.21.2"]
      exclude:
        - {transformers: "5.23.0", peft: "0.17.1"}
      id: "tf{transformers}-peft{peft}"
  nightly:
    - id: gpu-latest
      transformers: latest
      peft: null
      env: {A: "3"}
"""


def test_tiers_expand_in_order_with_axes_and_excludes(write_matrix):
    matrix = load_matrix(write_matrix(BASE))
    assert [c.id for c in matrix.tier("smoke")] == [
        "tf4.52",
        "tf4.56.2-peft0.17.1",
        "tf4.56.2-peft0.21.2",
        "tf5.23.0-peft0.21.2",
    ]
    assert matrix.packages == ("torch", "transformers", "peft")


def test_settings_merge_defaults_then_tier_then_entry(write_matrix):
    matrix = load_matrix(write_matrix(BASE))
    smoke = matrix.find("tf4.52")
    assert smoke.requested() == {"torch": "2.13.0", "transformers": "4.52.4", "peft": "0.15.2"}
    assert smoke.device == "cpu"
    assert dict(smoke.env) == {"A": "1"}
    assert smoke.tags == ("seed",)
    assert smoke.case_timeout == DEFAULT_CASE_TIMEOUT

    gpu = matrix.find("gpu-latest")
    assert gpu.device == "cuda"
    assert gpu.pin("torch").kind is PinKind.SYSTEM
    assert gpu.pin("peft").kind is PinKind.ABSENT
    assert gpu.pin("transformers").kind is PinKind.LATEST
    assert dict(gpu.env) == {"A": "3", "B": "2"}  # env merges by variable, entry wins


def test_pins_follow_the_declared_package_order(write_matrix):
    path = write_matrix(
        """\
        packages: [peft, torch]
        tiers:
          t:
            - {id: one, torch: "2.13.0", peft: "0.15.2"}
        """
    )
    assert list(load_matrix(path).find("one").requested()) == ["peft", "torch"]


def test_default_id_template_names_every_axis(write_matrix):
    path = write_matrix(
        """\
        packages: [transformers, peft]
        tiers:
          t:
            - axes: {transformers: [">=4.50,<4.53", latest], peft: ["0.15.2"]}
        """
    )
    ids = [c.id for c in load_matrix(path).tier("t")]
    assert ids == ["transformers4.50_4.53-peft0.15.2", "transformerslatest-peft0.15.2"]


def test_default_packages_cover_the_stack(write_matrix):
    path = write_matrix('tiers: {t: [{id: a, unsloth_zoo: "2025.11.3", torch: "2.13.0"}]}')
    assert load_matrix(path).find("a").requested() == {
        "torch": "2.13.0",
        "unsloth-zoo": "2025.11.3",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tiers: {smoke: [{id: a, torch: '2.13.0'}, {id: b, torch: '2.13.0'},"
            " {id: c, transformers: '4.5x'}]}",
            "matrix.yaml: tiers.smoke[2].transformers: '4.5x' is not a version or specifier",
        ),
        (
            "tiers: {smoke: [{id: a, transfomers: '4.52.4'}]}",
            "matrix.yaml: tiers.smoke[0].transfomers: unknown key (neither a setting nor a"
            " package listed under 'packages')",
        ),
        (
            "tiers: {smoke: [{id: a, torch: 2.13}]}",
            "matrix.yaml: tiers.smoke[0].torch: 2.13 is a number; quote it: '2.13'",
        ),
        # The hint quotes what was written, not the number YAML made of it.
        (
            "tiers: {smoke: [{id: a, transformers: 4.50}]}",
            "matrix.yaml: tiers.smoke[0].transformers: 4.50 is a number "
            "(YAML reads it as 4.5); quote it: '4.50'",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '2.13.0', python: 3.10}]}",
            "matrix.yaml: tiers.smoke[0].python: 3.10 is a number "
            "(YAML reads it as 3.1); quote it: '3.10'",
        ),
        (
            "tiers: {smoke: []}",
            "matrix.yaml: tiers.smoke: tier is empty",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '1'}], other: [{id: a, torch: '2'}]}",
            "matrix.yaml: tiers.other[0].id: duplicate id 'a' (also at tiers.smoke[0])",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '1', peft: '0.15.2'},"
            " {axes: {torch: ['1', '2']}, exclude: [{torch: '1'}]}]}",
            "matrix.yaml: tiers.smoke[0]: explicit combination 'a' is removed by"
            " tiers.smoke[1].exclude[0]",
        ),
        (
            "tiers: {smoke: [{axes: {torch: ['1']}, exclude: [{torch: '1'}]}]}",
            "matrix.yaml: tiers.smoke[0]: every combination of the axes is excluded",
        ),
        (
            "tiers: {smoke: [{axes: {torch: ['1']}, exclude: [{peft: '1'}]}]}",
            "matrix.yaml: tiers.smoke[0].exclude[0].peft: not one of this entry's axes",
        ),
        (
            "tiers: {smoke: [{axes: {torch: ['1', '2'], peft: ['1']}, id: 'x{torch}'}]}",
            "matrix.yaml: tiers.smoke[0].id: 'x{torch}' must name every axis (torch, peft) or"
            " ids would repeat",
        ),
        (
            "tiers: {smoke: [{torch: '1'}]}",
            "matrix.yaml: tiers.smoke[0].id: an explicit combination needs an id",
        ),
        (
            "tiers: {smoke: [{id: 'has space', torch: '1'}]}",
            "matrix.yaml: tiers.smoke[0].id: 'has space' is not a valid id (letters, digits,"
            " '.', '_', '+', '-'; starting with a letter or digit)",
        ),
        (
            "tiers: {smoke: [{id: tests, torch: '1'}]}",
            "matrix.yaml: tiers.smoke[0].id: 'tests' is reserved for a nox session",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '1', device: gpu}]}",
            "matrix.yaml: tiers.smoke[0].device: Input should be 'cpu' or 'cuda' (got 'gpu')",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '1', case_timeout: -1}]}",
            "matrix.yaml: tiers.smoke[0].case_timeout: Input should be greater than 0 (got -1)",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '1', exclude_newer: yesterday}]}",
            "matrix.yaml: tiers.smoke[0].exclude_newer: 'yesterday' is not an ISO date"
            " (2025-11-15) or datetime",
        ),
        (
            "tier_defaults: {nightly: {device: cuda}}\ntiers: {smoke: [{id: a, torch: '1'}]}",
            "matrix.yaml: tier_defaults.nightly: unknown tier (not under 'tiers')",
        ),
        (
            "schema: 2\ntiers: {smoke: [{id: a, torch: '1'}]}",
            "matrix.yaml: schema: Input should be 1 (got 2)",
        ),
        (
            "tiers: {smoke: [{id: a, torch: '1'}]}\ntiers_typo: {}",
            "matrix.yaml: tiers_typo: unknown key",
        ),
        (
            "packages: [torch]",
            "matrix.yaml: tiers: required key is missing",
        ),
        (
            "tiers: {smoke: [{id: a, peft: null}]}",
            "matrix.yaml: tiers.smoke[0]: combination 'a' pins no package",
        ),
        (
            "tiers:\n  smoke:\n    - id: a\n      torch: '1'\n      torch: '2'\n",
            "matrix.yaml:5: YAML syntax error: duplicate key 'torch'",
        ),
        (
            "tiers:\n  smoke: [\n    {id: a\n",
            "matrix.yaml:4: YAML syntax error: expected ',' or '}', but got '<stream end>'",
        ),
        ("- just\n- a list\n", "matrix.yaml: the top level must be a mapping with a 'tiers' key"),
    ],
)
def test_each_mistake_is_one_line_naming_file_key_and_value(write_matrix, text, message):
    with pytest.raises(UserError) as err:
        load_matrix(write_matrix(text))
    assert str(err.value) == message
    assert "\n" not in str(err.value)


def test_unknown_tier_lists_the_known_ones(write_matrix):
    matrix = load_matrix(write_matrix(BASE))
    with pytest.raises(UserError, match=r"tiers\.gpu: unknown tier \(known: smoke, nightly\)"):
        matrix.tier("gpu")


def test_missing_file_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match="no such matrix file"):
        load_matrix(tmp_path / "nope.yaml")


def test_the_repository_matrix_is_valid(repo_root):
    matrix = load_matrix(repo_root / "matrix.yaml")
    smoke = matrix.tier("smoke")
    assert len(smoke) >= 3
    assert all(c.device == "cpu" and c.requested()["torch"] == "2.13.0" for c in smoke)
