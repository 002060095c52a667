"""An index for one package alone (matrix.yaml's ``package_indexes``, uv's explicit
index): the package comes from it, nothing else asks it; an index that cannot be
reached is one line naming it, the package and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.wheels import pure_wheel

from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.project_input import project_file, project_text
from repromatrix.environment.request import EnvRequest
from repromatrix.environment.simple_index import sources
from repromatrix.environment.store import EnvStore
from repromatrix.environment.uv import InstallError, uv_message
from repromatrix.matrix.pins import parse_pin

UNREACHABLE = "http://127.0.0.1:9/simple"  # nothing listens on the discard port
PACKAGE = "repromatrix-only-here"


def test_only_a_pinned_package_with_its_own_index_makes_a_project_file(tmp_path: Path) -> None:
    index = IndexSettings(package_indexes=(("torch", UNREACHABLE),))
    assert project_file(tmp_path, ["iniconfig==2.0.0", "pytest>=8"], index) is None
    path = project_file(tmp_path, ["torch==2.13.0", "iniconfig==2.0.0"], index)
    assert path is not None and path.read_text() == project_text(
        ["torch==2.13.0", "iniconfig==2.0.0"], {"torch": UNREACHABLE}
    )
    text = path.read_text()
    assert "explicit = true" in text and f'url = "{UNREACHABLE}"' in text
    assert '"torch" = { index = "repromatrix-index-1" }' in text
    assert '"iniconfig" =' not in text  # every other package: the usual indexes
    # a system pin's stub is on no index: it keeps none of its own
    assert project_file(tmp_path, ["torch==2.11.0+cu128"], index, frozenset({"torch"})) is None


def test_a_package_with_its_own_index_is_listed_from_it_alone() -> None:
    index = IndexSettings(find_links=("/wheels",), package_indexes=(("torch", UNREACHABLE),))
    assert [str(s) for s in sources(index, "Torch")] == [f"index {UNREACHABLE}"]
    assert [s.kind for s in sources(index, "peft")] == ["index", "find-links"]
    assert index.describe()["package_indexes"] == {"torch": UNREACHABLE}
    assert "package_indexes" not in IndexSettings().identity()  # others' identity unchanged


def test_an_unreachable_index_is_one_line_naming_it_the_package_and_the_fix() -> None:
    stderr = (
        "error: Request failed after 3 retries in 9.0s\n"
        "  cause: Failed to fetch: https://download.pytorch.org/whl/cpu/torch/\n"
        "  cause: error sending request for url (https://download.pytorch.org/whl/cpu/torch/)\n"
        "  cause: client error (Connect)\n  cause: dns error\n"
        "  cause: failed to lookup address information: Name or service not known\n"
    )
    assert uv_message(stderr) == (
        "cannot reach index https://download.pytorch.org/whl/cpu for torch (failed to lookup "
        "address information: Name or service not known): correct its URL, or take it out "
        "where it is set (matrix.yaml's package_indexes / extra_index_urls / index_url, or "
        "your PIP_* / UV_* variables) so that torch comes from your other indexes"
    )
    assert uv_message("error: No solution found when resolving: x") == (
        "error: No solution found when resolving: x"
    )


@pytest.fixture
def only_here(tmp_path: Path) -> str:
    """A file:// simple index holding PACKAGE 1.0 and 2.0, which no other index has."""
    page = tmp_path / "own" / "simple" / PACKAGE
    page.mkdir(parents=True)
    for version in ("1.0", "2.0"):
        pure_wheel(page, PACKAGE, version, {"repromatrix_only_here.py": f"V = {version!r}\n"})
    links = [f'<a href="{w.name}">{w.name}</a>' for w in sorted(page.glob("*.whl"))]
    (page / "index.html").write_text("\n".join(links) + "\n")
    return (tmp_path / "own" / "simple").as_uri()


@pytest.mark.e2e
@pytest.mark.parametrize("spec", ["1.0", ">=1.0,<2"])  # installed first; resolved, then synced
def test_the_package_comes_from_its_index_and_nothing_else_asks_it(
    tmp_path: Path, only_here: str, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    store = EnvStore(tmp_path / "envs")
    pins = (parse_pin(PACKAGE, spec), parse_pin("iniconfig", "2.0.0"))
    index = IndexSettings.from_environment().overlaid(
        package_indexes=((PACKAGE, only_here), ("torch", UNREACHABLE))
    )
    env = store.build(EnvRequest(pins=pins, index=index))
    assert env.resolved[PACKAGE] == "1.0" and env.resolved["iniconfig"] == "2.0.0"
    assert "pytest" in env.resolved  # the tooling came from the usual indexes

    # As an extra index, the unreachable one is asked for every package: pytest too.
    extra = IndexSettings.from_environment().overlaid(extra_index_urls=(UNREACHABLE,))
    with pytest.raises(InstallError) as failed:
        store.build(EnvRequest(pins=(parse_pin("iniconfig", "2.0.0"),), index=extra))
    assert failed.value.message.startswith(f"cannot reach index {UNREACHABLE} for ")


@pytest.mark.e2e
def test_a_pinned_package_whose_index_is_unreachable_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    index = IndexSettings.from_environment().overlaid(package_indexes=(("iniconfig", UNREACHABLE),))
    request = EnvRequest(pins=(parse_pin("iniconfig", "2.0.0"),), index=index)
    with pytest.raises(InstallError) as failed:
        EnvStore(tmp_path / "envs").build(request)
    message = failed.value.message
    assert message.startswith(f"cannot reach index {UNREACHABLE} for iniconfig (")
    assert "\n" not in message and len(message) < 400
    assert os.environ.get("UV_HTTP_RETRIES") == "0"
