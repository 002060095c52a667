"""index.html for 2,000 combinations x 10 cases in real headless Chromium: first paint
and how fast the filters answer.

    PYTHONPATH=src python benchmarks/bench_html_browser.py [--combinations 2000] [--cases 10]

The page is rendered from bench_reports.py's synthetic results (judged against a
baseline, as a nightly's), then opened in Chromium (Debian's `chromium`, launched
with the browser test's flags) driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: no port, no extra package). Measured in the page:

- first contentful paint and the page's own script done (``data-ready``), from
  navigation start;
- each interaction, from the event to the next frame after it: the verdict filter,
  "problems only" off and on, a package filter, the case filter, a sort by a package
  column, a cell's details.

Best of --repeat loads; writes benchmarks/results/html_browser.json.
Goals: first paint <= 2 s; each interaction <= 0.2 s (responsive).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_reports import REGISTRY, synthetic  # noqa: E402

from repromatrix.reports import html  # noqa: E402
from repromatrix.reports.view import View  # noqa: E402
from repromatrix.verdicts import judge  # noqa: E402

FIRST_PAINT_GOAL = 2.0
INTERACTION_GOAL = 0.2
# tests/reports/test_report_browser.py's launch.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,900",
)

# Runs in the page once it is ready: each interaction timed to the frame after it.
INTERACTIONS = """
(async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  const timed = async (action) => { const t = performance.now(); action();
    document.body.offsetHeight; await frame(); return (performance.now() - t) / 1000; };
  const set = (el, value) => { el.value = value; el.dispatchEvent(new Event("change")); };
  const out = {};
  const verdict = document.querySelector("select[data-filter=verdict]");
  const problems = document.getElementById("problems");
  const pkg = document.querySelector("select[data-filter=pkg]");
  const cases = document.getElementById("casefilter");
  out["verdict filter"] = await timed(() => set(verdict, "FIXED"));
  out["verdict filter off"] = await timed(() => set(verdict, ""));
  out["problems only off"] = await timed(() => { problems.checked = false;
    problems.dispatchEvent(new Event("change")); });
  out["problems only on"] = await timed(() => { problems.checked = true;
    problems.dispatchEvent(new Event("change")); });
  out["package filter"] = await timed(() => set(pkg, pkg.options[2].value));
  out["package filter off"] = await timed(() => set(pkg, ""));
  out["case filter"] = await timed(() => { cases.value = "area3";
    cases.dispatchEvent(new Event("input")); });
  out["case filter off"] = await timed(() => { cases.value = "";
    cases.dispatchEvent(new Event("input")); });
  out["sort by a package"] = await timed(() => document.querySelector("th.pkg[data-col='1']")
    .dispatchEvent(new MouseEvent("click", {bubbles: true})));
  out["a cell's details"] = await timed(() => document
    .querySelector("td.c.s-failed, td.c.s-regressed")
    .dispatchEvent(new MouseEvent("click", {bubbles: true})));
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return JSON.stringify({
    first_contentful_paint: paint ? paint.startTime / 1000 : null,
    shown: document.getElementById("shown").textContent,
    interactions: out,
  });
})()
"""


class Chromium:
    """One browser, driven over the DevTools protocol on fds 3 and 4."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        os.set_inheritable(to_chrome_r, True)
        os.set_inheritable(from_chrome_w, True)

        def fds() -> None:
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        # close_fds=False: subprocess would close 3 and 4 after preexec_fn made them.
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe"],
            close_fds=False,
            preexec_fn=fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(index)
            self.events.append(self._read())
        raise TimeoutError(method)

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.send("Browser.close")
        self.process.wait(timeout=30)


def measure(binary: str, page: Path, profile: Path) -> dict:
    browser = Chromium(binary, profile)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        browser.send("Page.enable", session=session)
        clock = time.monotonic()
        browser.send("Page.navigate", {"url": page.as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired")
        loaded = time.monotonic() - clock
        ready = browser.send(
            "Runtime.evaluate",
            {
                "expression": "(async () => { while (document.body.dataset.ready !== '1') "
                "await new Promise(r => setTimeout(r, 10)); "
                "return performance.now() / 1000; })()",
                "awaitPromise": True,
                "returnByValue": True,
            },
            session=session,
        )["result"]["value"]
        found = browser.send(
            "Runtime.evaluate",
            {"expression": INTERACTIONS, "awaitPromise": True, "returnByValue": True},
            session=session,
        )["result"]["value"]
    finally:
        browser.close()
    figures = json.loads(found)
    figures["load_event_seconds"] = round(loaded, 3)
    figures["ready_seconds"] = round(ready, 3)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--combinations", type=int, default=2000)
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "html_browser.json"
    )
    args = parser.parse_args()
    stored = synthetic(args.combinations, args.cases, run_id="today")
    judge(stored, REGISTRY, synthetic(args.combinations, args.cases, run_id="y", shift=1))
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "index.html"
        clock = time.perf_counter()
        page.write_text(html.render(View.of(stored, Path(folder))))
        rendered = time.perf_counter() - clock
        runs = [
            measure(args.chromium, page, Path(folder) / f"profile{i}") for i in range(args.repeat)
        ]
        size = page.stat().st_size
    best = min(runs, key=lambda r: r["first_contentful_paint"] or 99)
    interactions = {
        name: round(min(r["interactions"][name] for r in runs), 3)
        for name in runs[0]["interactions"]
    }
    figures = {
        "combinations": args.combinations,
        "cases": args.cases,
        "repeat": args.repeat,
        "page_bytes": size,
        "render_seconds": round(rendered, 3),
        "first_contentful_paint_seconds": round(best["first_contentful_paint"], 3),
        "ready_seconds": best["ready_seconds"],
        "load_event_seconds": best["load_event_seconds"],
        "shown_at_open": best["shown"],
        "interaction_seconds": interactions,
        "goals": {"first_paint_seconds": FIRST_PAINT_GOAL, "interaction_seconds": INTERACTION_GOAL},
        "within_goals": best["first_contentful_paint"] <= FIRST_PAINT_GOAL
        and max(interactions.values()) <= INTERACTION_GOAL,
        "chromium": subprocess.run(
            [args.chromium, "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "host": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": round(os.getloadavg()[0], 2),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0 if figures["within_goals"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
