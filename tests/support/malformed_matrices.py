"""Malformed matrix.yaml files, each with what its one-line error must name.

Every variant starts from a valid file and breaks one thing. ``where`` is the key
path (or ``:line`` for YAML syntax) the message must contain; ``problem`` a word
of the explanation. The file name (matrix.yaml) must appear in every message.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD = """\
schema: 1
packages: [torch, transformers, peft]
defaults:
  torch: "2.13.0"
"""


@dataclass(frozen=True)
class Variant:
    name: str
    text: str
    where: str
    problem: str


def tiers(body: str) -> str:
    return HEAD + "tiers:\n" + body


VARIANTS = [
    # --- YAML itself
    Variant(
        "impossible-unquoted-date",
        tiers("  smoke:\n    - {id: a, transformers: '4.46.3', as_of: 2024-13-01}\n"),
        "matrix.yaml:7",
        "is not a date",
    ),
    Variant(
        "unclosed-flow-list",
        "schema: 1\npackages: [torch, transformers\ntiers: {}\n",
        "matrix.yaml:",
        "YAML syntax error",
    ),
    Variant(
        "tab-indentation",
        tiers("  smoke:\n\t- id: a\n"),
        "matrix.yaml:",
        "YAML syntax error",
    ),
    Variant(
        "duplicate-key",
        tiers(
            '  smoke:\n    - id: a\n      transformers: "4.56.2"\n      transformers: "4.57.0"\n'
        ),
        "matrix.yaml:",
        "duplicate key 'transformers'",
    ),
    Variant("empty-file", "", "matrix.yaml", "top level must be a mapping"),
    Variant("top-level-list", "- smoke\n- nightly\n", "matrix.yaml", "top level must be a mapping"),
    # --- top-level keys and types
    Variant("no-tiers", HEAD, "tiers", "required key is missing"),
    Variant(
        "unknown-top-level-key",
        HEAD + "tier:\n  smoke: []\n",
        "tier",
        "unknown key",
    ),
    Variant(
        "schema-2",
        tiers('  s:\n    - {id: a, transformers: "4.56.2"}\n').replace("schema: 1", "schema: 2"),
        "schema",
        "1",
    ),
    Variant("tiers-is-a-list", HEAD + "tiers: [smoke, nightly]\n", "tiers", "dictionary"),
    Variant("tier-is-a-mapping", tiers("  smoke:\n    id: a\n"), "tiers.smoke", "list"),
    Variant("no-tiers-at-all", HEAD + "tiers: {}\n", "tiers", "no tiers"),
    Variant("empty-tier", tiers("  smoke: []\n"), "tiers.smoke", "empty"),
    Variant(
        "entry-is-a-string", tiers('  smoke:\n    - "4.56.2"\n'), "tiers.smoke[0]", "dictionary"
    ),
    Variant(
        "packages-listed-twice",
        tiers('  s:\n    - {id: a, transformers: "4.56.2"}\n').replace(
            "[torch, transformers, peft]", "[torch, transformers, Transformers]"
        ),
        "packages[2]",
        "twice",
    ),
    Variant(
        "unknown-tier-defaults",
        HEAD
        + "tier_defaults:\n  nightly: {device: cuda}\n"
        + 'tiers:\n  s:\n    - {id: a, peft: "0.17.1"}\n',
        "tier_defaults.nightly",
        "unknown tier",
    ),
    # --- keys of a combination
    Variant(
        "misspelt-package",
        tiers('  smoke:\n    - id: a\n      transfomers: "4.56.2"\n'),
        "tiers.smoke[0].transfomers",
        "unknown key",
    ),
    Variant(
        "misspelt-setting",
        tiers('  smoke:\n    - id: a\n      transformers: "4.56.2"\n      case_timout: 60\n'),
        "tiers.smoke[0].case_timout",
        "unknown key",
    ),
    Variant(
        "missing-id",
        tiers('  smoke:\n    - transformers: "4.56.2"\n'),
        "tiers.smoke[0].id",
        "needs an id",
    ),
    Variant(
        "pins-no-package",
        tiers("  smoke:\n    - id: a\n      torch: null\n"),
        "tiers.smoke[0]",
        "pins no package",
    ),
    # --- versions and specifiers
    Variant(
        "bad-version",
        tiers('  smoke:\n    - id: a\n      transformers: "4.5x"\n'),
        "tiers.smoke[0].transformers",
        "not a version or specifier",
    ),
    Variant(
        "bad-specifier",
        tiers('  smoke:\n    - id: a\n      transformers: ">=4.50,<<4.53"\n'),
        "tiers.smoke[0].transformers",
        "not a version or specifier",
    ),
    Variant(
        "unquoted-float-version",
        tiers("  smoke:\n    - id: a\n      transformers: 4.50\n"),
        "tiers.smoke[0].transformers",
        "is a number",
    ),
    Variant(
        "unquoted-int-version",
        tiers('  smoke:\n    - id: a\n      transformers: "4.56.2"\n      peft: 1\n'),
        "tiers.smoke[0].peft",
        "is a number",
    ),
    Variant(
        "boolean-pin",
        tiers("  smoke:\n    - id: a\n      peft: yes\n"),
        "tiers.smoke[0].peft",
        "not a version",
    ),
    Variant(
        "unquoted-python",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      python: 3.10\n'),
        "tiers.smoke[0].python",
        "is a number",
    ),
    Variant(
        "bad-direct-reference",
        tiers('  smoke:\n    - id: a\n      transformers: "git+https://"\n'),
        "tiers.smoke[0].transformers",
        "direct reference",
    ),
    # --- settings' types and values
    Variant(
        "unknown-device",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      device: tpu\n'),
        "tiers.smoke[0].device",
        "cuda",
    ),
    Variant(
        "negative-timeout",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      case_timeout: -5\n'),
        "tiers.smoke[0].case_timeout",
        "greater than 0",
    ),
    Variant(
        "timeout-as-text",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      install_timeout: soon\n'),
        "tiers.smoke[0].install_timeout",
        "number",
    ),
    Variant(
        "bad-exclude-newer",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      exclude_newer: "last week"\n'),
        "tiers.smoke[0].exclude_newer",
        "ISO date",
    ),
    Variant(
        "env-value-not-text",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      env: {OMP_NUM_THREADS: 1}\n'),
        "tiers.smoke[0].env.OMP_NUM_THREADS",
        "string",
    ),
    Variant(
        "cases-not-a-list",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      cases: 7\n'),
        "tiers.smoke[0].cases",
        "tuple",
    ),
    Variant(
        "missing-case-file",
        tiers(
            '  smoke:\n    - id: a\n      peft: "0.17.1"\n      cases: [test_missing.py::test_x]\n'
        ),
        "tiers.smoke[0].cases[0]",
        "no such file",
    ),
    # --- ids
    Variant(
        "bad-id",
        tiers('  smoke:\n    - id: "has space"\n      peft: "0.17.1"\n'),
        "tiers.smoke[0].id",
        "not a valid id",
    ),
    Variant(
        "id-is-a-number",
        tiers('  smoke:\n    - id: 7\n      peft: "0.17.1"\n'),
        "tiers.smoke[0].id",
        "not a valid id",
    ),
    Variant(
        "reserved-id",
        tiers('  smoke:\n    - id: tests\n      peft: "0.17.1"\n'),
        "tiers.smoke[0].id",
        "reserved",
    ),
    Variant(
        "duplicate-id-across-tiers",
        tiers(
            '  smoke:\n    - {id: a, peft: "0.17.1"}\n  nightly:\n    - {id: a, peft: "0.18.0"}\n'
        ),
        "tiers.nightly[0].id",
        "duplicate id 'a'",
    ),
    # --- axes, include and exclude
    Variant(
        "exclude-removes-explicit",
        tiers(
            '  smoke:\n    - {id: pinned, transformers: "4.56.2", peft: "0.17.1"}\n'
            '    - axes: {transformers: ["4.56.2", "5.23.0"], peft: ["0.17.1"]}\n'
            '      exclude: [{transformers: "4.56.2", peft: "0.17.1"}]\n'
        ),
        "tiers.smoke[0]",
        "removed by tiers.smoke[1].exclude[0]",
    ),
    Variant(
        "exclude-unknown-axis",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2"]}\n      exclude: [{peft: "0.17.1"}]\n'
        ),
        "tiers.smoke[0].exclude[0].peft",
        "not one of this entry's axes",
    ),
    Variant(
        "everything-excluded",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2"]}\n'
            '      exclude: [{transformers: "4.56.2"}]\n'
        ),
        "tiers.smoke[0]",
        "every combination of the axes is excluded",
    ),
    Variant(
        "axis-not-a-list",
        tiers('  smoke:\n    - axes: {transformers: "4.56.2"}\n'),
        "tiers.smoke[0].axes.transformers",
        "non-empty list",
    ),
    Variant(
        "id-template-unknown-field",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2", "5.23.0"]}\n'
            '      id: "tf{transfomers}"\n'
        ),
        "tiers.smoke[0].id",
        "'transfomers'",
    ),
    Variant(
        "id-template-broken",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2", "5.23.0"]}\n'
            '      id: "tf{transformers"\n'
        ),
        "tiers.smoke[0].id",
        "template",
    ),
    # --- id templates: only {package} fields
    Variant(
        "id-template-format-spec",
        tiers('  smoke:\n    - axes: {transformers: ["4.56.2"]}\n      id: "tf{transformers:d}"\n'),
        "tiers.smoke[0].id: 'tf{transformers:d}'",
        "format spec",
    ),
    Variant(
        "id-template-conversion",
        tiers('  smoke:\n    - axes: {transformers: ["4.56.2"]}\n      id: "tf{transformers!r}"\n'),
        "tiers.smoke[0].id: 'tf{transformers!r}'",
        "conversion",
    ),
    Variant(
        "id-template-positional-field",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2"]}\n      id: "tf{}-{transformers}"\n'
        ),
        "tiers.smoke[0].id",
        "not a valid id template",
    ),
    Variant(
        "id-template-attribute",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2"]}\n      id: "{transformers.real}"\n'
        ),
        "tiers.smoke[0].id",
        "'transformers.real'",
    ),
    # --- structure: keys are text, nesting is shallow, aliases do not explode
    Variant(
        "number-as-tier-name",
        tiers('  7:\n    - {id: a, peft: "0.17.1"}\n'),
        "tiers.7",
        "key 7 is not text",
    ),
    Variant(
        "boolean-as-top-level-key",
        "true: 1\n" + tiers('  smoke:\n    - {id: a, peft: "0.17.1"}\n'),
        "True",
        "is not text",
    ),
    Variant(
        "number-as-env-name",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", env: {1: x}}\n'),
        "tiers.smoke[0].env.1",
        "is not text",
    ),
    Variant(
        "list-as-key",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", ? [x, y] : z}\n'),
        "matrix.yaml:",
        "a key must be text",
    ),
    Variant(
        "nested-hundreds-deep",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", tags: ' + "[" * 300 + "]" * 300 + "}\n"),
        "tiers.smoke[0].tags",
        "nested more than 32 deep",
    ),
    Variant(
        "alias-bomb",
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n"
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)
        )
        + tiers('  smoke:\n    - {id: a, peft: "0.17.1", tags: *i}\n'),
        "matrix.yaml",
        "alias",
    ),
    # --- booleans and infinities are not numbers of seconds
    Variant(
        "boolean-timeout",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      case_timeout: true\n'),
        "tiers.smoke[0].case_timeout: True",
        "boolean",
    ),
    Variant(
        "infinite-timeout",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      install_timeout: .inf\n'),
        "tiers.smoke[0].install_timeout",
        "finite number (got inf)",
    ),
    Variant(
        "nan-timeout",
        tiers('  smoke:\n    - id: a\n      peft: "0.17.1"\n      case_timeout: .nan\n'),
        "tiers.smoke[0].case_timeout",
        "nan",
    ),
    # --- environment variables
    Variant(
        "empty-env-name",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", env: {"": x}}\n'),
        "tiers.smoke[0].env: ''",
        "not an environment variable name",
    ),
    Variant(
        "env-name-with-equals",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", env: {"A=B": x}}\n'),
        "tiers.smoke[0].env: 'A=B'",
        "not an environment variable name",
    ),
    Variant(
        "env-value-with-nul",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", env: {OMP: "1\\0"}}\n'),
        "tiers.smoke[0].env",
        "the value of OMP holds a NUL character",
    ),
    # --- tier names
    Variant(
        "empty-tier-name",
        tiers('  "":\n    - {id: a, peft: "0.17.1"}\n'),
        "tiers.",
        "'' is not a tier name",
    ),
    Variant(
        "path-like-tier-name",
        tiers('  "../smoke":\n    - {id: a, peft: "0.17.1"}\n'),
        "'../smoke'",
        "not a tier name",
    ),
    Variant(
        "tier-name-with-slash",
        tiers('  "gpu/nightly":\n    - {id: a, peft: "0.17.1"}\n'),
        "'gpu/nightly'",
        "not a tier name",
    ),
    # --- excludes and case selections
    Variant(
        "exclude-matches-nothing",
        tiers(
            '  smoke:\n    - axes: {transformers: ["4.56.2", "5.23.0"]}\n'
            '      exclude: [{transformers: "5.32.0"}]\n'
        ),
        "tiers.smoke[0].exclude[0]",
        "matches no combination of the axes (transformers: 5.32.0",
    ),
    Variant(
        "case-selection-outside-cases",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", cases: ["../matrix.yaml"]}\n'),
        "tiers.smoke[0].cases: '../matrix.yaml'",
        "outside the cases folder",
    ),
    Variant(
        "case-selection-absolute",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", cases: ["/etc/hostname"]}\n'),
        "tiers.smoke[0].cases: '/etc/hostname'",
        "outside the cases folder",
    ),
    Variant(
        "case-selection-empty",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", cases: [""]}\n'),
        "tiers.smoke[0].cases: ''",
        "empty",
    ),
    Variant(
        "case-selection-only-a-node",
        tiers('  smoke:\n    - {id: a, peft: "0.17.1", cases: ["::test_x"]}\n'),
        "tiers.smoke[0].cases: '::test_x'",
        "empty",
    ),
    Variant(
        "triple-equals-pin",
        tiers('  smoke:\n    - {id: a, transformers: "==="}\n'),
        "tiers.smoke[0].transformers: '==='",
        "not a version or specifier",
    ),
]
