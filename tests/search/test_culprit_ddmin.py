"""The culprit search (search/ddmin.py) against synthetic oracles: no environments."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.search.ddmin import (
    Outcome,
    Status,
    Trial,
    ddmin,
    depends_on,
    mentioned,
    most_runs,
)


def names(n: int) -> list[str]:
    return [f"pkg-{i:03d}" for i in range(n)]


def fails_with(*culprits: str):
    """An oracle: bad when every culprit is applied (they only fail together)."""
    calls: list[frozenset[str]] = []

    def oracle(applied: frozenset[str]) -> Trial:
        calls.append(applied)
        return Trial(Outcome.BAD if set(culprits) <= applied else Outcome.GOOD, "exit 1")

    oracle.calls = calls  # type: ignore[attr-defined]
    return oracle


def test_one_culprit_among_many() -> None:
    changes = names(24)
    found = ddmin(changes, fails_with("pkg-017"))
    assert found.status is Status.FOUND
    assert found.minimal == ("pkg-017",)
    assert found.culprits == ("pkg-017",)
    assert found.runs <= 2 * math.log2(24) + 4
    assert [a.role for a in found.attempts[:2]] == ["good lock", "bad lock"]


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=300).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(min_value=0, max_value=n - 1))
))  # fmt: skip
def test_the_bound_for_one_culprit(size_and_position: tuple[int, int]) -> None:
    size, position = size_and_position
    changes = names(size)
    oracle = fails_with(changes[position])
    found = ddmin(changes, oracle)
    assert found.status is Status.FOUND
    assert found.culprits == (changes[position],)
    assert found.runs == len(oracle.calls)  # every cell run is counted once
    assert found.runs <= most_runs(size) <= 2 * math.log2(size) + 4


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=2, max_value=64).flatmap(
    lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=2, max_size=2))
))  # fmt: skip
def test_two_packages_that_only_fail_together(size_and_pair: tuple[int, set[int]]) -> None:
    size, pair = size_and_pair
    changes = names(size)
    culprits = tuple(changes[i] for i in sorted(pair))
    found = ddmin(changes, fails_with(*culprits))
    assert found.status is Status.FOUND
    assert found.minimal == culprits
    assert found.culprits == culprits


def test_unresolvable_mixes_move_the_requirement_along() -> None:
    """transformers' new release requires the new tokenizers and huggingface-hub; a mix
    with the new transformers and an old one of those is refused by the resolver, which
    names them. The culprit is transformers; the other two came along."""
    changes = ["accelerate", "huggingface-hub", "numpy", "peft", "tokenizers", "transformers"]
    needs = {"transformers": {"tokenizers", "huggingface-hub"}}
    ran: list[frozenset[str]] = []
    refused: list[frozenset[str]] = []

    def oracle(applied: frozenset[str]) -> Trial:
        for package, required in needs.items():
            missing = required - applied if package in applied else set()
            if missing:
                first = sorted(missing)[0]
                refused.append(applied)
                return Trial(
                    Outcome.UNRESOLVABLE,
                    f"Because transformers==5.23.0 depends on {first}>=1.0 and you require "
                    f"{first}==0.32.3, we can conclude that your requirements are unsatisfiable.",
                )
        ran.append(applied)
        return Trial(Outcome.BAD if "transformers" in applied else Outcome.GOOD)

    found = ddmin(changes, oracle)
    assert found.status is Status.FOUND
    assert found.culprits == ("transformers",)
    assert set(found.minimal) == {"transformers", "tokenizers", "huggingface-hub"}
    assert set(found.moved_along) == {"tokenizers", "huggingface-hub"}
    assert "resolver" in found.moved_along["tokenizers"]
    unresolvable = [a for a in found.attempts if a.trial.outcome is Outcome.UNRESOLVABLE]
    assert unresolvable and not any(a.ran for a in unresolvable)
    assert found.runs == len(ran)
    assert any(a.moved_along for a in found.attempts if a.trial.outcome is Outcome.BAD)
    # learned once ("transformers depends on ..."), applied to every later mix
    assert len(refused) == 2


def test_a_mix_that_stays_unresolvable_is_untestable() -> None:
    """The resolver names nothing that could be moved along: that part is untestable,
    the search goes on with the others and still finds the culprit."""

    def oracle(applied: frozenset[str]) -> Trial:
        if applied == {"a", "b"}:
            return Trial(Outcome.UNRESOLVABLE, "no solution found for python 3.11")
        return Trial(Outcome.BAD if "b" in applied else Outcome.GOOD)

    found = ddmin(["a", "b", "c", "d"], oracle)
    assert found.culprits == ("b",)
    assert found.status is Status.FOUND


def test_a_flaky_step_is_set_aside() -> None:
    """The first mix that holds the culprit gives 'untestable' (exit 125 once): the
    search tries finer parts and still ends on the culprit."""
    flaked: list[frozenset[str]] = []

    def oracle(applied: frozenset[str]) -> Trial:
        if "pkg-005" in applied and 0 < len(applied) < 16 and not flaked:
            flaked.append(applied)
            return Trial(Outcome.SKIP, "exit 125: untestable")
        return Trial(Outcome.BAD if "pkg-005" in applied else Outcome.GOOD)

    found = ddmin(names(16), oracle)
    assert flaked, "the flaky step happened"
    assert found.status is Status.FOUND
    assert found.culprits == ("pkg-005",)
    assert any(a.trial.outcome is Outcome.SKIP for a in found.attempts)


def test_untestable_at_the_end_is_inconclusive() -> None:
    """Every mix smaller than the pair is untestable: the culprit is 'among' them."""

    def oracle(applied: frozenset[str]) -> Trial:
        if applied in ({"a"}, {"b"}):
            return Trial(Outcome.SKIP, "exit 125")
        return Trial(Outcome.BAD if "a" in applied else Outcome.GOOD)

    found = ddmin(["a", "b", "c", "d"], oracle)
    assert found.status is Status.INCONCLUSIVE
    assert found.minimal == ("a", "b")
    assert "among a, b" in found.reason


def test_ends_are_checked_first() -> None:
    found = ddmin(["a", "b"], lambda applied: Trial(Outcome.BAD, "exit 1"))
    assert found.status is Status.ENDS_MISMATCH
    assert found.reason.startswith("the good lock is bad")
    assert len(found.attempts) == 1
    found = ddmin(["a", "b"], lambda applied: Trial(Outcome.GOOD, "exit 0"))
    assert found.status is Status.ENDS_MISMATCH
    assert found.reason.startswith("the bad lock is good")


def test_jobs_find_the_same_culprit() -> None:
    changes = names(40)
    one = ddmin(changes, fails_with("pkg-031"))
    many = ddmin(changes, fails_with("pkg-031"), jobs=4)
    assert many.culprits == one.culprits == ("pkg-031",)


def test_mentioned_reads_package_names_from_resolver_messages() -> None:
    text = (
        "Because transformers==4.52.4 depends on huggingface_hub>=0.30.0,<1.0 and you "
        "require huggingface-hub==2.4.0, we can conclude ..."
    )
    assert mentioned(text, ["huggingface-hub", "transformers", "tokenizers"]) == {
        "huggingface-hub",
        "transformers",
    }


def test_depends_on_reads_who_requires_what() -> None:
    text = (
        "error: No solution found when resolving dependencies cause: Because "
        "transformers>=5.23.0 depends on safetensors>=0.8.0 and you require "
        "safetensors==0.5.3, we can conclude ... Because huggingface-hub>=2.4.0 depends on "
        "hf-xet{platform_machine == 'AMD64'}>=1.4 and tokenizers==0.21.1 depends on "
        "huggingface_hub>=0.16.4,<1.0"
    )
    assert depends_on(text) == {
        ("transformers", "safetensors"),
        ("huggingface-hub", "hf-xet"),
        ("tokenizers", "huggingface-hub"),
    }


def test_a_set_that_only_installs_together_names_the_package_that_requires_the_rest() -> None:
    """transformers, tokenizers and huggingface-hub only install together (each mix
    with fewer is unresolvable): every request of one of them gives the same three.
    The culprit is the one the others are required by (the lock's annotations)."""
    group = {"huggingface-hub", "tokenizers", "transformers"}

    def oracle(applied: frozenset[str]) -> Trial:
        inside = group & applied
        if inside and inside != group:
            missing = sorted(group - inside)[0]
            return Trial(Outcome.UNRESOLVABLE, f"you require {missing}==1.0, unsatisfiable")
        return Trial(Outcome.BAD if inside else Outcome.GOOD)

    requires = {
        "transformers": {"tokenizers", "huggingface-hub"},
        "tokenizers": {"huggingface-hub"},
    }
    found = ddmin(["accelerate", *sorted(group), "numpy"], oracle, requires=requires)
    assert found.status is Status.FOUND
    assert set(found.minimal) == group
    assert found.culprits == ("transformers",)
    assert found.moved_along["tokenizers"] == "transformers requires it (the bad lock says so)"
    without = ddmin(["accelerate", *sorted(group), "numpy"], oracle)
    assert set(without.culprits) == group  # nothing says which: all three are named


def test_the_change_that_breaks_is_named_not_the_one_the_resolver_moved_along() -> None:
    """The seed stack (unsloth#3592) between two nights: unsloth 2025.11.3 -> 2025.11.2
    and unsloth_zoo 2025.11.4 -> 2025.11.3. unsloth moved back alone passes; zoo moved
    back alone is refused ("unsloth==2025.11.3 depends on unsloth-zoo>=2025.11.4"), so
    unsloth moves along, and that fails. The resolver's dependency says the two go
    together; the tests say zoo breaks it."""
    refusal = (
        "Because unsloth==2025.11.3 depends on unsloth-zoo>=2025.11.4 and you require "
        "unsloth==2025.11.3, we can conclude that you require unsloth-zoo>=2025.11.4."
    )

    def oracle(applied: frozenset[str]) -> Trial:
        if "unsloth-zoo" in applied and "unsloth" not in applied:
            return Trial(Outcome.UNRESOLVABLE, refusal)
        return Trial(Outcome.BAD if "unsloth-zoo" in applied else Outcome.GOOD)

    found = ddmin(["unsloth", "unsloth-zoo"], oracle)
    assert found.status is Status.FOUND
    assert found.culprits == ("unsloth-zoo",)
    assert found.moved_along["unsloth"].startswith("moved along: the resolver refused unsloth-zoo")
