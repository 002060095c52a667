"""A real bisect on CPU: transformers releases with torch 2.13.0 pinned.

The change bisected: transformers' ``gradient_checkpointing_enable()`` defaulted to
reentrant checkpointing up to 4.57.x, so with frozen input embeddings (the LoRA
situation) the checkpointed layers got no gradient; 5.0.0 made non-reentrant the
default. examples/bisect/checkpointing_gradients.py measures it (exit 0 when the
layers get a gradient). Verified by running it: 4.57.5 and 4.57.6 exit 1, 5.0.0 and
5.1.0 exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repromatrix import cli

pytestmark = pytest.mark.e2e

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "bisect" / "checkpointing_gradients.py"


def test_bisect_finds_the_release_that_fixed_it(
    tmp_path: Path, shared_env_store: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "bisect"
    code = cli.main(
        [
            "bisect",
            "--package", "transformers",
            "--bad", "4.57.5",
            "--good", "5.1.0",
            "--find", "first-good",
            "--pin", "torch==2.13.0",
            "--script", str(SCRIPT),
            "--env-dir", str(shared_env_store),
            "--out", str(out),
        ]
    )  # fmt: skip
    verdict = capsys.readouterr().out.strip()
    assert code == 0, verdict
    assert verdict.startswith("first good: transformers 5.0.0 (last bad: 4.57.6), ")
    data = json.loads((out / "transformers-5.1.0-4.57.5" / "bisect.json").read_text())
    assert (data["first_good"], data["last_bad"]) == ("5.0.0", "4.57.6")
    assert data["candidates"] == ["4.57.5", "4.57.6", "5.0.0", "5.1.0"]
    assert len(data["steps"]) <= 4  # ceil(log2(4)) + 2
    for step in data["steps"]:
        assert step["installed"] == step["version"], "each step ran the version it names"
    assert data["environment"]["resolved"]["torch"].startswith("2.13.0")
    assert data["repository"] == "https://github.com/huggingface/transformers"
    text = (out / "transformers-5.1.0-4.57.5" / "bisect.md").read_text()
    assert "https://pypi.org/project/transformers/5.0.0/" in text
    assert "https://github.com/huggingface/transformers/releases/tag/v5.0.0" in text


@pytest.mark.parametrize(("version", "code"), [("4.57.6", 1), ("5.0.0", 0)])
def test_check_gives_git_bisect_exit_codes(
    shared_env_store: Path, capsys: pytest.CaptureFixture, version: str, code: int
) -> None:
    args = ["check", "--script", str(SCRIPT), "--env-dir", str(shared_env_store)]
    args += ["--pin", "torch==2.13.0", "--pin", f"transformers=={version}"]
    assert cli.main(args) == code
    assert capsys.readouterr().out.startswith("good: " if code == 0 else "bad: ")
