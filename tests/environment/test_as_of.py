"""Time travel (as_of): which packages travel, to which date, and the visible
fall-back where an index gives no upload date. No network: file:// indexes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from repromatrix.environment import EnvRequest
from repromatrix.environment.as_of import (
    TimeTravel,
    _closure,
    before_first_release,
    keep_what_newer_pins_need,
    parse_as_of,
    time_travel,
    upload_time,
)
from repromatrix.environment.indexes import IndexSettings
from repromatrix.environment.uv import uv_binary
from repromatrix.errors import UserError
from repromatrix.matrix import DEFAULT_PACKAGES
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
    assert {"peft", "accelerate", "trl"} <= set(travel.packages)
    assert not {"torch", "transformers"} & set(travel.packages)
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
    from repromatrix.environment import identity, store
    from repromatrix.environment.uv import Interpreter

    seen: list[list[str]] = []

    def fake_run(args, **kwargs):
        seen.append(list(args))

        class Done:
            returncode, stdout, stderr, timed_out = 0, "peft==0.13.2\n", "", False

        return Done()

    monkeypatch.setattr(store.procs, "run", fake_run)
    request = EnvRequest(pins=tuple(pins(peft="latest")), as_of="2024-11-18", stack=STACK)
    env_store = store.EnvStore(tmp_path)
    interp = Interpreter("python3", "3.11.7", "CPython")
    travel = time_travel(request.as_of, request.pins, request.stack, request.index)
    lock = env_store._resolve(
        request, interp, {}, "uv", tmp_path / "_stubs", 1e18, lambda _: None, travel.exclusions()
    )
    assert lock == "peft==0.13.2\n"
    args = seen[0]
    assert "--exclude-newer" not in args  # a global cutoff would break torch 2.13.0
    given = [args[i + 1] for i, a in enumerate(args) if a == "--exclude-newer-package"]
    assert "peft=2024-11-18" in given and "accelerate=2024-11-18" in given
    plain = identity.cell_identity(request, interp, {}, lock)
    dated = identity.cell_identity(request, interp, {}, lock, travel.exclusions())
    assert plain != dated


# ------------------------------------------------ what a newer exact pin needs


ANNOTATED = """\
huggingface-hub==0.36.2   # via tokenizers, transformers, peft
numpy==2.4.6              # via transformers
peft==0.17.0
tokenizers==0.22.2        # via transformers
torch==2.13.0+cpu         # via peft
transformers==4.56.2      # via peft
"""


def test_the_closure_stops_at_exact_pins_that_are_not_newer() -> None:
    # peft (newer than the cutoff) needs huggingface-hub itself; tokenizers and numpy
    # only through transformers, the candidate of --as-of transformers: they travel.
    assert _closure(ANNOTATED, {"peft"}, {"peft", "transformers"}) == {
        "peft",
        "huggingface-hub",
        "torch",
        "transformers",
    }
    # transformers newer too: what it needs is kept.
    assert {"tokenizers", "numpy"} <= _closure(ANNOTATED, {"peft", "transformers"}, {"peft"})


def test_a_refusal_names_the_caps_that_did_it() -> None:
    travel = TimeTravel("trl", "2025-04-24", ("accelerate", "huggingface-hub", "tokenizers"))
    message = (
        "Because only huggingface_hub<=0.30.2 is available and transformers==4.56.2 depends "
        "on huggingface-hub>=0.34.0,<1.0, we can conclude that transformers==4.56.2 cannot be used."
    )
    assert travel.capped_in(message) == ("huggingface-hub",)
    assert TimeTravel("trl", None, ()).capped_in(message) == ()


@pytest.mark.parametrize("text", ["2099-12-31", "2099-01-01T00:00:00Z"])
def test_a_date_in_the_future_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(UserError) as err:
        parse_as_of(text)
    assert str(err.value).startswith(f"--as-of {text}: a date in the future")
    assert "\n" not in str(err.value)


def test_a_date_before_the_first_release_is_one_warning(tmp_path: Path) -> None:
    url = json_index(tmp_path, "trl", [("trl-0.1.0-py3-none-any.whl", "2020-03-27T10:00:00Z")])
    index = IndexSettings(index_url=url)
    said = before_first_release("1970-01-01", "trl", index)
    assert said is not None and "before trl's first release (uploaded 2020-03-27)" in said
    assert "\n" not in said
    assert before_first_release("2021-01-01", "trl", index) is None
    assert before_first_release("trl", "trl", index) is None  # a package, not a date


def uv_compile(requirements: list[str], exclusions=()) -> subprocess.CompletedProcess:
    args = [uv_binary(), "pip", "compile", "-", "--python", sys.executable, "--no-header"]
    args += ["--quiet", *IndexSettings.from_environment().uv_args()]
    for package, cutoff in exclusions:
        args += ["--exclude-newer-package", f"{package}={cutoff}"]
    return subprocess.run(
        args, input="\n".join(requirements), capture_output=True, text=True, timeout=300
    )


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("candidate", "needed"),
    [
        # trl 0.17.0 (2025-04) with transformers 4.56.2 (2025-09): hub >= 0.34 is of 2025-07.
        ("trl==0.17.0", {"huggingface-hub", "tokenizers"}),
        # peft 0.10.0 (2024-03) with the same transformers.
        ("peft==0.10.0", {"huggingface-hub", "tokenizers", "safetensors"}),
    ],
)
def test_an_old_candidate_with_a_new_exact_pin_resolves_with_what_the_pin_needs(
    candidate: str, needed: set[str]
) -> None:
    """Real releases on PyPI, resolution only: the candidate's day caps the stack,
    but what transformers==4.56.2 needs resolves as today."""
    package, version = candidate.split("==")
    requested = [parse_pin(package, version), parse_pin("transformers", "4.56.2")]
    index = IndexSettings.from_environment()
    capped = time_travel(package, requested, DEFAULT_PACKAGES, index)
    # Before: every stack package capped at the candidate's day; uv refuses, and the
    # refusal names the cap that did it.
    refused = uv_compile([candidate, "transformers==4.56.2"], capped.exclusions())
    assert refused.returncode != 0
    named = capped.capped_in(refused.stderr)

    travel = keep_what_newer_pins_need(
        capped, requested, index, uv=uv_binary(), python=sys.executable
    )
    assert needed <= set(travel.kept) and travel.kept_for == ("transformers 4.56.2",)
    assert named and set(named) <= set(travel.kept)  # the caps uv named are the ones lifted
    assert "accelerate" in travel.packages  # the candidate's own needs still travel
    assert "transformers 4.56.2" in travel.line()
    done = uv_compile([candidate, "transformers==4.56.2"], travel.exclusions())
    assert done.returncode == 0, done.stderr
    lock = dict(line.split("==", 1) for line in done.stdout.split() if "==" in line)
    assert lock[package] == version
    assert Version(lock["huggingface-hub"]) >= Version("0.34.0")  # today's, uncapped


@pytest.mark.e2e
def test_nothing_is_kept_when_every_exact_pin_is_older_than_the_day() -> None:
    """trl 0.26.2 (2025-12) is newer than transformers 4.56.2: no compile, no change."""
    requested = [parse_pin("trl", "0.26.2"), parse_pin("transformers", "4.56.2")]
    index = IndexSettings.from_environment()
    capped = time_travel("trl", requested, DEFAULT_PACKAGES, index)
    assert keep_what_newer_pins_need(capped, requested, index, uv="no-uv", python="") == capped


def test_a_projects_packages_add_to_the_default_stack_and_never_narrow_it() -> None:
    # A matrix.yaml listing its report columns: inside the project, an old transformers
    # still gets the tokenizers and huggingface-hub of its day, as outside it.
    columns = ("torch", "transformers", "peft", "mylib")
    travel = time_travel("2024-11-18", pins(transformers="4.46.3"), columns, IndexSettings())
    assert {"tokenizers", "huggingface-hub", "numpy", "mylib", "peft"} <= set(travel.packages)
    assert "transformers" not in travel.packages
