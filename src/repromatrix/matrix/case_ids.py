"""Which case ids exist in a cases folder, read from the source (no cell, no import).

A case id is what pytest calls a node id, relative to the cases folder:
``test_whisper_lora.py::test_lora_gets_gradients[reentrant]``. A selection may also
be a file, a folder, or a function without its parameter (all of its ids).

The cases import torch and friends, which the harness does not have: everything
here reads the files with ``ast``. Parameter ids are worked out the way pytest does
for what can be read statically (``ids=[...]``, ``pytest.param(id=...)``, string
and number values, lists named in the file or imported from a sibling module in
the cases folder). Where they cannot be (an ``ids=`` function, values computed by a
call, a parametrized fixture, a ``pytest_generate_tests`` hook), every parameter is
accepted: only what is certainly absent is refused, so that a typo such as
``[defualt]`` is one line before anything runs.
"""

from __future__ import annotations

import ast
import fnmatch
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class _Unknown(Exception):
    """A value (or id) that cannot be worked out without running the code."""


@dataclass(frozen=True)
class _Param:  # pytest.param(*values, id=...)
    values: tuple[Any, ...]
    id: str | None


class _Object:  # a value pytest names argname + index (a dict, a list, ...)
    pass


@dataclass
class _Function:
    name: str
    # One entry per parametrize mark, in pytest's order; None: ids not readable.
    params: list[list[str] | None] = field(default_factory=list)


@dataclass
class _File:
    """What one case file defines."""

    names: set[str]  # every module-level name (def, class, assignment, import)
    functions: dict[str, _Function]  # "test_x" and "TestX::test_y"
    star_import: bool = False  # `from x import *`: any name may exist
    dynamic: bool = False  # parametrized fixtures or pytest_generate_tests here


def _parts(case_id: str) -> tuple[str, list[str], str | None]:
    """``file::Class::func[param]`` -> (file, [Class, func], param or None)."""
    head, bracket, rest = case_id.partition("[")
    param = rest[:-1] if bracket and rest.endswith("]") else (rest if bracket else None)
    file_part, *names = head.split("::")
    return file_part, names, param


