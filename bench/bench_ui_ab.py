"""`ctxd ui` before and after a change, in one browser under the same load.

    .venv/bin/python bench/bench_ui_ab.py --before COMMIT [--home DIR] [--runs 12]
        [--json out.json]

The index is `bench_ui.py`'s (built there first: `--home` the same folder). This checkout's
page and the page at `--before` (its `indexer`, `search` and `server` folders, from `git
archive`, imported in place of this checkout's) both run as `ctxd --no-daemon ui` over
that index, side by side; the same queries go to one then the other (the order swapped
each round), so both meet the same load. `--no-daemon`: each answers in its own process
(a daemon of one version would refuse the other's client), so the search itself is the
in-process one (hybrid's vectors from SQLite: slower than the daemon's); what to compare
is the page's share, the time from Enter to the painted results less the search itself.

- search: per mode, `--runs` queries (after two to warm up; the queries repeat after
  eight, so about half meet colouring a cache may keep): painted after Enter, the search
  itself, the page's share; p50;
- first views of ~900-line files (a different copy of `indexer/pipeline.py` each time, so
  each is a first view): navigation to the load event, and to all lines coloured;
- the 5,000-line file: its first view, then two more;
- the rendering alone (`--render-rounds`, in processes of their own, alternating): each
  side's `results_html` over the same answers (this checkout's, to the benchmark's 24
  queries), each page the first time (after the server's start-up warming; the before
  side with the Python lexer made) and again.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_ui import CHROMIUM, COLOURED, PAINT, QUERIES, build
from bench.stats import emit

ROOT = Path(__file__).resolve().parents[1]
RUN = ("import sys; sys.argv = ['ctxd', '--no-daemon', 'ui', '--no-open']; "
       "from ctxd.server.cli.main import main; main()")


def checkout(commit: str, into: Path) -> Path:
    """`commit`'s package folders under `into/src`, importable as `ctxd.*` from the
    returned folder (it goes first on PYTHONPATH)."""
    src, pkg = into / "src", into / "pkg" / "ctxd"
    src.mkdir(parents=True)
    pkg.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "indexer", "search",
                              "server"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(src, filter="data")
    for name in ("indexer", "search", "server"):
        (pkg / name).symlink_to(src / name)
    return pkg.parent


def start(home: Path, path: Path | None) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "CTXD_HOME": str(home / "ctxd-home"), "HF_HUB_OFFLINE": "1"}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    proc = subprocess.Popen([sys.executable, "-c", RUN], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=tempfile.gettempdir())
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def measure(logins: dict[str, str], runs: int) -> dict[str, list[tuple[float, float]]]:
    from playwright.sync_api import sync_playwright

    out: dict[str, list[tuple[float, float]]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update"])
        pages: dict[str, Any] = {}
        for side, login in logins.items():
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(login)
            page.wait_for_selector("#q")
            page.add_init_script(COLOURED)
            pages[side] = page
        for mode in ("keyword", "lexical", "hybrid"):
            for page in pages.values():
                page.select_option("select[name=mode]", mode)
            for i in range(runs + 2):
                query = QUERIES[mode][i % len(QUERIES[mode])]
                for side in (("before", "after") if i % 2 else ("after", "before")):
                    page = pages[side]
                    page.fill("#q", query)
                    page.evaluate(PAINT)
                    page.keyboard.press("Enter")
                    got = page.evaluate("() => window.__paint")
                    took = page.locator("#results .took").first.inner_text()
                    if mode == "lexical":  # typing searches too: let the box settle
                        page.wait_for_timeout(250)
                    if i >= 2:
                        out.setdefault(f"search_{mode}_{side}", []).append(
                            (float(got["ms"]), float(took.strip("() ms"))))
        for i in range(runs):
            for j, side in enumerate(("before", "after") if i % 2 else ("after", "before")):
                out.setdefault(f"file_900_first_{side}", []).append(view(
                    pages[side], logins[side],
                    f"/file/corpus/part{2 * i + j:03d}/indexer/pipeline.py"))
        for side, page in pages.items():
            for n in range(3):
                out.setdefault(f"file_5000_{'first' if n == 0 else 'again'}_{side}", []).append(
                    view(page, logins[side], "/file/corpus/big/five_thousand.py"))
        browser.close()
    return out


COLLECT = """
import pickle, sys
sys.path.insert(0, {root!r})
from bench.bench_ui import QUERIES
from ctxd.server.config import load_settings
from ctxd.server.service import Service
service = Service(load_settings({{"home": {home!r}}}))
pages = [(m, service.search(q, mode=m, context_lines=2 if m == "lexical" else None))
         for m, qs in QUERIES.items() for q in qs]
