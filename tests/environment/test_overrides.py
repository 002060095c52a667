"""`overrides:` in matrix.yaml: requirements that replace what packages ask for (uv --override)."""

from __future__ import annotations

from pathlib import Path

import pytest

from repromatrix.environment import store as environment
from repromatrix.environment.identity import identity_document
from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.store import EnvStore
from repromatrix.environment.uv import Interpreter
from repromatrix.errors import UserError
from repromatrix.matrix import load_matrix
from repromatrix.matrix.cell import CellSpec
from repromatrix.procs import Completed

MATRIX = """\
schema: 1
packages: [torch, unsloth]
defaults: {torch: "2.13.0"}
tiers:
  cpu:
    - id: plain
      unsloth: "2026.10.9"
    - id: relaxed
      unsloth: "2026.10.9"
      overrides: ["certifi>=2026.1"]
"""


def test_overrides_reach_the_combination(write_matrix):
    matrix = load_matrix(write_matrix(MATRIX))
    assert matrix.find("relaxed").overrides == ("certifi>=2026.1",)
    assert matrix.find("plain").overrides == ()
    request = EnvRequest.for_cell(CellSpec.of(matrix.find("relaxed")), IndexSettings())
    assert request.overrides == ("certifi>=2026.1",)


def test_a_bad_override_is_one_line_naming_it(write_matrix):
    path = write_matrix(MATRIX.replace('"certifi>=2026.1"', '"certifi >>= 1"'))
    with pytest.raises(UserError, match=r"tiers\.cpu\[1\]\.overrides.*'certifi >>= 1'"):
        load_matrix(path)


def test_overrides_are_passed_to_uv_compile_and_change_the_identity(tmp_path, monkeypatch):
    seen: list[list[str]] = []

    def fake_run(cmd, **_kwargs):
        seen.append(list(cmd))
        return Completed(0, "certifi==2026.10.18\n", "", 0.1)

    monkeypatch.setattr(environment.procs, "run", fake_run)
    interpreter = Interpreter("python3", "3.11.9", "CPython")
    request = EnvRequest(pins=(), overrides=("certifi>=2026.1",))
    lock = EnvStore(tmp_path)._resolve(
        request, interpreter, {}, "uv", tmp_path / "_stubs", float("inf"), lambda _: None
    )
    assert lock == "certifi==2026.10.18\n"
    args = seen[0]
    override_file = Path(args[args.index("--override") + 1])
    assert override_file.read_text() == "certifi>=2026.1\n"

    plain = identity_document(EnvRequest(pins=()), interpreter, {}, lock)
    relaxed = identity_document(request, interpreter, {}, lock)
    assert "overrides" not in plain  # identities of existing environments do not move
    assert relaxed["overrides"] == ["certifi>=2026.1"]