class CaseIndex:
    """The case ids of one cases folder, read on demand and cached per file."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._files: dict[Path, _File | None] = {}

    # ------------------------------------------------------------------ checks

    def problem(self, case_id: str) -> str | None:
        """Why ``case_id`` (a selection: node id, file or folder) certainly names
        nothing in the folder, or None when it exists or may exist."""
        if case_id.startswith("-"):
            return None  # a pytest option passed through
        file_part, names, param = _parts(case_id)
        target = self.root / file_part
        if not target.exists():
            return f"no such file in {self.root.name}/"
        if not names:
            return None
        if target.is_dir() or target.suffix != ".py":
            return f"{file_part} is not a Python file"
        info = self._file(target)
        if info is None or info.star_import:
            return None
        if names[0] not in info.names:
            return f"{file_part} defines no {names[0]!r}"
        key = "::".join(names)
        function = info.functions.get(key)
        if function is None:
            classes = {k.split("::")[0] for k in info.functions if "::" in k}
            if len(names) > 1 and names[0] in classes:
                return f"{file_part} has no test {key!r}"
            return None  # defined some other way (an assignment, an import): may be a test
        if param is None or info.dynamic or any(ids is None for ids in function.params):
            return None
        if not function.params:
            return f"{key} is not parametrized; drop '[{param}]'"
        if param not in _combined(function.params, any_order=True):
            known = ", ".join(_combined(function.params)[:6])
            return f"{key} has no parameter id {param!r} (ids: {known})"
        return None

    def unchecked_param(self, case_id: str) -> str | None:
        """Why the ``[param]`` part of ``case_id`` cannot be checked from the source
        (its ids are made at collection time), or None when it was checked or there
        is none: a caller says so rather than refuse an id that may well exist."""
        file_part, names, param = _parts(case_id)
        target = self.root / file_part
        if param is None or not names or not target.is_file():
            return None
        info = self._file(target)
        if info is None:
            return f"{file_part} cannot be read here"
        key = "::".join(names)
        function = info.functions.get(key)
        if info.star_import or function is None:
            return f"{key} is not defined by a plain def in {file_part}"
        if info.dynamic:
            return "a parametrized fixture or pytest_generate_tests makes its ids"
        if any(ids is None for ids in function.params):
            return f"the parametrize ids of {key} are computed"
        return None

    def pattern_problem(self, pattern: str) -> str | None:
        """Why a known-issue ``case`` (an id, or a pattern with ``*`` and ``?``)
        certainly matches no case, or None."""
        if not any(c in pattern for c in "*?"):
            return self.problem(pattern)
        file_part, names, param = _parts(pattern)
        files = [
            p for p in self._case_files() if fnmatch.fnmatchcase(_rel(p, self.root), file_part)
        ]
        if not files:
            return f"no case file matches {file_part!r}"
        if not names:
            return None
        wanted = "::".join(names)
        for path in files:
            info = self._file(path)
            if info is None or info.star_import:
                return None
            for key, function in info.functions.items():
                if not fnmatch.fnmatchcase(key, wanted):
                    continue
                if (
                    param is None
                    or info.dynamic
                    or any(ids is None for ids in function.params)
                    or any(
                        fnmatch.fnmatchcase(i, param.replace("[", "[[]"))
                        for i in _combined(function.params, any_order=True)
                    )
                ):
                    return None
            if not info.functions and info.names:
                return None
        return f"no case matches {pattern!r}"

    # ------------------------------------------------------------------ listing

    def ids(self, selection: Sequence[str] = ()) -> list[str]:
        """The case ids a selection runs (all of the folder's when empty), in file
        order. A function whose parameter ids cannot be read is listed without them."""
        out: list[str] = []
        for entry in selection or [""]:
            file_part, names, param = _parts(entry)
            target = self.root / file_part if file_part else self.root
            paths = (
                [p for p in self._case_files() if _inside(p, target)]
                if target.is_dir()
                else [target]
            )
            for path in paths:
                info = self._file(path) if path.is_file() else None
                rel = _rel(path, self.root)
                if info is None:
                    out.append(rel)
                    continue
                for key, function in info.functions.items():
                    wanted = "::".join(names)
                    if names and key != wanted and not key.startswith(wanted + "::"):
                        continue
                    if param is not None:
                        out.append(f"{rel}::{key}[{param}]")
                    elif (
                        not function.params
                        or info.dynamic
                        or any(ids is None for ids in function.params)
                    ):
                        out.append(f"{rel}::{key}")
                    else:
                        out += [f"{rel}::{key}[{i}]" for i in _combined(function.params)]
        return list(dict.fromkeys(out))

    # ------------------------------------------------------------------ reading

    def _case_files(self) -> list[Path]:
        return sorted(
            p
            for pattern in ("test_*.py", "*_test.py")
            for p in self.root.rglob(pattern)
            if ".venv" not in p.parts and "__pycache__" not in p.parts
        )

    def _file(self, path: Path) -> _File | None:
        path = path.resolve()
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: Path) -> _File | None:
        tree = _parse(path)
        if tree is None:
            return None  # unreadable or not Python: pytest will say so in the cell
        scope = _Scope(self.root, tree)
        info = _File(names=set(), functions={})
        info.dynamic = _dynamic(tree) or any(
            _dynamic(t) for t in (_parse(c) for c in self._conftests(path)) if t is not None
        )
        module_marks = _module_marks(tree, scope)
        for node in tree.body:
            info.names |= _defined_names(node)
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                info.star_import = True
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name.startswith("test"):
                    info.functions[node.name] = _Function(
                        node.name, _marks(node.decorator_list, scope) + module_marks
                    )
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                class_marks = _marks(node.decorator_list, scope)
                for item in node.body:
                    if isinstance(
                        item, (ast.FunctionDef, ast.AsyncFunctionDef)
                    ) and item.name.startswith("test"):
                        key = f"{node.name}::{item.name}"
                        info.functions[key] = _Function(
                            key, _marks(item.decorator_list, scope) + class_marks + module_marks
                        )
        return info

    def _conftests(self, path: Path) -> Iterable[Path]:
        folder = path.parent
        root = self.root.resolve()
        while True:
            if (folder / "conftest.py").is_file():
                yield folder / "conftest.py"
            if folder == root or folder == folder.parent:
                return
            folder = folder.parent


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def _rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _defined_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _dynamic(tree: ast.Module) -> bool:
    """Ids made at collection time: a pytest_generate_tests hook or a fixture with params."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == "pytest_generate_tests":
                return True
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and _dotted(deco.func).endswith("fixture")
                    and any(k.arg == "params" for k in deco.keywords)
                ):
                    return True
    return False


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


class _Scope:
    """Module-level names of a case file, and of the sibling modules it imports
    from the cases folder, evaluated as far as literals go."""

    def __init__(self, root: Path, tree: ast.Module, depth: int = 0) -> None:
        self.root = root
        self.depth = depth
        self.assigned: dict[str, ast.expr] = {}
        self.imported: dict[str, tuple[str, str]] = {}  # name -> (module, name there)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned[target.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.value is not None:
                    self.assigned[node.target.id] = node.value
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (node.module, alias.name)

    def lookup(self, name: str) -> Any:
        if name in self.assigned:
            return _evaluate(self.assigned[name], self)
        if name in self.imported and self.depth < 3:
            module, there = self.imported[name]
            path = self.root / (module.replace(".", "/") + ".py")
            tree = _parse(path) if path.is_file() else None
            if tree is not None:
                return _Scope(self.root, tree, self.depth + 1).lookup(there)
        raise _Unknown(name)


