"""A package's names loaded when first used (PEP 562), written once for the stage
packages that export them: ``__getattr__, __dir__ = lazy_names(__name__, WHERE)``
with ``WHERE`` mapping each name to the submodule that defines it. Importing the
package then costs nothing; the submodule (and what it imports: pydantic, the
environment builder) loads on the first use of one of its names."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        setattr(sys.modules[package], name, value)  # later uses skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
