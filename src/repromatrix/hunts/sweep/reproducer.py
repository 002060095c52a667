"""The reproducer of a bad release: what the PEP 723 script a sweep leaves beside
sweep.md requires to run that release again as the sweep ran it (its pins as they
resolved, the CPU builds of PyTorch on a CPU run, the stack's as-of day), with a
header that says so. report.reproducer writes the script itself.

A case probe's reproducer stands alone (``uv run reproduce-X.py`` from any folder):
it carries the case's file and what that imports from cases/ (its helper modules,
the conftest.py files above it, the markers repromatrix gives every cell), writes
them to a temporary folder, runs the case there with pytest (in its dependencies)
and exits as a script probe does: 0 passed, 125 skipped, 1 failed.
"""

from __future__ import annotations

import ast
import re
from importlib import resources
from pathlib import Path

from repromatrix.environment.source_tree import SourceTree
from repromatrix.hunts.sweep.options import Plan, SweepOptions
from repromatrix.hunts.sweep.report import (
    ResultRecord,
    SweepRecord,
    portable_index,
    reproducer,
    reproducer_name,
)
from repromatrix.matrix.pins import PinKind, pin_text
from repromatrix.names import canonicalize_name
from repromatrix.probe.candidates import sources
from repromatrix.redact import URL_CREDENTIALS

# The packages the PyTorch CPU index serves as CPU builds.
PYTORCH_PACKAGES = ("torch", "torchvision", "torchaudio")


def reproducer_for(
    result: ResultRecord,
    record: SweepRecord,
    checked: Plan,
    options: SweepOptions,
    script_text: str | None,
    *,
    on_cpu: bool = False,
) -> str:
    """The PEP 723 script that runs one bad release again (``on_cpu``: the sweep's
    host had no GPU)."""
    requirements = [f"{checked.package}=={result.version}"]
    notes: list[str] = []
    folders: dict[str, str] = {}
    for pin in options.pins:
        if pin.kind is PinKind.ABSENT:
            continue
        if pin.kind is PinKind.PATH:  # built from its folder, wherever the script is run
            requirements.append(pin.package)
            folders[pin.package] = pin.location.as_posix()
            notes += folder_notes(pin.package, pin.location, record.sources.get(pin.package))
            continue
        if pin.kind is PinKind.EXACT:
            requirements.append(f"{pin.package}=={pin.spec}")
        elif pin.kind is PinKind.DIRECT:
            requirements.append(f"{pin.package} @ {URL_CREDENTIALS.sub('://', pin.spec)}")
        elif pin.package in result.resolved:  # a range, latest, system: what it resolved to
            requirements.append(f"{pin.package}=={result.resolved[pin.package]}")
            notes.append(f"{pin_text(pin)} resolved to {result.resolved[pin.package]}")
        elif requirement := pin.requirement():
            requirements.append(requirement)
    cpu_builds = cpu_torch(result.resolved, on_cpu)
    named = {canonicalize_name(re.split(r"[=<>!~ @;\[]", r, maxsplit=1)[0]) for r in requirements}
    for name, version in cpu_builds.items():
        if name not in named:  # only a direct requirement takes a uv source
            requirements.append(f"{name}=={version}")
            notes.append(f"{name} {version}: the CPU build, as the sweep ran")
    index, local = portable_index([(s.kind, s.location) for s in sources(checked.index)])
    package_indexes: dict[str, str] = {}  # each package's own index (package_indexes)
    for package, url in checked.index.package_indexes:
        if package not in named | set(cpu_builds):
            continue
        if url.startswith("file:") or "://" not in url:
            folder = url.rstrip("/").rsplit("/", 1)[-1]
            local.append(
                f"this sweep took {package} from a local index ({folder}); point uv at yours"
            )
        else:
            package_indexes[package] = URL_CREDENTIALS.sub("://", url)
    header = "\n".join(
        [
            f"repromatrix sweep: {checked.package} {result.version} was bad"
            + (f" ({result.message})" if result.message else ""),
            f"Run: uv run {reproducer_name(result.version)}  "
            "(exit 0 = good, 125 = untestable, anything else = bad)",
            *notes,
            *local,
        ]
    )
    if checked.probe.case:
        requirements.append("pytest>=8")  # the case runs under pytest
        body = standalone_case(checked.probe.case, checked.probe.cases_root)
    else:
        body = script_text or ""
    return reproducer(
        requirements=requirements,
        index=index,
        body=body,
        python=record.python,
        exclude_newer=_travelled(result),
        cpu_packages=tuple(cpu_builds),
        header=header + "\n",
        folders=folders,
        package_indexes=package_indexes,
    )


def folder_notes(package: str, folder: Path, tree: dict | None) -> list[str]:
    """What the header says of a package built from a folder: which tree the sweep
    tested, and how to build another copy (the path is this machine's)."""
    tested = f" (the sweep tested {SourceTree.of_record(package, tree).short()})" if tree else ""
    return [
        f"{package}: built from {folder.as_posix()}, as it is when you run this{tested}.",
        f"Elsewhere: set {package}'s path under [tool.uv.sources] above to your copy of it.",
    ]