def _evaluate(node: ast.expr, scope: _Scope) -> Any:
    """A literal-ish value: constants, lists, tuples, dicts, names, indexing,
    ``list(...)`` and ``pytest.param(...)``; anything else is _Unknown."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items: list[Any] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                items += list(_evaluate(element.value, scope))
            else:
                items.append(_evaluate(element, scope))
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _Unknown("dict unpacking")
        return {_evaluate(k, scope): _Object() for k in node.keys if k is not None}
    if isinstance(node, ast.Name):
        return scope.lookup(node.id)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        container = _evaluate(node.value, scope)
        try:
            return container[node.slice.value]
        except (TypeError, KeyError, IndexError):
            raise _Unknown("subscript") from None
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name in ("list", "tuple") and len(node.args) == 1 and not node.keywords:
            return list(_evaluate(node.args[0], scope))
        if name.endswith("param") and name.split(".")[0] in ("pytest", "param"):
            ident = next((k.value for k in node.keywords if k.arg == "id"), None)
            return _Param(
                tuple(_value_or_object(a, scope) for a in node.args),
                _evaluate(ident, scope) if ident is not None else None,
            )
    raise _Unknown(ast.dump(node)[:40])


def _value_or_object(node: ast.expr, scope: _Scope) -> Any:
    """A parameter value: what pytest would name by its value, or an _Object when it
    is certainly not a str/number/bool/None (so pytest names it argname + index)."""
    if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.Lambda, ast.ListComp, ast.DictComp)):
        return _Object()
    if isinstance(node, ast.Tuple):
        return tuple(_value_or_object(e, scope) for e in node.elts)
    return _evaluate(node, scope)


def _module_marks(tree: ast.Module, scope: _Scope) -> list[list[str] | None]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            marks = (
                node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            )
            return _marks(marks, scope)
    return []


def _marks(decorators: Sequence[ast.expr], scope: _Scope) -> list[list[str] | None]:
    """The parameter ids of each parametrize mark, in pytest's order (the decorator
    nearest the function first). A decorator that is a name may be a parametrize
    mark assigned in the module (``VARIANTS = pytest.mark.parametrize(...)``)."""
    out: list[list[str] | None] = []
    for deco in reversed(decorators):
        if isinstance(deco, ast.Name) and deco.id in scope.assigned:
            deco = scope.assigned[deco.id]
        if isinstance(deco, ast.Call) and _dotted(deco.func).endswith("mark.parametrize"):
            out.append(_parametrize_ids(deco, scope))
        elif isinstance(deco, ast.Name) and deco.id in scope.imported:
            out.append(None)  # a mark made in another module: not read
    return out


def _parametrize_ids(call: ast.Call, scope: _Scope) -> list[str] | None:
    arguments = {k.arg: k.value for k in call.keywords}
    argnames_node = call.args[0] if call.args else arguments.get("argnames")
    values_node = call.args[1] if len(call.args) > 1 else arguments.get("argvalues")
    if argnames_node is None or values_node is None:
        return None
    try:
        argnames = _evaluate(argnames_node, scope)
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",") if a.strip()]
        if isinstance(values_node, (ast.List, ast.Tuple)):
            values = [_value_or_object(v, scope) for v in values_node.elts]
        else:
            values = list(_evaluate(values_node, scope))
        given = _evaluate(arguments["ids"], scope) if "ids" in arguments else None
        if given is not None and not isinstance(given, (list, tuple)):
            return None  # an ids function
        ids = [_one_id(list(argnames), value, i, given) for i, value in enumerate(values)]
    except (_Unknown, TypeError, ValueError):
        return None
    if not ids or len(set(ids)) != len(ids):
        return None  # empty or duplicated: pytest renames them, version-dependent
    return ids


def _one_id(argnames: list[str], value: Any, index: int, given: Sequence[Any] | None) -> str:
    if given is not None and index < len(given) and given[index] is not None:
        return _plain(given[index], argnames[0], index)
    if isinstance(value, _Param):
        if value.id is not None:
            return str(value.id)
        value = value.values if len(argnames) > 1 else (value.values[0] if value.values else None)
    if len(argnames) > 1:
        if not isinstance(value, (list, tuple)) or len(value) != len(argnames):
            raise _Unknown("arity")
        return "-".join(_plain(v, n, index) for v, n in zip(value, argnames, strict=True))
    return _plain(value, argnames[0], index)


def _plain(value: Any, argname: str, index: int) -> str:
    if isinstance(value, (_Object, dict, list, tuple, set)):
        return f"{argname}{index}"
    if isinstance(value, str):
        if not value.isascii() or not value.isprintable():
            raise _Unknown("escaped id")
        return value
    if value is None or isinstance(value, (bool, int, float, complex)):
        return str(value)
    raise _Unknown(type(value).__name__)


def _combined(params: list[list[str] | None], *, any_order: bool = False) -> list[str]:
    """Every id of stacked parametrize marks (pytest joins them with '-')."""
    sets = [ids for ids in params if ids is not None]
    orders = itertools.permutations(sets) if any_order else [sets]
    out: list[str] = []
    for order in orders:
        out += ["-".join(parts) for parts in itertools.product(*order)]
    return list(dict.fromkeys(out))
