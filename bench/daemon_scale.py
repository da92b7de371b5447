"""A live daemon over a kept scale store: its memory and its answers at 1M checkpoints.

    .venv/bin/python bench/daemon_scale.py --store /tmp/w18/stores/s1000000.db \
        [--json out.json]

Takes a store that `bench/bench_search.py --stores DIR` built (real code, synthetic
vectors) and serves it with a real `ctxd daemon` (the real model: the store's recorded
model name is set to the shipped model's for the run and restored after). Waits until
the daemon reports (`ctxd status --json`, `memory`) its vectors loaded and its keyword
postings and symbol names ready (or off, below their size threshold), then times
end-to-end CLI commands through it (hybrid, keyword, symbols; CLI start and the real
query embedding included) and reads the daemon's VmRSS / VmHWM from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit
from ctxd.indexer.store.sqlite.store import Store

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]
MODEL = "all-MiniLM-L6-v2"


def proc_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def ctxd(env: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, check=False)
    return (time.perf_counter() - t) * 1000, done


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args()
    store = Store.open(args.store)
    recorded = store.model()
    assert recorded is not None
    with store.transaction():
        store.set_meta("model", MODEL)
    store.close()
    home = Path(tempfile.mkdtemp(prefix="ctxd-scale-"))
    (home / "index.db").symlink_to(args.store.resolve())
    env = {**os.environ, "CTXD_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "store": str(args.store)}
    try:
        t0 = time.perf_counter()
        _ms, started = ctxd(env, "daemon", "start")
        assert started.returncode == 0, started.stderr
        pid = json.loads((home / "daemon.json").read_text())["pid"]
        memory: dict[str, Any] = {}
        while time.perf_counter() - t0 < args.timeout:
            _ms, st = ctxd(env, "status", "--json")
            memory = json.loads(st.stdout).get("memory", {}) if st.returncode == 0 else {}
            if memory.get("vectors", {}).get("rows", 0) > 0 and all(
                    memory.get(k, {}).get("state") in ("ready", "off")
                    for k in ("keyword_postings", "symbol_names")):
                break
            time.sleep(2)
        out["warm_s"] = round(time.perf_counter() - t0, 1)
        out["memory"] = memory
        out["rss_warm_mb"] = round(proc_mb(pid, "VmRSS"))
        runs: dict[str, list[float]] = {"hybrid_ms": [], "keyword_ms": [], "symbols_ms": []}
        questions = ["how does the progress bar estimate the time remaining",
                     "parse the square-bracket markup tags into styled text",
                     "retry a request with backoff when the server is busy",
                     "where are cookies merged into the session",
                     "render a table with columns that wrap"]
        for q in questions * 2:
            for name, cmd in (("hybrid_ms", ("search", q)),
                              ("keyword_ms", ("search", q, "--mode", "keyword")),
                              ("symbols_ms", ("symbols", q.split()[1]))):
                ms, done = ctxd(env, *cmd)
                assert done.returncode == 0, done.stderr
                runs[name].append(ms)
        out["cli_end_to_end"] = {k: {"p50": round(statistics.median(v), 1), "max": round(max(v), 1)}
                                 for k, v in runs.items()}
        out["rss_after_queries_mb"] = round(proc_mb(pid, "VmRSS"))
        out["rss_peak_mb"] = round(proc_mb(pid, "VmHWM"))
    finally:
        ctxd(env, "daemon", "stop")
        store = Store.open(args.store)
        with store.transaction():
            store.set_meta("model", recorded[0])
        store.close()
    emit(out, args.json)


if __name__ == "__main__":
    main()
