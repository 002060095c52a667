"""Planted secrets never leave the tool: a matrix sets secret-looking variables
(DB_PASS, api_key, a Service_Token) and pins a package from a git URL and an index
with credentials; the harness itself inherits a secret. After `list` and a real
`run`, no canary is in any file under the results folder or the environment store,
nor on the console.

The first test needs no network and builds nothing (both cells fail to install
against a closed port, which puts the URLs into uv's errors); the e2e one runs a
case that prints and asserts on the secrets, so that they reach pytest's log, the
records and the case's message before being masked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.faults import harness_env, make_project

from repromatrix.cli import main
from repromatrix.redact import forget

CANARIES = {
    "DB_PASS": "cAnArY-db-0001",
    "api_key": "cAnArY-key-0002",
    "Service_Token": "cAnArY-tok-0003",
    "url": "cAnArY-url-0004",
    "index": "cAnArY-idx-0005",
    "inherited": "cAnArY-env-0006",
}

MATRIX = f"""\
schema: 1
packages: [iniconfig, torch]
defaults:
  env:
    DB_PASS: {CANARIES["DB_PASS"]}
    api_key: {CANARIES["api_key"]}
    Service_Token: {CANARIES["Service_Token"]}
    OMP_NUM_THREADS: "1"
tiers:
  t:
    - id: credentialed-pin
      iniconfig: "git+https://someone:{CANARIES["url"]}@127.0.0.1:9/iniconfig.git"
      cases: [test_leak.py]
    - id: credentialed-index
      iniconfig: "2.0.0"
      extra_index_urls: ["https://someone:{CANARIES["index"]}@127.0.0.1:9/simple"]
      cases: [test_leak.py]
  e2e:
    - id: leaky-case
      iniconfig: "2.0.0"
      cases: [test_leak.py]
"""

LEAKY_CASE = """
import os
import sys

NAMES = ("DB_PASS", "api_key", "Service_Token", "MY_SERVICE_PASSWD")


def test_leak():
    values = [os.environ.get(name, "") for name in NAMES]
    print("stdout:", *values)
    print("stderr:", *values, file=sys.stderr)
    assert not values, " ".join(values)
"""


def _leaks(*places: Path, console: str = "") -> list[str]:
    found = [f"console: {name}" for name, value in CANARIES.items() if value in console]
    for place in places:
        for path in sorted(p for p in place.rglob("*") if p.is_file() and not p.is_symlink()):
            if "site-packages" in path.parts:
                continue  # the installed packages themselves
            data = path.read_bytes()
            found += [f"{path}: {n}" for n, v in CANARIES.items() if v.encode() in data]
    return found


def _harness(project, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "repromatrix", *args],
        cwd=project.root,
        env=harness_env(
            {
                "MY_SERVICE_PASSWD": CANARIES["inherited"],
                "UV_HTTP_RETRIES": "0",  # the closed port fails at once
            }
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_no_canary_reaches_a_file_or_the_console(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", tmp_path / "envs", MATRIX, {"test_leak.py": LEAKY_CASE})
    results = project.root / "reports" / "latest"
    listed = _harness(project, "list")
    as_json = _harness(project, "list", "--json")
    ran = _harness(
        project,
        "run",
        "--tier",
        "t",
        "--results",
        str(results),
        "--env-dir",
        str(project.env_dir),
    )
    assert listed.returncode == 0 and as_json.returncode == 0, listed.stderr + as_json.stderr
    assert ran.returncode == 1, ran.stderr  # two install errors
    assert "***@127.0.0.1" in listed.stdout  # the pin is shown, its credentials masked
    statuses = (results / "combinations" / "credentialed-pin.json").read_text()
    assert '"install-error"' in statuses
    console = "".join(d.stdout + d.stderr for d in (listed, as_json, ran))
    assert _leaks(results, project.env_dir, console=console) == []
    # every report was written (the test would pass vacuously otherwise)
    for name in ("results.json", "summary.md", "index.html", "junit.xml"):
        assert (results / name).is_file()
    assert sorted(p.name for p in (results / "logs").iterdir()) == [
        "credentialed-index.install.log",
        "credentialed-pin.install.log",
    ]


def test_list_in_process_masks_what_the_matrix_sets(tmp_path: Path, capsys) -> None:
    """The console's door is cli.main itself: an in-process caller is covered too."""
    project = make_project(tmp_path / "p", tmp_path / "envs", MATRIX, {"test_leak.py": LEAKY_CASE})
    try:
        assert main(["list", "--matrix", str(project.matrix), "--json"]) == 0
        print(f"echo {CANARIES['DB_PASS']}")  # after main: nothing masks it any more...
    finally:
        forget()
    out = capsys.readouterr().out
    assert "someone:" not in out
    assert out.count(CANARIES["DB_PASS"]) == 1  # ...so only the echo holds it


@pytest.mark.e2e
def test_a_case_that_prints_its_secrets_leaks_none(tmp_path: Path, shared_env_store: Path) -> None:
    project = make_project(tmp_path / "p", shared_env_store, MATRIX, {"test_leak.py": LEAKY_CASE})
    results = project.root / "reports" / "latest"
    ran = _harness(
        project,
        "run",
        "--tier",
        "e2e",
        "--results",
        str(results),
        "--env-dir",
        str(shared_env_store),
    )
    assert ran.returncode == 1, ran.stderr  # the case fails
    records = results / "records" / "leaky-case.jsonl"
    assert '"outcome": "failed"' in records.read_text()
    assert "***" in (results / "logs" / "leaky-case.cases.log").read_text()
    assert _leaks(results, console=ran.stdout + ran.stderr) == []
    requests = list(shared_env_store.glob("*/request.json"))
    assert requests
    assert _leaks(*(r.parent for r in requests)) == []
