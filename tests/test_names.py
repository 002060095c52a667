"""repromatrix.names stands in for packaging.utils.canonicalize_name on the start-up
path (names.py says why): the two must never disagree, or a pin and the installed
package it names would stop matching."""

from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name as packaging_canonical

from repromatrix.names import canonicalize_name

# What a distribution name is made of (PEP 508), separators doubled and mixed in.
name_text = st.text(alphabet=st.sampled_from("abcXYZ019-_.-_."), min_size=1, max_size=24).filter(
    lambda s: s[0].isalnum() and s[-1].isalnum()
)


@given(name_text)
def test_agrees_with_packaging(name: str) -> None:
    assert canonicalize_name(name) == packaging_canonical(name)


def test_known_names() -> None:
    assert canonicalize_name("Typing_Extensions") == "typing-extensions"
    assert canonicalize_name("unsloth_zoo") == "unsloth-zoo"
    assert canonicalize_name("zope..interface") == "zope-interface"
