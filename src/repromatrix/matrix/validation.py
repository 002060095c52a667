"""pydantic's errors as one line: the file, the key path and what is wrong.

The models (model.py) say what a valid document and a valid level of settings are;
this is the one place their ValidationError becomes the UserError a person reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from repromatrix.errors import UserError, key_path


def validate(model: type[BaseModel], data: Any, name: str, where: tuple[str | int, ...]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        errors = err.errors()
        # A misspelt key also leaves the real one missing: name the misspelling.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = (*where, *first["loc"])
        raise UserError(f"{name}: {key_path(loc)}: {_describe(first)}") from None


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "value_error":
        return str(error["ctx"]["error"])
    return f"{error['msg'].rstrip('.')} (got {value!r})"