service.close()
with open({out!r}, "wb") as f:
    pickle.dump(pages, f)
"""

RENDER = """
import json, pickle, statistics, time
from ctxd.server.ui import highlight
from ctxd.server.ui.results import results_html
if hasattr(highlight, "warm"):
    highlight.warm()  # as `ctxd ui` does at its start
else:
    highlight.highlight_lines("x = 1", "python", "a.py")  # the Python lexer made
with open({pages!r}, "rb") as f:
    pages = pickle.load(f)
out = {{}}
for when in ("first", "again"):
    for mode, page in pages:
        params = {{"q": page.query, "mode": mode, "repo": "", "path": "", "lang": ""}}
        started = time.perf_counter()
        results_html(page, params, 1.0)
        out.setdefault(when + "_" + mode, []).append((time.perf_counter() - started) * 1000)
print(json.dumps({{k: statistics.median(v) for k, v in out.items()}}))
"""


def render_ab(home: Path, old: Path, rounds: int) -> dict[str, Any]:
    """Both sides render the same answers (this checkout's, to the benchmark's queries,
    pickled once): medians over `rounds` fresh processes a side, alternating, of each
    side's median page rendering (ms)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    got: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="ctxd-ui-render-") as tmp:
        pages = str(Path(tmp) / "pages.pickle")
        subprocess.run([sys.executable, "-c", COLLECT.format(
            root=str(ROOT), home=str(home / "ctxd-home"), out=pages)], env=env, check=True,
            cwd=tmp)
        for _ in range(rounds):
            for side, path in (("before", old), ("after", None)):
                side_env = {**env, **({"PYTHONPATH": str(path)} if path is not None else {})}
                done = subprocess.run([sys.executable, "-c", RENDER.format(pages=pages)],
                                      env=side_env, check=True, capture_output=True, text=True,
                                      cwd=tmp)
                for key, ms in json.loads(done.stdout.strip().splitlines()[-1]).items():
                    got.setdefault(f"render_{key}_{side}_ms", []).append(ms)
    return {k: round(statistics.median(v), 1) for k, v in sorted(got.items())}


def view(page: Any, login: str, path: str) -> tuple[float, float]:
    """(navigation to the load event, to all lines coloured) in ms; a page that comes
    coloured (no `data-colour` on its lines) is coloured at its load."""
    page.goto(login.split("/?token=")[0] + path)
    load = float(page.evaluate("() => performance.getEntriesByType('navigation')[0].duration"))
    later = page.evaluate("() => document.querySelector('.code.file[data-from]') !== null")
    return load, float(page.evaluate("() => window.__coloured")) if later else load


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="the commit to compare with")
    ap.add_argument("--home", type=Path, required=True, help="bench_ui.py's --home")
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--render-rounds", type=int, default=3, help="0: no rendering A/B")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    info = build(args.home, 100_000)[1]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ctxd-ui-ab-") as tmp:
        old = checkout(args.before, Path(tmp))
        servers = {"before": start(args.home, old), "after": start(args.home, None)}
        try:
            raw = measure({side: login for side, (_p, login) in servers.items()}, args.runs)
        finally:
            for proc, _login in servers.values():
                proc.terminate()
                proc.wait(10)
        rendering = render_ab(args.home, old, args.render_rounds) if args.render_rounds else {}
    summary: dict[str, Any] = {}
    for key, rows in raw.items():
        first, second = [r[0] for r in rows], [r[1] for r in rows]
        if key.startswith("search"):
            summary[key] = {"painted_p50_ms": round(statistics.median(first), 1),
                            "search_p50_ms": round(statistics.median(second), 1),
                            "page_share_p50_ms": round(statistics.median(
                                a - b for a, b in rows), 1), "samples": len(rows)}
        else:
            summary[key] = {"load_p50_ms": round(statistics.median(first), 1),
                            "coloured_p50_ms": round(statistics.median(second), 1),
                            "samples": len(rows)}
    emit({"index": info, "before": args.before,
          "load_average": {"start": load_before, "end": os.getloadavg()}, **summary,
          "rendering": rendering}, args.json)


if __name__ == "__main__":
    main()
