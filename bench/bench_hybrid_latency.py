"""Hybrid (default mode) search time of a warm long-lived service, question by question.

    .venv/bin/python bench/bench_hybrid_latency.py --home HOME [--before PKG_PARENT]
        [--rounds 3] [--limit 10] [--threads 1] [--json FILE]

HOME holds an index with vectors (e.g. `bench/eval_quality.py --home HOME` builds the
eval-dev one). Each round starts, per side, one process that opens `Service(long_lived=True)`
on HOME, as the daemon does (the model loaded, the vectors in memory), runs one warm-up
search, then every eval-dev question once through `Service.search(mode="hybrid",
limit=--limit)`, timing each; the engine's answer cache never hits (the questions are
distinct). `--threads N`: N threads share the questions and ask at once (several MCP
clients of one daemon). `--before DIR`: also run the `ctxd` package under DIR
(PYTHONPATH), rounds alternating with this checkout's. Reported per side: the medians over
rounds of each round's p50, p90, mean and questions answered a second (`per_s`), and
before/after ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHILD = r"""
import json, os, statistics, sys, threading, time
from ctxd.server.config import load_settings
from ctxd.server.service import Service
import ctxd.search.hybrid as hybrid
queries = [json.loads(line)["query"] for line in open(sys.argv[1], encoding="utf-8")]
limit, threads = int(sys.argv[2]), int(sys.argv[3])
service = Service(load_settings({}), long_lived=True)
service.search("warm up", mode="hybrid", limit=limit)
ms = []
def ask(mine):
    for q in mine:
        t0 = time.perf_counter()
        service.search(q, mode="hybrid", limit=limit)
        ms.append((time.perf_counter() - t0) * 1000)
started = time.perf_counter()
workers = [threading.Thread(target=ask, args=(queries[i::threads],)) for i in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
wall = time.perf_counter() - started
service.close()
print(json.dumps({"module": hybrid.__file__, "ms": ms, "per_s": len(ms) / wall}))
"""


def run_side(env: dict[str, str], queries: Path, limit: int, threads: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(queries), str(limit), str(threads)],
                         env=env, check=True, capture_output=True, text=True).stdout
    data: dict[str, Any] = json.loads(out.splitlines()[-1])
    ms = sorted(data["ms"])
    return {"module": data["module"], "p50": statistics.median(ms),
            "p90": ms[int(len(ms) * 0.9)], "mean": statistics.mean(ms),
            "per_s": data["per_s"]}


def main() -> None:
    from bench.corpus import eval_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--before", type=Path, help="a ctxd package's parent folder (PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1,
                    help="threads asking at once (several MCP clients of one daemon)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    queries = eval_dir() / "queries.jsonl"
    base = dict(os.environ, CTXD_HOME=str(args.home), HF_HUB_OFFLINE="1")
    base.pop("PYTHONPATH", None)
    sides: dict[str, dict[str, str]] = {"after": base}
    if args.before:
        sides = {"before": dict(base, PYTHONPATH=str(args.before.resolve())), **sides}
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name, env in sides.items():
            rounds[name].append(run_side(env, queries, args.limit, args.threads))
            got = rounds[name][-1]
            print(f"round {r + 1} {name}: p50 {got['p50']:.1f} ms, p90 {got['p90']:.1f} ms, "
                  f"mean {got['mean']:.1f} ms, {got['per_s']:.1f} questions/s", file=sys.stderr)
    summary: dict[str, Any] = {
        name: {k: round(statistics.median(x[k] for x in runs), 1)
               for k in ("p50", "p90", "mean", "per_s")}
        | {"module": runs[0]["module"]}
        for name, runs in rounds.items()}
    if args.before:
        summary["before_over_after"] = {
            k: round(summary["before"][k] / summary["after"][k], 2)
            for k in ("p50", "p90", "mean", "per_s")}
    result = {"command": sys.argv, "limit": args.limit, "threads": args.threads,
              "rounds": rounds, "summary": summary,
              "load_avg_end": os.getloadavg()}
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
