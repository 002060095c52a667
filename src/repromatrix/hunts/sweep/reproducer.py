"""The reproducer of a bad release: what the PEP 723 script a sweep leaves beside
sweep.md requires to run that release again as the sweep ran it (its pins as they
resolved, the CPU builds of PyTorch on a CPU run, the stack's as-of day), with a
header that says so. report.reproducer writes the script itself.
"""

from __future__ import annotations

import re

from repromatrix.hunts.sweep.options import Plan, SweepOptions
from repromatrix.hunts.sweep.report import (
    ResultRecord,
    SweepRecord,
    case_body,
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
    for pin in options.pins:
        if pin.kind is PinKind.ABSENT:
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
    body = case_body(checked.probe.case) if checked.probe.case else script_text or ""
    return reproducer(
        requirements=requirements,
        index=index,
        body=body,
        python=record.python,
        exclude_newer=_travelled(result),
        cpu_packages=tuple(cpu_builds),
        header=header + "\n",
    )


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
