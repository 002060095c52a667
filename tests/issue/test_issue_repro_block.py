"""The repro block convention: the first ```python block whose first line is
`# repromatrix` (or a PEP 723 header); compiled, never run."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repromatrix.errors import UserError
from repromatrix.issue.repro import fenced_blocks, find_repro

ISSUE = """\
It dies:

```python
import transformers  # not the repro: no marker
```

```python
# repromatrix: transformers peft==0.17.1
import sys
sys.exit(1)
```

```python
# repromatrix
print("a later one")
```
"""


def test_the_first_marked_python_block_is_the_repro() -> None:
    repro = find_repro(ISSUE, "issue")
    assert repro is not None
    assert repro.code == "# repromatrix: transformers peft==0.17.1\nimport sys\nsys.exit(1)\n"
    assert repro.needs == ("transformers=latest", "peft==0.17.1")
    assert repro.packages() == ["transformers", "peft"]
    assert repro.source == "issue"


def test_a_pep723_header_names_the_packages() -> None:
    text = (
        "~~~py\n# /// script\n# dependencies = [\n#   \"packaging==21.3\",\n#   'rich',\n# ]\n"
        "# ///\nimport packaging\n~~~\n"
    )
    repro = find_repro(text, "comment")
    assert repro is not None and repro.needs == ("packaging==21.3", "rich=latest")


def test_no_marked_block_is_no_repro() -> None:
    assert find_repro("```python\nprint(1)\n```\n", "issue") is None
    assert find_repro("```bash\n# repromatrix\nls\n```\n", "issue") is None
    assert find_repro("no code at all", "issue") is None
    assert find_repro(None, "issue") is None


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("# repromatrix\ndef f(:\n", "the repro block of the comment does not parse: line 2"),
        ("# repromatrix: transformers git+https://x\n", "not a package or PKG==VER"),
        ("# repromatrix: peft==1 peft==2\n", "the repro names peft twice"),
        ("# repromatrix: peft=system\n", "not a package or PKG==VER"),
    ],
)
def test_a_block_that_cannot_be_used_is_refused_in_one_line(code: str, said: str) -> None:
    with pytest.raises(UserError) as raised:
        find_repro(f"```python\n{code}```\n", "comment")
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_fences_close_only_on_their_own_kind() -> None:
    text = "````python\n# repromatrix\ns = '''\n```\n'''\n````\nafter\n"
    (block,) = fenced_blocks(text)
    assert block == ("python", "# repromatrix\ns = '''\n```\n'''\n")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_gives_a_repro_none_or_one_line(text: str) -> None:
    try:
        find_repro(text, "issue")
    except UserError as err:
        assert "\n" not in str(err)
