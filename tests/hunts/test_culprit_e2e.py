"""A real culprit hunt on CPU between two locks far apart (examples/culprit/):
torch 2.13.0+cpu with transformers, peft and accelerate as of 2025-06-01 and as of
2026-11-23, 41 packages apart. The probe imports TFAutoModel, which transformers 5.0
removed with TensorFlow support: the culprit is transformers (tokenizers,
huggingface-hub ... only come along because it requires them), and the release
bisect names 5.0.0 as the first bad release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repromatrix import cli

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "culprit"


def test_the_culprit_of_two_locks_far_apart(
    tmp_path: Path, shared_env_store: Path, capsys: pytest.CaptureFixture
) -> None:
    code = cli.main(
        [
            "culprit",
            "--good-lock", str(EXAMPLES / "lock-2025-06-01.txt"),
            "--bad-lock", str(EXAMPLES / "lock-2026-11-23.txt"),
            "--script", str(EXAMPLES / "tf_classes.py"),
            "--env-dir", str(shared_env_store),
            "--out", str(tmp_path),
            "--name", "tf",
        ]
    )  # fmt: skip
    verdict = capsys.readouterr().out.strip()
    assert code == 0, verdict
    assert verdict.startswith("culprit: transformers 4.52.4 -> 5.0.0")
    data = json.loads((tmp_path / "tf" / "culprit.json").read_text())
    [culprit] = data["culprits"]
    assert (culprit["package"], culprit["good"], culprit["bad"]) == (
        "transformers",
        "4.52.4",
        "5.0.0",
    )
    assert culprit["last_good"] == "4.57.6"
    assert len(data["changed"]) == 41
    assert [s["role"] for s in data["steps"][:2]] == ["good lock", "bad lock"]
    assert data["release_bisect"]["status"] == "found"
    text = (tmp_path / "tf" / "culprit.md").read_text()
    assert text.startswith("**culprit: transformers 4.52.4 -> 5.0.0")
    assert str(tmp_path) not in text and str(EXAMPLES) not in json.dumps(data)
