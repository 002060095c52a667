"""Time travel (as_of): which packages travel, to which date, and the visible
fall-back where an index gives no upload date. No network: file:// indexes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from repromatrix.environment import EnvRequest
from repromatrix.environment.as_of import parse_as_of, time_travel, upload_time
from repromatrix.environment.indexes import IndexSettings
from repromatrix.errors import UserError
from repromatrix.matrix.pins import parse_pin

STACK = ("torch", "transformers", "peft", "accelerate")


def pins(**specs: str | None):
    return [parse_pin(name, spec) for name, spec in specs.items()]


def json_index(root: Path, name: str, files: list[tuple[str, str | None]]) -> str:
    """A PEP 691 index on disk: <root>/<name>/index.json with upload-time per file."""
    page = root / name
    page.mkdir(parents=True)
    entries = [
        {"filename": f, "url": f, "hashes": {}, **({"upload-time": t} if t else {})}
        for f, t in files
    ]
    (page / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "files": entries}))
    return root.as_uri() + "/"


def test_a_date_moves_the_floating_stack_and_nothing_pinned_exactly() -> None:
    travel = time_travel(
        "2024-11-18",
        pins(torch="2.13.0", transformers="4.46.3", peft="latest", trl=">=0.12"),
        STACK,
        IndexSettings(),
    )
    assert travel.cutoff == "2024-11-18"
    # peft (latest), trl (a range) and accelerate (in the stack, unpinned) travel;
    # exact pins resolve as today, so torch 2.13.0 keeps what it needs.
    assert set(travel.packages) == {"peft", "accelerate", "trl"}
    assert ("peft", "2024-11-18") in travel.exclusions()
    assert all(package not in ("torch", "transformers") for package, _ in travel.exclusions())


def test_a_package_means_the_upload_time_of_its_pinned_release(tmp_path: Path) -> None:
    url = json_index(
        tmp_path,
        "transformers",
        [
            ("transformers-4.46.3-py3-none-any.whl", "2024-11-18T22:12:57Z"),
            ("transformers-4.46.3.tar.gz", "2024-11-18T22:15:00Z"),
            ("transformers-4.47.0-py3-none-any.whl", "2024-12-05T10:00:00Z"),
        ],
    )
    index = IndexSettings(index_url=url)
    travel = time_travel("transformers", pins(transformers="4.46.3", peft="latest"), STACK, index)
    assert travel.cutoff == "2024-11-18T22:12:57Z"  # the release's first file
    assert "transformers 4.46.3" in travel.source
    assert dict(travel.exclusions())["peft"] == "2024-11-18T22:12:57Z"


def test_no_upload_date_falls_back_to_today_in_one_visible_line(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "transformers-4.46.3-py3-none-any.whl").write_bytes(b"")
    index = IndexSettings(find_links=(str(wheels),), no_index=True)
    travel = time_travel("transformers", pins(transformers="4.46.3", peft="latest"), STACK, index)
    assert travel.cutoff is None and travel.exclusions() == ()
    assert "no upload date for transformers 4.46.3" in travel.line()
    assert "find-links" in travel.line() and "today's stack" in travel.line()
    assert "\n" not in travel.line()
    assert travel.describe()["note"] == travel.note


def test_an_index_without_upload_time_is_said(tmp_path: Path) -> None:
    url = json_index(tmp_path, "peft", [("peft-0.13.2-py3-none-any.whl", None)])
    when, _, why = upload_time("peft", Version("0.13.2"), IndexSettings(index_url=url))
    assert when is None and "no upload-time" in why


def test_a_package_without_an_exact_pin_is_bad_input() -> None:
    with pytest.raises(UserError, match="transformers has no exact pin"):
        time_travel("transformers", pins(transformers="latest"), STACK, IndexSettings())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("none", None),
        ("None", None),
        (None, None),
        ("2024-11-18", "2024-11-18"),
        ("2024-11-18T22:12:57Z", "2024-11-18T22:12:57Z"),
        ("Transformers", "transformers"),
        ("unsloth_zoo", "unsloth-zoo"),
    ],
)
def test_parse_as_of(text: str | None, expected: str | None) -> None:
    assert parse_as_of(text) == expected


@pytest.mark.parametrize("text", ["2024-13-40", "2024-1", "a b", "peft==0.13"])
def test_parse_as_of_refuses_in_one_line(text: str) -> None:
    with pytest.raises(UserError) as err:
        parse_as_of(text)
    assert text in str(err.value) and "\n" not in str(err.value)


def test_the_exclusions_reach_uv_and_the_identity(tmp_path: Path, monkeypatch) -> None:
    from repromatrix.environment import store

    seen: list[list[str]] = []

    def fake_run(args, **kwargs):
        seen.append(list(args))

        class Done:
            returncode, stdout, stderr, timed_out = 0, "peft==0.13.2\n", "", False

        return Done()

    monkeypatch.setattr(store.procs, "run", fake_run)
    request = EnvRequest(pins=tuple(pins(peft="latest")), as_of="2024-11-18", stack=STACK)
    env_store = store.EnvStore(tmp_path)
    interp = store.Interpreter("python3", "3.11.7", "CPython")
    travel = time_travel(request.as_of, request.pins, request.stack, request.index)
    lock = env_store._resolve(
        request, interp, {}, "uv", tmp_path / "_stubs", 1e18, lambda _: None, travel.exclusions()
    )
    assert lock == "peft==0.13.2\n"
    args = seen[0]
    assert "--exclude-newer" not in args  # a global cutoff would break torch 2.13.0
    given = [args[i + 1] for i, a in enumerate(args) if a == "--exclude-newer-package"]
    assert "peft=2024-11-18" in given and "accelerate=2024-11-18" in given
    plain = store._identity(request, interp, {}, lock)
    dated = store._identity(request, interp, {}, lock, travel.exclusions())
    assert plain != dated
