"""What a probe is: what runs in each cell (``Probe``: a case of cases/, or a script),
and one probe to make (``Trial``: that probe, in a cell, from some indexes, its logs
under a folder).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from repromatrix.environment import IndexSettings
from repromatrix.errors import UserError
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import Pin
from repromatrix.names import canonicalize_name
from repromatrix.redact import portable_path


@dataclass(frozen=True)
class Probe:
    """What is run in each environment: a case of cases/, or a script."""

    case: str | None = None
    script: Path | None = None
    cases_root: Path = Path("cases")
    timeout: float = 900.0  # seconds for the run itself (not the install)

    def __post_init__(self) -> None:
        if (self.case is None) == (self.script is None):
            raise UserError("give one of --case CASE_ID or --script FILE.py")

    @property
    def label(self) -> str:
        return f"case {self.case}" if self.case else f"script {self.script.name}"  # type: ignore[union-attr]

    def validated(self) -> Probe:
        """The probe with absolute paths, or a UserError naming what is missing."""
        if self.script is not None:
            script = self.script.expanduser().resolve()
            if not script.is_file():
                raise UserError(f"--script {self.script}: no such file")
            return Probe(script=script, cases_root=self.cases_root, timeout=self.timeout)
        root = self.cases_root.expanduser().resolve()
        if not root.is_dir():
            raise UserError(f"--cases {self.cases_root}: no such folder")
        path = (self.case or "").split("::", 1)[0]
        if not path or not (root / path).exists():
            raise UserError(f"--case {self.case}: no {path or 'file'} in {self.cases_root}")
        return Probe(case=self.case, cases_root=root, timeout=self.timeout)

    def record(self) -> dict:
        """The probe as bisect.json, sweep.json and culprit.json store it: the case, or
        the script by a portable path and its sha256 (which script exactly ran)."""
        if self.case is not None:
            return {"case": self.case, "timeout": self.timeout}
        assert self.script is not None
        return {
            "script": portable_path(self.script),
            "sha256": hashlib.sha256(self.script.read_bytes()).hexdigest(),
            "timeout": self.timeout,
        }

    def defined(self, say: Callable[[str], None] | None = None) -> Probe:
        """The validated probe, whose case the file also defines: the test function
        or class, and the ``[param]`` id when the parametrize marks can be read
        (matrix/case_ids.py; read from the source, nothing is imported). A search
        over a case that does not exist could only end "could not conclude", and
        ``check`` would answer "untestable" at every commit of a git bisect run.
        Parameter ids made at collection time cannot be checked: ``say`` gets one
        line that says so (stderr by default), and the id is kept."""
        probe = self.validated()
        if probe.case is None or "::" not in probe.case:
            return probe
        path = probe.case.split("::", 1)[0]
        import ast  # only a case probe is read statically

        try:
            ast.parse((probe.cases_root / path).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as err:
            raise UserError(f"--case {self.case}: cannot read {path} ({err})") from None
        from repromatrix.matrix.case_ids import CaseIndex  # a case probe's only

        index = CaseIndex(probe.cases_root)
        problem = index.problem(probe.case)
        if problem:
            raise UserError(f"--case {self.case}: {problem}")
        unchecked = index.unchecked_param(probe.case)
        if unchecked:
            line = (
                f"note: --case {self.case}: its parameter id cannot be checked before "
                f"it runs ({unchecked})"
            )
            (say or (lambda text: print(text, file=sys.stderr)))(line)
        return probe


def searched_probe(
    package: str, pins: Iterable[Pin], probe: Probe, *, as_of: str | None, searched: str
) -> Probe:
    """What every search over one package's versions (bisect, sweep) asks of its input
    before anything is built: the package is not also pinned, an as-of package held
    fixed has an exact pin (its date comes from it), and the probe exists (a case its
    file defines). Returns the probe with absolute paths."""
    pins = tuple(pins)
    if any(pin.package == package for pin in pins):
        raise UserError(
            f"--pin: {package} is the package being {searched}; it cannot be pinned too"
        )
    from repromatrix.environment.as_of import dated_release, is_date

    if as_of is not None and canonicalize_name(as_of) != package and not is_date(as_of):
        dated_release(as_of, pins)  # a package held fixed: it needs an exact pin
    return probe.defined()


@dataclass(frozen=True)
class Trial:
    """One probe to make: ``probe`` in the cell of ``cell``, its packages from
    ``index`` (the cell's own indexes already over the user's), its logs into
    ``workdir`` as ``<name>.install.log``, ``<name>.run.log`` (and a case's
    ``<name>.records.jsonl``). ``devices``: the CUDA_VISIBLE_DEVICES it runs with
    (its own GPUs, when probes run at once); None: what this process sees."""

    probe: Probe
    cell: CellSpec
    index: IndexSettings
    workdir: Path
    name: str = "check"
    devices: str | None = None

    def probe_env(self) -> dict[str, str]:
        """The variables the probe runs with: the cell's, and its GPUs."""
        env = dict(self.cell.env)
        if self.devices is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.devices
        return env
