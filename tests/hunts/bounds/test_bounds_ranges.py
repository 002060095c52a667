"""What a declared range admits and shuts out, the specifier suggested for it, and
which Requires-Dist lines are a target's direct dependencies here (pure)."""

from __future__ import annotations

import doctest

import pytest
from packaging.version import Version

from repromatrix.errors import UserError
from repromatrix.hunts.bounds import ranges
from repromatrix.hunts.bounds.declared import Target, direct_dependencies, parse_target
from repromatrix.hunts.bounds.ranges import split_releases, suggest
from repromatrix.matrix.pins import Pin, PinKind

V = Version


def test_the_doctests() -> None:
    assert doctest.testmod(ranges).failed == 0


def test_admitted_and_shut_out_releases() -> None:
    versions = [V(v) for v in ("1.0", "1.1", "2.0rc1", "2.0", "2.1", "3.0")]
    admitted, excluded = split_releases(">=1.1,<2.1", versions, yanked=[V("2.0")])
    assert admitted == (V("1.1"),)
    assert excluded == (V("2.1"), V("3.0")), "no pre-release, no yanked release"
    assert split_releases(">=9", versions) == ((), ())


@pytest.mark.parametrize(
    ("declared", "lower", "upper", "want"),
    [
        (">=0.21.0", V("1.3.0"), None, ">=1.3.0"),
        ("", None, ("<", V("5.0.0")), "<5.0.0"),
        (">=2.0,<2.3", None, ("<", V("2.5")), ">=2.0,<2.5"),
        (">=2.0,<2.3", None, ("<=", V("2.4")), ">=2.0,<=2.4"),
        (">=1.0,!=1.1,!=3.0,<2", V("1.2"), ("<", V("2.5")), ">=1.2,<2.5"),
        (">=1.0,!=1.5,<2", None, ("<", V("3")), ">=1.0,<3,!=1.5"),
        ("==1.2.3", None, ("<", V("1.4")), ">=1.2.3,<1.4"),
        ("~=1.2", V("1.3"), None, ">=1.3,<2"),
        ("==1.*", None, ("<", V("1.5")), ">=1,<1.5"),
        ("<2.3,>=2.0", None, None, ">=2.0,<2.3"),
    ],
)
def test_the_suggested_specifier(declared, lower, upper, want) -> None:
    assert suggest(declared, lower=lower, upper=upper) == want


def target(*requires: str, extras: tuple[str, ...] = ()) -> Target:
    return Target("app", "1.0", "app==1.0", Pin("app", PinKind.EXACT, "1.0"), requires, extras)


def test_markers_extras_and_a_package_named_twice() -> None:
    app = target(
        "transformers>=4.56",
        "transformers!=5.1.0; extra == 'deepspeed'",
        "accelerate>=1.4; python_version >= '3.9'",
        "old-thing; python_version < '3'",
        "peft>=0.17; extra == 'peft'",
        "app[peft]; extra == 'dev'",
        extras=("deepspeed", "peft", "dev"),
    )
    declared, left = direct_dependencies(app, ["peft", "deepspeed"], "3.11.7")
    got = {d.name: (d.specifier, d.extra) for d in declared}
    assert got == {
        "transformers": (">=4.56,!=5.1.0", None),
        "accelerate": (">=1.4", None),
        "peft": (">=0.17", "peft"),
    }
    assert left == [("old-thing; python_version < '3'", "its marker is false here (Python 3.11.7)")]
    declared, left = direct_dependencies(app, [], "3.11.7")
    assert "peft" not in {d.name for d in declared}
    assert ("peft>=0.17; extra == 'peft'", "extra peft (--extra peft tests it)") in left
    with pytest.raises(UserError, match="--extra nope: app has no such extra"):
        direct_dependencies(app, ["nope"], "3.11.7")


@pytest.mark.parametrize("text", ["trl", "trl>=1.0", "trl==1.*", "trl[peft]==1.0", "trl @ x"])
def test_a_target_is_a_release_or_a_folder(text: str) -> None:
    with pytest.raises(UserError, match="give a release as NAME==VERSION"):
        parse_target(text)
    assert parse_target("TRL==1.16.0") == ("trl", "1.16.0")
