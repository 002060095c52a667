"""A stand-in for PyPI's neighbour, PyTorch's CPU index, which this machine cannot reach.

``repromatrix init`` writes ``https://download.pytorch.org/whl/cpu`` into matrix.yaml so
that a machine with no pip configuration gets CPU torch. Here the tests point that
same setting at a local PEP 503 index (file://) that holds the CPU torch wheels of
PIP_FIND_LINKS, and run without PIP_FIND_LINKS: torch comes from the index
matrix.yaml names, everything else from PyPI, as on a user's machine.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def local_cpu_index(folder: Path) -> str:
    """A file:// simple index of the CPU torch wheels found through PIP_FIND_LINKS."""
    project = folder / "simple" / "torch"
    project.mkdir(parents=True, exist_ok=True)
    links = []
    for place in os.environ.get("PIP_FIND_LINKS", "").split():
        for wheel in sorted(Path(place).glob("torch-*.whl")):
            target = project / wheel.name
            if not target.exists():
                target.symlink_to(wheel)
            links.append(f'<a href="{quote(wheel.name)}">{wheel.name}</a>')
    (project / "index.html").write_text("\n".join(links) + "\n")
    return (folder / "simple").as_uri()


def without_pip_configuration(env: dict[str, str]) -> dict[str, str]:
    """The environment of a machine that has no pip or uv index configuration."""
    return {
        k: v
        for k, v in env.items()
        if not k.startswith(
            ("PIP_FIND_LINKS", "PIP_INDEX", "PIP_EXTRA", "UV_INDEX", "UV_EXTRA", "UV_FIND")
        )
    }


def point_at_local_index(matrix: Path, folder: Path) -> None:
    """matrix.yaml's CPU index setting, pointed at the local stand-in."""
    text = matrix.read_text()
    assert CPU_INDEX in text, "init's matrix.yaml names PyTorch's CPU index"
    matrix.write_text(text.replace(CPU_INDEX, local_cpu_index(folder)))
