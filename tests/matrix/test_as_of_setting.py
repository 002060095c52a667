"""`as_of:` as a combination setting: a date or a pinned package, part of the
environment request; anything else is one line naming file and key."""

from __future__ import annotations

import pytest

from repromatrix.environment import EnvRequest, IndexSettings
from repromatrix.errors import UserError
from repromatrix.matrix import load_matrix
from repromatrix.matrix.cell import CellSpec

MATRIX = """
packages: [torch, transformers, peft]
tiers:
  t:
    - {{id: a, torch: "2.13.0", transformers: "4.46.3", peft: latest, as_of: {as_of}}}
"""


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("transformers", "transformers"),
        ("2024-11-18", "2024-11-18"),
        ("'2024-11-18'", "2024-11-18"),
        ("none", None),
    ],
)
def test_as_of_reaches_the_environment_request(write_matrix, written, expected) -> None:
    combo = load_matrix(write_matrix(MATRIX.format(as_of=written))).find("a")
    request = EnvRequest.for_cell(CellSpec.of(combo), IndexSettings())
    assert request.as_of == expected
    assert request.stack == (("torch", "transformers", "peft") if expected else ())


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("peft", "needs an exact pin of peft"),
        ("accelerate", "needs an exact pin of accelerate"),
        ("'2024-13-01'", "is not an ISO date"),
        ("'a b'", "neither a date"),
    ],
)
def test_bad_as_of_is_one_line(write_matrix, written, message) -> None:
    with pytest.raises(UserError) as err:
        load_matrix(write_matrix(MATRIX.format(as_of=written)))
    text = str(err.value)
    assert "matrix.yaml" in text and "as_of" in text and message in text and "\n" not in text
