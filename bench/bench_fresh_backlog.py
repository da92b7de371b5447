"""Edit -> `ctxd callers` reflects it, while the daemon embeds a backlog (issue 38, "fresh").

    .venv/bin/python bench/bench_fresh_backlog.py --tree DIR --file REL --callee NAME \\
        [--edits 8] [--json out.json]

A copy of `--tree` is indexed phase 1 only (text, symbols, graph; every checkpoint still to
embed, as after an interrupted run or a fresh `ctxd index` whose embedding is under way),
then a real daemon is started on it (`ctxd daemon start`: its watcher embeds the backlog).
Once the first vectors land, each edit appends a function calling `--callee` to `--file`
(a file that imports it) and the time until `ctxd callers NAME --json` lists the new
function is measured, as a user polling the CLI sees it (each poll a whole process). The
daemon log's watcher lines (`lag`, from the file event to the batch committed) are reported
too. Compare two checkouts with `PYTHONPATH` (a tree whose `ctxd/` is the checkout).

Example (issue 38, fastapi's 2,952 files; `git --git-dir=... archive HEAD | tar -x`):
    --tree /tmp/fastapi --file fastapi/exception_handlers.py --callee jsonable_encoder
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CTXD = [sys.executable, "-m", "ctxd.server.cli.main"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", required=True, type=Path)
    ap.add_argument("--file", required=True, help="repository-relative file to edit")
    ap.add_argument("--callee", required=True, help="a definition the file imports")
    ap.add_argument("--edits", type=int, default=8)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ctxd-fresh-"))
    repo, home = work / args.tree.name, work / "home"
    shutil.copytree(args.tree, repo, symlinks=True)
    env = dict(os.environ, CTXD_HOME=str(home))

    def ctxd(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CTXD, *a], env=env, capture_output=True, text=True, cwd=work)

    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    t = time.perf_counter()
    svc = Service(load_settings({"home": str(home)}))
    try:
        svc.index(repo, embed=False)
    finally:
        svc.close()
    print(f"phase 1 of {repo.name}: {time.perf_counter() - t:.1f} s", flush=True)
    times: list[float] = []
    try:
        ctxd("daemon", "start")
        while True:  # the backlog's first vectors: the daemon is embedding
            status = json.loads(ctxd("status", "--json").stdout or "{}")
            if any(r.get("embedded") for r in status.get("repositories", [])):
                break
            time.sleep(0.5)
        target = repo / args.file
        for i in range(args.edits):
            name = f"bench_fresh_{i}_{time.time_ns()}"
            with target.open("a", encoding="utf-8") as f:
                f.write(f"\n\ndef {name}():\n    return {args.callee}(None)\n")
            t0 = time.perf_counter()
            while name not in ctxd("callers", args.callee, "--json").stdout:
                pass
            times.append(time.perf_counter() - t0)
            print(f"edit {i}: callers after {times[-1]:.2f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
            time.sleep(1.5)  # the edits apart, as a person makes them
    finally:
        ctxd("daemon", "stop")
    log = (home / "daemon.log").read_text(encoding="utf-8", errors="replace")
    lags = [int(m) for m in re.findall(r": 1 changed, .* \(lag (\d+) ms\)", log)]
    out = {
        "tree": str(args.tree), "edits": len(times),
        "callers_s": [round(x, 2) for x in times],
        "callers_p50_s": round(statistics.median(times), 2),
        "callers_max_s": round(max(times), 2),
        "watcher_lag_ms": lags,
        "load": os.getloadavg()[0],
    }
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
