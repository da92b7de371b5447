"""The code graph's cost and speed: indexing with and without it, its share of the index,
and the latency of its queries.

    .venv/bin/python bench/bench_graph.py --tree NAME=DIR [--tree ...] [--rounds 3]
        [--json out.json]

Each round indexes every tree into a fresh SQLite home, phase 1 only (walk, read, chunk,
symbols, text and keyword indexes, and the graph; no embedding, which the graph does not
touch; `--embed`: the whole index, embedding with the default model included), once as
this checkout does and once with the graph's extraction switched off
(`indexer.checkpoints._graph_row` and `_file_graph` answering `NO_GRAPH`, no graph helper
process), in turn, in this process; the medians compare, of wall-clock time and of the
CPU time of the process and its graph helper (`indexer.graph.worker`; steadier on a busy
machine). The graph's share of the index is the pages of `graph`, `graph_links` and
its index over all pages (SQLite's `dbstat`), of the phase-1 index and of the index with
its vectors (estimated: one 384-float vector per checkpoint, what phase 2 adds). Query
latency: `refs` and `callers` of the named definitions (`--query NAME:SYMBOL`),
through `GraphCases` as the service runs them: `cold` (the repository's workspace read
from the store) and `warm` (a second query at the same text generation, as a daemon
answers), medians of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ctxd.indexer import checkpoints, pipeline
from ctxd.indexer.graph.worker import close_all
from ctxd.indexer.store.records import NO_GRAPH
from ctxd.search.graph import workspace
from ctxd.server.config import load_settings
from ctxd.server.requests import CallsRequest, GraphRefsRequest
from ctxd.server.service import Service

VECTOR_BYTES = 384 * 4 + 16
"""One checkpoint's vector as the default model stores it (float32, 384 dimensions) plus
its row: what phase 2 adds to the index (this bench does not embed)."""


def index_all(home: Path, trees: dict[str, Path], *, graph: bool,
              embed: bool = False, helper: bool = True) -> tuple[float, float]:
    """Seconds to index every tree (phase 1) into `home`: wall clock, and the CPU time of
    this process (all its threads) and of the graph helper it started
    (`indexer.graph.worker`, ended here, as a `ctxd index` process ends it); what other
    processes on a busy machine take does not count."""
    original, original_file = checkpoints._graph_row, checkpoints._file_graph
    original_helper = pipeline.shared_worker
    if not helper or not graph:
        pipeline.shared_worker = lambda: None  # type: ignore[assignment]
    if not graph:
        checkpoints._graph_row = lambda _path, _language, _parsed: NO_GRAPH  # type: ignore[assignment]
        checkpoints._file_graph = (  # type: ignore[assignment]
            lambda _path, _language, _parsed, _graphs: NO_GRAPH)
    service = Service(load_settings({"home": str(home)}))
    try:
        started, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        for root in trees.values():
            service.index(root, embed=embed)
        close_all()
        return (time.perf_counter() - started,
                time.process_time() - cpu + _children_cpu() - children)
    finally:
        service.close()
        checkpoints._graph_row = original  # type: ignore[assignment]
        checkpoints._file_graph = original_file  # type: ignore[assignment]
        pipeline.shared_worker = original_helper  # type: ignore[assignment]


def _children_cpu() -> float:
    """CPU seconds of this process's ended child processes (the graph helper)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def graph_share(db: Path) -> dict[str, int]:
    """Bytes of the graph's tables and of the whole index (SQLite pages)."""
    con = sqlite3.connect(str(db))
    try:
        rows = dict(con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
        checkpoints = int(con.execute("SELECT count(*) FROM checkpoints").fetchone()[0])
    finally:
        con.close()
    graph = sum(v for k, v in rows.items() if k.startswith(("graph", "sqlite_autoindex_graph")))
    return {"graph_bytes": graph, "index_bytes": sum(rows.values()), "checkpoints": checkpoints,
            "vector_bytes": checkpoints * VECTOR_BYTES}


def latency(home: Path, queries: list[tuple[str, str]], repeat: int) -> list[dict[str, Any]]:
    service = Service(load_settings({"home": str(home)}))
    out = []
    try:
        for repo, symbol in queries:
            for what, request in (
                    ("refs", GraphRefsRequest(symbol, repositories=[repo], limit=2000)),
                    ("callers", CallsRequest(symbol, repositories=[repo], limit=2000)),
                    ("callers --depth 3", CallsRequest(symbol, depth=3, repositories=[repo],
                                                       limit=2000))):
                cold, warm = [], []
                answer = service.graph.graph_refs if what == "refs" else service.graph.calls
                size = 0
                for _ in range(repeat):
                    workspace._cache.clear()
                    t0 = time.perf_counter()
                    result = answer(request)  # type: ignore[arg-type]
                    t1 = time.perf_counter()
                    answer(request)  # type: ignore[arg-type]
                    t2 = time.perf_counter()
                    cold.append((t1 - t0) * 1000)
                    warm.append((t2 - t1) * 1000)
                    size = len(getattr(result, "usages", None) or getattr(result, "edges", []))
                out.append({"repository": repo, "symbol": symbol, "query": what,
                            "answers": size, "cold_ms": round(statistics.median(cold), 1),
                            "warm_ms": round(statistics.median(warm), 1)})
    finally:
        service.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--query", action="append", default=[], help="REPO:SYMBOL")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--in-process", action="store_true",
                    help="the graph made in the indexing process (no helper process, "
                         "`indexer.graph.worker`), as small runs make it")
    ap.add_argument("--embed", action="store_true",
                    help="whole index runs (phase 1 and the embedding with the default "
                         "model) instead of phase 1 alone")
    args = ap.parse_args()
    trees = {t.split("=", 1)[0]: Path(t.split("=", 1)[1]) for t in args.tree}
    times: dict[str, list[float]] = {"with": [], "without": []}
    cpu: dict[str, list[float]] = {"with": [], "without": []}
    share: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="ctxd-bench-graph-") as tmp:
        for r in range(args.rounds):
            for side in (("with", "without") if r % 2 == 0 else ("without", "with")):
                home = Path(tmp) / f"{side}-{r}"
                wall, used = index_all(home, trees, graph=side == "with", embed=args.embed,
                                       helper=not args.in_process)
                times[side].append(wall)
                cpu[side].append(used)
                print(f"round {r} {side} graph: {wall:.2f} s wall, {used:.2f} s CPU",
                      file=sys.stderr, flush=True)
                if side == "with" and not share:
                    share = graph_share(home / "index.db")
                    kept = home
        queries = [(q.split(":", 1)[0], q.split(":", 1)[1]) for q in args.query]
        lat = latency(kept, queries, args.repeat) if queries else []
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} {platform.processor() or ''} "
                   f"python {platform.python_version()}".strip(),
        "trees": sorted(trees), "rounds": args.rounds, "embed": args.embed,
        "graph_helper": not args.in_process,
        "phase1_s_with_graph": round(med["with"], 2),
        "phase1_s_without_graph": round(med["without"], 2),
        "overhead": round(med["with"] / med["without"] - 1, 3),
        "phase1_cpu_s_with_graph": round(med_cpu["with"], 2),
        "phase1_cpu_s_without_graph": round(med_cpu["without"], 2),
        "overhead_cpu": round(med_cpu["with"] / med_cpu["without"] - 1, 3),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        **share, "graph_share_phase1": round(share["graph_bytes"] / share["index_bytes"], 3),
        "graph_share_embedded": round(
            share["graph_bytes"] / (share["index_bytes"] + share["vector_bytes"]), 3),
        "latency": lat,
    }
    json.dump(result, sys.stdout, indent=1)
    print()
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