def cpu_torch(resolved: dict[str, str], on_cpu: bool) -> dict[str, str]:
    """The PyTorch packages of a run that a reproducer takes from the PyTorch CPU
    index (name -> version): all of them when the run's torch was a ``+cpu`` build or
    the host had no GPU; none otherwise. Without it ``uv run`` fetches the CUDA build
    from PyPI, over a gigabyte a CPU run never used."""
    torch = resolved.get("torch")
    if torch is None or not (on_cpu or torch.endswith("+cpu")):
        return {}
    return {name: resolved[name] for name in PYTORCH_PACKAGES if name in resolved}


def _travelled(result: ResultRecord) -> dict[str, str]:
    """The stack packages that travelled to this release's day, and that day: what the
    reproducer gives uv as exclude-newer-package (a global cutoff would also cut off what
    exact pins such as torch need today)."""
    travelled = result.as_of or {}
    date = travelled.get("date")
    if not date:
        return {}
    # The project's own stack (its matrix's packages:), as far as this run installed it.
    return {name: str(date) for name in travelled.get("packages") or [] if name in result.resolved}


def standalone_case(case: str, cases_root: Path) -> str:
    """The body of a case's reproducer: the files it needs from ``cases_root``,
    inlined, and the few lines that run it (see the module's docstring)."""
    files = {
        name: (cases_root / name).read_text(encoding="utf-8")
        for name in case_files(case, cases_root)
    }
    markers = resources.files("repromatrix.execution._cell") / "repromatrix_markers.py"
    files[MARKERS_MODULE + ".py"] = markers.read_text(encoding="utf-8")
    inlined = "".join(f"    {name!r}: (\n{_lines(text)}    ),\n" for name, text in files.items())
    return _RUN_CASE.format(case=case, cases=cases_root.name, files=inlined, markers=MARKERS_MODULE)


def case_files(case: str, cases_root: Path) -> list[str]:
    """The case's file, cases/pytest.ini, the conftest.py files from cases/ down to
    it, and every module of cases/ they import (transitively), as paths relative to
    ``cases_root``."""
    start = case.split("::", 1)[0]
    wanted = [start, "pytest.ini"]  # the case ran with cases/ as rootdir, under its ini
    folder = Path(start).parent
    for parent in [*reversed(folder.parents), folder]:
        if (cases_root / parent / "conftest.py").is_file():
            wanted.append((parent / "conftest.py").as_posix())
    found: list[str] = []
    while wanted:
        name = wanted.pop(0)
        if name in found or not (cases_root / name).is_file():
            continue
        found.append(name)
        try:
            tree = ast.parse((cases_root / name).read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            for module in modules:
                wanted += _local_module(module, cases_root)
    return found


def _local_module(module: str, cases_root: Path) -> list[str]:
    """The files of cases/ that ``import module`` reads (none for another package's)."""
    parts = module.split(".")
    as_file = Path(*parts).with_suffix(".py")
    if (cases_root / as_file).is_file():
        packages = [Path(*parts[:i], "__init__.py") for i in range(1, len(parts))]
        return [p.as_posix() for p in packages] + [as_file.as_posix()]
    package = cases_root / Path(*parts)
    if (package / "__init__.py").is_file():
        return sorted(p.relative_to(cases_root).as_posix() for p in package.rglob("*.py"))
    return []


def _lines(text: str) -> str:
    """A file's text as one string literal per line (an empty file: one empty one)."""
    lines = text.splitlines(keepends=True) or [""]
    return "".join(f"        {line!r}\n" for line in lines)


MARKERS_MODULE = "repromatrix_markers"

_RUN_CASE = '''"""A case of {cases}/, on its own:

    {case}

Its file and what it imports from {cases}/ are below; they are written to a temporary
folder and the case runs there with pytest. Exit 0 = passed (good), 125 = skipped
(untestable), 1 = failed (bad)."""

import sys
import tempfile
from pathlib import Path

import pytest

CASE = {case!r}
FILES = {{
{files}}}


class Outcomes:
    """What pytest said of the case: any failure, a pass, or only skips."""

    def __init__(self):
        self.seen = set()

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.seen.add("failed")
        elif report.skipped:
            self.seen.add("skipped")
        elif report.when == "call":
            self.seen.add("passed")

    def pytest_collectreport(self, report):
        if report.failed:
            self.seen.add("failed")


def main():
    outcomes = Outcomes()
    with tempfile.TemporaryDirectory(prefix="repromatrix-case-") as folder:
        for name, text in FILES.items():
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        sys.path.insert(0, folder)
        code = pytest.main(
            ["-q", "-rs", "-p", "{markers}", "-p", "no:cacheprovider", "--rootdir", folder,
             str(Path(folder, CASE.split("::", 1)[0])) + CASE[len(CASE.split("::", 1)[0]):]],
            plugins=[outcomes],
        )
    if "failed" in outcomes.seen or code not in (0, 5):
        return 1
    return 0 if "passed" in outcomes.seen else 125


sys.exit(main())
'''
