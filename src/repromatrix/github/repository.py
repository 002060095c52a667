"""A repository's name as GitHub spells it: OWNER/NAME."""

from __future__ import annotations

import re

from repromatrix.errors import UserError

# GitHub: an owner is 1-39 letters, digits or single hyphens; a name is 1-100 letters,
# digits, '.', '-', '_' and neither '.' nor '..'.
_REPOSITORY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


def repository_name(value: object, where: str) -> str:
    """``value`` when it is OWNER/NAME; else a one-line UserError naming ``where``."""
    text = value if isinstance(value, str) else ""
    name = text.partition("/")[2]
    if not _REPOSITORY.fullmatch(text) or name in (".", ".."):
        shown = repr(value)[:80] if not isinstance(value, str) else repr(text[:80])
        raise UserError(f"{where}: {shown} is not a repository (OWNER/NAME)")
    return text
