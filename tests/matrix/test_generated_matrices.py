"""Generated matrix files through `repromatrix list` (in process): each one either
lists its combinations (exit 0, every id a safe name) or is refused in one line
naming the file (exit 2). Never a traceback, whatever the structure or scalars.

Two sources: documents shaped like a matrix (real keys, pins, axes, excludes,
settings) with random values swapped in anywhere, and YAML text put together from
fragments. MATRIX_EXAMPLES + TEXT_EXAMPLES documents per run.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.junk import swap_in_junk

from repromatrix.cli import main
from repromatrix.matrix import load_matrix
from repromatrix.matrix.model import ID_PATTERN
from repromatrix.redact import forget

MATRIX_EXAMPLES = 450
TEXT_EXAMPLES = 250
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

PACKAGES = ["torch", "transformers", "peft"]

# Scalars a user might write anywhere, sensible and not.
SPECS = st.sampled_from(
    [
        "4.56.2",
        "2.13.0",
        "0.17.1",
        ">=4.50,<4.53",
        "latest",
        "system",
        "git+https://github.com/o/r@main",
        "git+https://user:s3cret-pass@host/r.git",
        "===",
        "4.5x",
        "",
        " ",
        "{transformers}",
        "../x",
        "a\x00b",
        "ü",
    ]
)
GOOD_SPECS = st.sampled_from(["4.56.2", "2.13.0", "0.17.1", ">=4.50,<4.53", "latest", "system"])
# Mostly a spec that is valid, so that many documents pass.
SOME_SPEC = st.one_of(*[GOOD_SPECS] * 6, SPECS)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    SPECS,
)
KEYS = st.one_of(
    st.sampled_from(
        ["id", "axes", "exclude", "env", "cases", "case_timeout", "python", "device", *PACKAGES]
    ),
    st.text(max_size=8),
)
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(KEYS, inner, max_size=4),
    ),
    max_leaves=12,
)


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        axes = {
            p: draw(st.lists(SOME_SPEC, min_size=1, max_size=3, unique=True))
            for p in draw(st.sets(st.sampled_from(PACKAGES[1:]), min_size=1))
        }
        entry: dict[str, Any] = {"axes": axes}
        if draw(st.booleans()):
            package = next(iter(axes))
            entry["exclude"] = [{package: draw(st.one_of(st.sampled_from(axes[package]), SPECS))}]
        if draw(st.booleans()):
            entry["id"] = draw(
                st.sampled_from(["tf{transformers}", "{peft}-{transformers}", "x{transformers:d}"])
            )
    else:
        entry = {"id": draw(st.from_regex(r"[a-z][a-z0-9.-]{0,8}", fullmatch=True))}
        for package in draw(st.sets(st.sampled_from(PACKAGES), min_size=1, max_size=3)):
            entry[package] = draw(SOME_SPEC)
    for key in draw(st.sets(st.sampled_from(["env", "cases", "case_timeout", "device"]))):
        sensible = {
            "env": st.dictionaries(st.sampled_from(["DB_PASS", "OMP_NUM_THREADS"]), GOOD_SPECS),
            "cases": st.lists(st.just("test_a.py"), max_size=1),
            "case_timeout": st.floats(min_value=1, max_value=1e6),
            "device": st.just("cpu"),
        }[key]
        odd = {
            "env": st.dictionaries(st.sampled_from(["DB_PASS", "A", "", "A=B"]), SPECS),
            "cases": st.lists(st.sampled_from(["test_a.py", "", "../x", "/etc"])),
            "case_timeout": st.one_of(st.floats(), st.booleans(), st.integers()),
            "device": st.sampled_from(["cpu", "cuda", "tpu"]),
        }[key]
        entry[key] = draw(st.one_of(sensible, sensible, odd))
    return entry


@st.composite
def documents(draw: st.DrawFn) -> Any:
    doc: dict[Any, Any] = {
        "schema": 1,
        "packages": list(PACKAGES),
        "defaults": {"torch": "2.13.0"},
        "tiers": {
            draw(st.sampled_from(["smoke", "nightly"] * 5 + ["", "a/b"])): draw(
                st.lists(entries(), min_size=1, max_size=3)
            )
            for _ in range(draw(st.integers(1, 2)))
        },
    }
    # Then break it, anywhere: swap a value for junk, or add a key.
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):
        swap_in_junk(
            doc, draw(JUNK), draw(st.randoms(use_true_random=False)), max_depth=6, stop=0.3
        )
    return doc


FRAGMENTS = st.sampled_from(
    [
        "schema: 1\n",
        "packages: [torch, peft]\n",
        "tiers:\n",
        "  smoke:\n",
        "    - id: a\n",
        '      peft: "0.17.1"\n',
        "      case_timeout: true\n",
        "      env: {K: v}\n",
        "base: &b {peft: '0.17.1'}\n",
        "    - <<: *b\n",
        "      id: b\n",
        "? [a, b]\n: c\n",
        "- [[[[[[\n",
        "x: *undefined\n",
        "\t",
        "!!python/object:os.system\n",
        "'unclosed\n",
        "{]\n",
        "tiers: {s: [{id: z, peft: latest}]}\n",
        "1: 2\n",
        "null: ~\n",
    ]
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("generated")
    (root / "cases").mkdir()
    (root / "cases" / "test_a.py").write_text("def test_x():\n    pass\n")
    return root / "matrix.yaml"


def _list(matrix: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["list", "--matrix", str(matrix)])
    return code, out.getvalue(), err.getvalue()


def _exit_0_or_one_line(matrix: Path) -> None:
    code, out, err = _list(matrix)
    event(f"exit {code}")  # --hypothesis-show-statistics: how many were accepted
    if code == 0:
        assert err == ""
        for combo in load_matrix(matrix).combinations():
            assert ID_PATTERN.match(combo.id), combo.id
        assert "s3cret-pass" not in out
        return
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("repromatrix: error: ") and "matrix.yaml" in lines[0], err
    assert len(lines[0]) <= 700
    assert "s3cret-pass" not in err


@settings(max_examples=MATRIX_EXAMPLES, **SETTINGS)
@given(doc=documents())
def test_generated_documents(project: Path, doc: Any) -> None:
    project.write_text(yaml.safe_dump(doc, allow_unicode=True))
    try:
        _exit_0_or_one_line(project)
    finally:
        forget()


@settings(max_examples=TEXT_EXAMPLES, **SETTINGS)
@given(parts=st.lists(FRAGMENTS, max_size=10), tail=st.text(max_size=20))
def test_generated_text(project: Path, parts: list[str], tail: str) -> None:
    project.write_text("".join(parts) + tail, encoding="utf-8", errors="surrogatepass")
    try:
        _exit_0_or_one_line(project)
    finally:
        forget()
