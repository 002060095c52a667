"""matrix.yaml's bytes -> plain data, safely: a regular file of a sensible size,
UTF-8, safe YAML with duplicate keys refused, nested and aliased within bounds.

read_text, then yaml_data, then check_structure: what passes is dicts, lists and
scalars with text keys; what they mean is checked later (load.py). Every mistake
here is one UserError line naming the file (and the line, for YAML syntax).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from repromatrix.errors import UserError, key_path

# A matrix of hundreds of combinations is a few thousand values, a few KB; these
# bounds are far above any real one and far below what hangs or floods a terminal.
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_VALUES = 100_000  # after YAML aliases are expanded
MAX_DEPTH = 32


class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load, except that a key given twice in one mapping is an error
    (YAML silently keeps the last one, which hides copy-paste mistakes). Merge keys
    (``<<: *base``) work as in safe_load: a key given beside them overrides theirs."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
            except TypeError:  # a list or a mapping as a key
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be text, not a list or mapping", key_node.start_mark
                ) from None
            if repeated:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class WrittenFloat(float):
    """A YAML float that keeps the text it was written as: ``4.50`` is the number 4.5,
    and the error asking to quote it must say '4.50' (pins.number_hint)."""

    written: str


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    value = WrittenFloat(loader.construct_yaml_float(node))
    value.written = str(node.value)
    return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def _construct_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """An unquoted date YAML reads as one (``as_of: 2024-13-01``): a calendar mistake
    is a syntax error at its line, not a ValueError from inside the YAML library."""
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError as err:
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r} is not a date ({err})", node.start_mark
        ) from None


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)


def read_text(path: Path) -> str:
    """The file's text; only a regular file of a sensible size (a FIFO would block
    the read forever)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such matrix file") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read matrix file ({err.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{path}: not a regular file (a folder, a pipe or a device)")
    if info.st_size > MAX_FILE_BYTES:
        raise UserError(
            f"{path}: {info.st_size} bytes; a matrix file is at most {MAX_FILE_BYTES} bytes"
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read matrix file ({err.strerror})") from None


def check_structure(data: Any, name: str) -> None:
    """Every mapping key is text, nothing is nested deeper than MAX_DEPTH and there
    are at most MAX_VALUES values once aliases are expanded (a few lines of YAML
    aliases can stand for billions). Iterative: no RecursionError, and it stops at
    the first excess rather than walking all of it."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    count = 0
    while stack:
        value, where = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise UserError(
                f"{name}: more than {MAX_VALUES} values once YAML aliases are expanded "
                "(an alias bomb?)"
            )
        if len(where) > MAX_DEPTH:
            raise UserError(f"{name}: {key_path(where[:4])}...: nested more than {MAX_DEPTH} deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    shown = repr(key)[:40]
                    raise UserError(f"{name}: {key_path((*where, shown))}: key {shown} is not text")
                stack.append((item, (*where, key)))
        elif isinstance(value, list):
            stack.extend((item, (*where, i)) for i, item in enumerate(value))


def yaml_data(text: str, name: str) -> Any:
    """The YAML document in ``text`` as plain data; a syntax error names its line."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f":{mark.line + 1}" if mark else ""
        problem = err.problem or err.context or "invalid YAML"
        raise UserError(f"{name}{where}: YAML syntax error: {problem}") from None
    except yaml.YAMLError as err:
        raise UserError(f"{name}: YAML syntax error: {err}") from None
    except RecursionError:
        raise UserError(f"{name}: nested more than {MAX_DEPTH} deep") from None
